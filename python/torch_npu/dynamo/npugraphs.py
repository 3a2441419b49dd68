"""The "npugraphs" torch.compile backend: Dynamo's "reduce-overhead" shape on torch.npu.NPUGraph.

AOTAutograd splits each Dynamo graph into forward and backward (or inference) graphs; each runs
eagerly on its first call, is captured into an NPUGraph on its second and replayed afterwards,
so later calls cost one replay instead of a Python-dispatched launch per op. It replays the
*eager* npu ops of the AOT graph (each one compiled by the eager path), not whole-graph npu-mlir
executables. Inputs with stable addresses (parameters and buffers) are read in place, other
inputs are copied into the captured ones, outputs are copied out (a later replay overwrites the
captured outputs). A graph that cannot be captured (it synchronizes, or takes non-tensor
inputs) runs eagerly from then on, with a warning that says why.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.backends.cudagraphs import find_input_mutations
from torch._dynamo.backends.registry import register_backend
from torch._functorch.aot_autograd import make_boxed_func
from torch._inductor.utils import num_fw_fixed_arguments

from torch_npu.npu.graphs import NPUGraph, graph

__all__ = ["npugraphs"]


def _static_input_indices(num_dynamo_inputs: int, aot_inputs: Sequence[Any]) -> set[int]:
    # Dynamo marks parameters and buffers static; older paths lift them as leading fixed inputs.
    context = torch._guards.TracingContext.try_get()
    metadata = getattr(context, "fw_metadata", None) if context is not None else None
    if metadata is not None and getattr(metadata, "static_input_indices", None) is not None:
        return set(metadata.static_input_indices)
    return set(range(num_fw_fixed_arguments(num_dynamo_inputs, len(aot_inputs))))


class _GraphedModule:
    """One AOT graph: eager on the first call, captured on the second, replayed afterwards."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], static_indices: set[int]) -> None:
        self.gm = gm
        self.static_indices = static_indices
        self.calls = 0
        self.npu_graph: NPUGraph | None = None
        self.static_inputs: list[Any] = []
        self.static_outputs: Sequence[Any] = ()
        # Inputs the graph writes that are not read in place must be written back to the caller's.
        self.mutated = [i for i in find_input_mutations(gm.graph) if i not in static_indices]
        self.eager_reason = ""
        if not all(isinstance(x, torch.Tensor) and x.device.type == "npu" for x in example_inputs):
            self.eager_reason = "it takes inputs that are not npu tensors"

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        if self.eager_reason or self.calls == 1:
            return self.gm(*args)
        if self.npu_graph is None and not self._capture(args):
            return self.gm(*args)
        for i, (static, new) in enumerate(zip(self.static_inputs, args)):
            if i not in self.static_indices and static.data_ptr() != new.data_ptr():
                static.copy_(new)
        self.npu_graph.replay()
        for i in self.mutated:
            args[i].copy_(self.static_inputs[i])
        return [o.clone() if isinstance(o, torch.Tensor) else o for o in self.static_outputs]

    def _capture(self, args: Sequence[Any]) -> bool:
        self.static_inputs = [a if i in self.static_indices else a.clone() for i, a in enumerate(args)]
        npu_graph = NPUGraph()
        try:
            with graph(npu_graph):
                outputs = self.gm(*self.static_inputs)
        except RuntimeError as error:
            self.eager_reason = str(error).splitlines()[0]
            warnings.warn(f"npugraphs: a graph runs eagerly: its capture failed: {self.eager_reason}", stacklevel=3)
            self.static_inputs = []
            return False
        self.npu_graph = npu_graph
        self.static_outputs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
        return True


def npugraphs(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """Compile ``gm`` for torch.compile(backend="npugraphs")."""
    num_dynamo_inputs = len(example_inputs)

    def forward_compiler(aot_gm: torch.fx.GraphModule, aot_inputs: Sequence[Any]) -> Callable[..., Any]:
        return make_boxed_func(_GraphedModule(aot_gm, aot_inputs, _static_input_indices(num_dynamo_inputs, aot_inputs)))

    def backward_compiler(aot_gm: torch.fx.GraphModule, aot_inputs: Sequence[Any]) -> Callable[..., Any]:
        # Saved activations are new tensors each step: every input is copied in.
        return make_boxed_func(_GraphedModule(aot_gm, aot_inputs, set()))

    return aot_autograd(
        fw_compiler=forward_compiler,
        bw_compiler=backward_compiler,
        inference_compiler=forward_compiler,
        keep_inference_input_mutations=True,
    )(gm, example_inputs)


register_backend(name="npugraphs", compiler_fn=npugraphs)
