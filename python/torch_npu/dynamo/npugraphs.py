"""The "npugraphs" torch.compile backend: Dynamo's "reduce-overhead" shape on torch.npu.NPUGraph.

AOTAutograd splits each Dynamo graph into forward and backward (or inference) graphs, as the
npu-mlir backend does (same decompositions and partitioner), and each is compiled by npu-mlir
(splitting.compile_graph: C++ launch-list executables, eager npu ops where the compiler splits).
Its first call runs that executable uncaptured (the warm-up: kernels loaded, the caching allocator
primed), the second captures it into an NPUGraph and later calls replay the capture: one replay
re-submits every kernel of the graph, with no Python and no C++ dispatch per kernel. Random draws
in the graph are captured as (seed, offset) placeholders, so each replay draws fresh numbers from
the generator as eager would. Inputs with stable addresses (parameters and buffers) are read in
place, other inputs are copied into the captured ones, outputs are copied out (a later replay
overwrites the captured outputs). A graph that cannot be captured (it synchronizes) runs its
executable uncaptured from then on, with a warning that says why; one that takes non-npu inputs
runs eagerly. Registered through the `torch_dynamo_backends` entry point of pyproject.toml, as
npu-mlir is: torch.compile(backend="npugraphs") finds it without importing this module first.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.backends.cudagraphs import find_input_mutations
from torch._functorch.aot_autograd import make_boxed_func
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch._inductor.utils import num_fw_fixed_arguments

from torch_npu.dynamo import stats
from torch_npu.dynamo.backend import DECOMPOSITIONS
from torch_npu.dynamo.splitting import compile_graph
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
    """One AOT graph's npu-mlir executable: run on the first call, captured on the second, replayed afterwards."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], static_indices: set[int]) -> None:
        self.static_indices = static_indices
        self.calls = 0
        self.npu_graph: NPUGraph | None = None
        self.static_inputs: list[Any] = []
        self.static_outputs: Sequence[Any] = ()
        # Inputs the graph writes that are not read in place must be written back to the caller's.
        self.mutated = [i for i in find_input_mutations(gm.graph) if i not in static_indices]
        self.eager_reason = ""
        if all(isinstance(x, torch.Tensor) and x.device.type == "npu" for x in example_inputs):
            run = compile_graph(gm, example_inputs)
            self.run = lambda *args: run(list(args))
        else:
            self.eager_reason = "it takes inputs that are not npu tensors"
            self.run = gm

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        if self.eager_reason or self.calls == 1:
            return self.run(*args)
        if self.npu_graph is None and not self._capture(args):
            return self.run(*args)
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
                outputs = self.run(*self.static_inputs)
        except RuntimeError as error:
            self.eager_reason = str(error).splitlines()[0]
            warnings.warn(f"npugraphs: a graph runs uncaptured: its capture failed: {self.eager_reason}", stacklevel=3)
            self.static_inputs = []
            return False
        self.npu_graph = npu_graph
        stats.count("graphs_captured")
        self.static_outputs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
        return True


def npugraphs(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """Compile ``gm`` for torch.compile(backend="npugraphs")."""
    num_dynamo_inputs = len(example_inputs)

    def forward_compiler(aot_gm: torch.fx.GraphModule, aot_inputs: Sequence[Any]) -> Callable[..., Any]:
        stats.count("forward_graphs")
        return make_boxed_func(_GraphedModule(aot_gm, aot_inputs, _static_input_indices(num_dynamo_inputs, aot_inputs)))

    def backward_compiler(aot_gm: torch.fx.GraphModule, aot_inputs: Sequence[Any]) -> Callable[..., Any]:
        # Saved activations are new tensors each step: every input is copied in.
        stats.count("backward_graphs")
        return make_boxed_func(_GraphedModule(aot_gm, aot_inputs, set()))

    return aot_autograd(
        fw_compiler=forward_compiler,
        bw_compiler=backward_compiler,
        inference_compiler=forward_compiler,
        partition_fn=min_cut_rematerialization_partition,
        decompositions=DECOMPOSITIONS,
        keep_inference_input_mutations=True,
    )(gm, example_inputs)

