"""OpCommand (the C++ builder) through its thin binding: same path, same numbers as CPU."""

from __future__ import annotations

import pytest
import torch

import torch_npu._C as _C

from conftest import assert_no_fallback


def test_inputs_and_attrs(eager_stats):
    a, b = torch.randn(4, 6), torch.randn(4, 6)
    [got] = _C._eager_op_command("aten::add.Tensor", [a.npu(), b.npu()], {"alpha": 0.5}, [])
    torch.testing.assert_close(got.cpu(), torch.add(a, b, alpha=0.5))
    [got] = _C._eager_op_command("aten::sum.dim_IntList", [a.npu()], {"dim": [1], "keepdim": True}, [])
    torch.testing.assert_close(got.cpu(), a.sum(dim=1, keepdim=True), atol=1e-5, rtol=1e-5)
    assert_no_fallback()


def test_output_is_written_and_resized(eager_stats):
    a = torch.randn(3, 5)
    out = torch.empty(0).npu()
    [got] = _C._eager_op_command("aten::tanh", [a.npu()], {}, [out])
    assert got.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out.cpu(), torch.tanh(a))
    assert_no_fallback()


def test_an_op_outside_the_yaml_compiles_too(eager_stats):
    a = torch.rand(5, 7) + 0.5
    [got] = _C._eager_op_command("aten::log1p", [a.npu()], {}, [])
    torch.testing.assert_close(got.cpu(), torch.log1p(a))
    assert eager_stats()["aten::log1p"]["compiled"] == 1


def test_missing_argument_is_reported():
    with pytest.raises(RuntimeError, match="ERR01001"):
        _C._eager_op_command("aten::mm", [torch.randn(2, 2).npu()], {}, [])
    with pytest.raises(RuntimeError, match="ERR01008"):
        _C._eager_op_command("aten::no_such_op", [], {}, [])
