"""The compiler's one error type: every stage's error is a CompilerError with an ERR03xxx code."""

from __future__ import annotations

import re

import pytest

from npu_mlir.errors import CompilerError, SimCompileError
from npu_mlir.passes.lower_kernel_to_linalg_ops import KernelLoweringError
from npu_mlir.passes.registry import PassOptionError, lookup
from npu_mlir.passes.tile import TilingError
from npu_mlir.pipeline import PipelineError, PipelineOptions, pipeline_elements
from npu_mlir.targets.ascendc.emit import CodegenError
from npu_mlir.targets.launch_list import LaunchListError
from npu_mlir.tools.npu_ascendc import BuildError
from npu_mlir.tools.pass_pipeline import PipelineSyntaxError

STAGE_ERRORS = (SimCompileError, KernelLoweringError, PassOptionError, TilingError, PipelineError, CodegenError,
                LaunchListError, BuildError, PipelineSyntaxError)


@pytest.mark.parametrize("cls", STAGE_ERRORS, ids=lambda c: c.__name__)
def test_every_stage_error_is_a_compiler_error_with_a_code(cls):
    err = cls("the kernel does not fit; use a smaller tile")
    assert isinstance(err, CompilerError) and re.fullmatch(r"ERR03\d{3}", err.code)
    assert str(err) == f"{err.code} GRAPH the kernel does not fit; use a smaller tile"
    assert err.detail == "the kernel does not fit; use a smaller tile"


def test_a_code_in_the_message_is_the_code():
    err = LaunchListError("ERR03005 GRAPH the worker died")
    assert err.code == "ERR03005" and str(err) == "ERR03005 GRAPH the worker died"
    assert isinstance(err, ValueError)  # the classes that were ValueErrors still are


def test_raised_errors_carry_their_code():
    with pytest.raises(CompilerError) as info:
        lookup("no-such-pass")
    assert info.value.code == "ERR03008"
    with pytest.raises(PipelineError) as info:
        pipeline_elements(PipelineOptions(until="nowhere"))
    assert info.value.code == "ERR03003" and "expected one of" in str(info.value)
