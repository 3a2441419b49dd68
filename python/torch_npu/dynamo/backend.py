"""The "npu-mlir" torch.compile backend: Dynamo graph -> AOTAutograd -> whole graphs through npu_mlir.

AOTAutograd traces each Dynamo graph to core ATen (DECOMPOSITIONS), splits training graphs into a
forward and a backward graph with the min-cut rematerializing partitioner (it recomputes cheap
activations in the backward instead of saving them), and hands each graph to its compiler below;
inference graphs keep their input mutations (running statistics, optimizer state) in the graph.
Each graph becomes compiled pieces run by C++ and, where the compiler refuses nodes, eager npu ops
between them (splitting.py). Registered through the `torch_dynamo_backends` entry point of
pyproject.toml, which Dynamo loads on the first torch.compile(backend="npu-mlir"), with or without
`import torch_npu` first; the package never registers it a second time.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.partitioners import min_cut_rematerialization_partition

from torch_npu.dynamo import device_interface, stats
from torch_npu.dynamo.constants import fold_constants, with_constants
from torch_npu.dynamo.cse import joint_graph_cse
from torch_npu.dynamo.dynamic import compile_dynamic
from torch_npu.dynamo.foreach import foreach_decompositions
from torch_npu.dynamo.pads import pad_decompositions
from torch_npu.dynamo.splitting import compile_graph

# Core ATen: what torch-mlir's importer and the eager path's retraces (applied again in the worker) take;
# foreach ops (an optimizer step) as one op per tensor; a pad that crops as slices (pads.py).
DECOMPOSITIONS = {**core_aten_decompositions(), **foreach_decompositions(), **pad_decompositions()}


class _OnFirstCall:
    """A backward graph compiled on its first call, for the layouts of the tensors it is called with.

    Its inputs are mostly the forward's outputs, laid out as the compiled forward makes them (its
    results are dense row-major, views of them as traced on those): AOTAutograd's trace gave some
    other strides (a GPT block's saved attention operands), and kernels built for those copied the
    inputs on every call (2 per training step)."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        self.gm = gm
        self.run: Callable | None = None
        self._boxed_call = True  # an instance attribute: torch._dynamo.disable's wrapper copies those

    def __call__(self, args: list) -> Any:
        if self.run is None:
            self.run = compile_graph(self.gm, list(args))
        return self.run(args)


def _compiler(kind: str) -> Callable:
    def compiler(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable:
        stats.count(f"{kind}_graphs")
        gm, example_inputs, constants = fold_constants(gm, example_inputs)
        # Symbolic shapes: compiled once for any size where the graph allows it, else per shape.
        dynamic = compile_dynamic(gm, example_inputs, compile_graph)
        if dynamic is not None:
            return with_constants(dynamic, constants)
        if kind == "backward":
            return with_constants(_OnFirstCall(gm), constants)
        return with_constants(compile_graph(gm, example_inputs), constants)  # boxed: one list of inputs

    compiler.__name__ = f"npu_mlir_{kind}_compiler"
    return compiler


forward_compiler = _compiler("forward")
backward_compiler = _compiler("backward")
inference_compiler = _compiler("inference")

def _partition(joint: torch.fx.GraphModule, joint_inputs: Sequence[Any], **kwargs: Any) -> tuple:
    """The min-cut rematerializing partitioner after our CSE of the joint graph (its own imports Inductor)."""
    joint.graph = joint_graph_cse(joint.graph)
    joint.recompile()
    with torch._functorch.config.patch(cse=False):
        return min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)


_aot = aot_autograd(fw_compiler=forward_compiler, bw_compiler=backward_compiler,
                    inference_compiler=inference_compiler, partition_fn=_partition,
                    decompositions=DECOMPOSITIONS, keep_inference_input_mutations=True)


def npu_mlir(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], **kwargs: Any) -> Callable:
    """torch.compile(backend="npu-mlir"): compile a Dynamo graph for npu tensors."""
    device_interface.register()
    compile_id = torch._guards.CompileContext.current_compile_id()
    if compile_id is not None and compile_id.frame_compile_id:
        stats.count("recompiles")
    return _aot(gm, example_inputs, **kwargs)
