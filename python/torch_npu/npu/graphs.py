"""NPU graphs: capture a sequence of NPU work once, replay it with one call (torch.cuda.graphs).

While a stream captures, kernel launches, device copies and fills queued on it are recorded,
not run; :meth:`NPUGraph.replay` re-submits them on the current stream, reading and writing the
same device memory. That memory comes from a private pool the graph keeps alive, so tensors
created during capture ("static outputs") hold the results of each replay. Synchronizing the
capturing stream (``synchronize()``, ``.item()``, a blocking copy to the host, an op that falls
back to the CPU) raises and invalidates the capture; the process stays usable.
"""

from __future__ import annotations

import gc
import typing
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.utils import _pytree

from torch_npu import _C
from torch_npu.npu.devices import synchronize
from torch_npu.npu.host_memory import host_empty_cache
from torch_npu.npu.initialization import is_initialized
from torch_npu.npu.memory import empty_cache
from torch_npu.npu.streams import Stream
from torch_npu.npu.streams import stream as _stream_ctx
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

__all__ = [
    "NPUGraph",
    "graph",
    "graph_pool_handle",
    "is_current_stream_capturing",
    "make_graphed_callables",
]

_PoolHandle = tuple[int, int]


def is_current_stream_capturing() -> bool:
    r"""Return True if NPU graph capture is underway on the current NPU stream, False otherwise.

    Returns False without initializing the device when it is not initialized yet.
    """
    if not is_initialized():
        return False
    return _C._npu_isCurrentStreamCapturing()


def graph_pool_handle() -> _PoolHandle:
    r"""Return an opaque token representing the id of a graph memory pool.

    Pass it as ``pool=`` to several captures to let them share one pool (replay them in the
    order they were captured).
    """
    return _C._graph_pool_handle()


def _optimizer_capture_check(check: Callable[[torch.optim.Optimizer], None]) -> Callable[[torch.optim.Optimizer], None]:
    """torch.optim's capture check (Adam, AdamW, RMSprop, ...) with npu in it: it knows cuda and xpu only,
    so a capturable=False step captured on npu recorded its host-side step count and bias corrections
    as constants, and every replay applied the first step's."""

    def npu_check(self: torch.optim.Optimizer) -> None:
        check(self)
        if not torch.compiler.is_compiling() and is_current_stream_capturing() and \
                not all(group["capturable"] for group in self.param_groups):
            raise RuntimeError(
                f"Attempting NPU graph capture of step() for an instance of {self.__class__.__name__} but "
                "param_groups' capturable is False. Create the optimizer with capturable=True.\n"
                + npu_error(SubModule.GRAPH, ErrCode.NOT_SUPPORT))

    return npu_check


torch.optim.Optimizer._accelerator_graph_capture_health_check = _optimizer_capture_check(
    torch.optim.Optimizer._accelerator_graph_capture_health_check)


class NPUGraph(_C._NPUGraph):
    r"""Wrapper around an NPU graph: work captured on a stream, replayable with one call.

    Args:
        keep_graph (bool, optional): as torch.cuda's: ``True`` leaves :meth:`instantiate` to the user
            (or the first :meth:`replay`). Default: ``False``.
    """

    def __new__(cls, keep_graph: bool = False) -> NPUGraph:
        return super().__new__(cls, keep_graph)

    def capture_begin(self, pool: _PoolHandle | None = None, capture_error_mode: str = "global") -> None:
        r"""Begin capturing NPU work on the current stream (it must not be the default stream).

        Typically you use :class:`graph` or :func:`make_graphed_callables` instead.

        Args:
            pool (optional): token from :func:`graph_pool_handle`, another graph's :meth:`pool`
                or a :class:`~torch.npu.MemPool` ``id``: this capture allocates from that pool.
                Default ``None``: a pool of the graph's own.
            capture_error_mode (str, optional): which threads' synchronizing calls raise (and
                invalidate the capture) while it is underway: ``"global"`` (default) every thread's,
                ``"thread_local"`` the capturing thread's, ``"relaxed"`` none but those that would
                wait for captured work.
        """
        super().capture_begin(pool=pool, capture_error_mode=capture_error_mode)

    def capture_end(self) -> None:
        r"""End the capture on the current stream; :meth:`replay` may be called afterwards.

        Warns when nothing was captured; raises when the capture was invalidated.
        """
        super().capture_end()

    def instantiate(self) -> None:
        r"""Instantiate the graph: ``capture_end`` does it unless ``keep_graph=True``, and then calling it
        again raises, as torch.cuda's; with ``keep_graph=True`` call it any time after capture (or let
        :meth:`replay` do it). A captured NPU graph is executable at once, so it costs nothing."""
        super().instantiate()

    def replay(self) -> None:
        r"""Replay the captured work on the current stream; returns at once (the work is queued)."""
        super().replay()

    def reset(self) -> None:
        r"""Delete the graph this instance holds (abandoning a capture underway); it may capture again."""
        super().reset()

    def pool(self) -> _PoolHandle:
        r"""Return an opaque token representing the id of this graph's memory pool.

        Pass it to another graph's ``capture_begin(pool=...)`` to share the pool.
        """
        return super().pool()

    def enable_debug_mode(self) -> None:
        r"""Enable :meth:`debug_dump`."""
        super().enable_debug_mode()

    def debug_dump(self, debug_path: str) -> None:
        r"""Write the captured tasks (kind, kernel name, block dim, bytes), one per line, to ``debug_path``.

        Warns and writes nothing unless :meth:`enable_debug_mode` was called.
        """
        super().debug_dump(debug_path)

    def register_generator_state(self, generator: torch.Generator) -> None:
        r"""Make ``generator``'s draws in this graph graph-safe: each replay draws new numbers.

        The device's default generator is registered by every capture; register other NPU
        generators before (or during) capture.
        """
        super().register_generator_state(generator)


class graph:
    r"""Context manager that captures NPU work into an :class:`NPUGraph` for later replay.

    On entry it synchronizes the device, empties the caching allocators' caches, makes the
    capture stream current and begins the capture; on exit it ends the capture and restores the
    stream. If the block raises, the capture is abandoned (the graph is reset) and the block's
    exception propagates.

    Args:
        npu_graph (NPUGraph): graph object used for capture.
        pool (optional): token (from :func:`graph_pool_handle`, another graph's ``pool()`` or a
            ``MemPool.id``) naming the pool to capture into. Default ``None``: the graph's own.
        stream (torch.npu.Stream, optional): the capture stream. Default ``None``: a side stream
            shared by every ``graph`` context.
        capture_error_mode (str, optional): ``"global"`` (default), ``"thread_local"`` or
            ``"relaxed"``: see :meth:`NPUGraph.capture_begin`.
    """

    default_capture_stream: Stream | None = None

    def __init__(
        self,
        npu_graph: NPUGraph,
        pool: _PoolHandle | None = None,
        stream: Stream | None = None,
        capture_error_mode: str = "global",
    ) -> None:
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool: tuple[()] | tuple[_PoolHandle] = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else self.__class__.default_capture_stream
        self.stream_ctx = _stream_ctx(self.capture_stream)
        self.npu_graph = npu_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self) -> None:
        # Free as much memory as we can for the graph.
        synchronize()
        if torch.compiler.config.force_cudagraph_gc:
            gc.collect()
        empty_cache()
        host_empty_cache()
        self.stream_ctx.__enter__()
        try:
            self.npu_graph.capture_begin(*self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        try:
            if exc_type is None:
                self.npu_graph.capture_end()
            else:
                self.npu_graph.reset()  # the block's own exception says what went wrong
        finally:
            self.stream_ctx.__exit__(exc_type, exc_value, traceback)


def _check_graphable(callables: tuple[Any, ...], flat_sample_args: list[tuple[Tensor, ...]]) -> None:
    for c, args in zip(callables, flat_sample_args):
        if isinstance(c, torch.nn.Module):
            if c._backward_hooks or c._forward_hooks or c._forward_pre_hooks:
                raise AssertionError(
                    "Modules must not have hooks registered at the time they are passed. However, registering "
                    "hooks on modules after passing them through make_graphed_callables is allowed."
                )
            if not all(b.requires_grad is False for b in c.buffers()):
                raise AssertionError(
                    "In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`, only parameters "
                    "may be trainable. All buffers must have ``requires_grad=False``."
                )
        if not all(isinstance(arg, torch.Tensor) for arg in args):
            raise AssertionError(
                "In the beta API, sample_args for each callable must contain only Tensors. Other types are not allowed."
            )


def make_graphed_callables(
    callables: Any,
    sample_args: tuple[Any, ...],
    num_warmup_iters: int = 3,
    allow_unused_input: bool = False,
    pool: _PoolHandle | None = None,
) -> Any:
    r"""Return NPU-graphed versions of callables (modules or functions), forward and backward.

    Each callable's forward pass and its backward pass are captured into two graphs; the
    returned callable replays them from an ``autograd.Function`` (torch.cuda's algorithm:
    warmup on a side stream, forward graphs captured in order, backward graphs in reverse, all
    in one pool). Inputs are copied into the captured static inputs when they are other
    tensors; outputs are the graph's static outputs, detached.

    Args:
        callables (torch.nn.Module, function, or tuple of these): what to graph. A tuple's
            members share one pool and must be given in the order they run.
        sample_args (tuple of Tensors, or tuple of tuples): sample arguments of each callable.
        num_warmup_iters (int): warmup iterations before capture. Default: ``3``.
        allow_unused_input (bool): allow inputs that do not affect the outputs. Default: ``False``.
        pool (optional): pool token to capture into. Default ``None``: a new shared pool.

    Autocast is supported with ``cache_enabled=False`` only, as in torch.cuda.
    """
    if torch.is_autocast_enabled("npu") and torch.is_autocast_cache_enabled():
        raise RuntimeError(
            "make_graphed_callables does not support the autocast caching. Please set `cache_enabled=False`.\n"
            + npu_error(SubModule.GRAPH, ErrCode.NOT_SUPPORT)
        )
    just_one_callable = not isinstance(callables, tuple)
    if just_one_callable:
        callables = (callables,)
        per_callable_args = (typing.cast(tuple[Tensor, ...], sample_args),)
    else:
        per_callable_args = typing.cast(tuple[tuple[Tensor, ...], ...], sample_args)
    flat_sample_args = [tuple(_pytree.arg_tree_leaves(*args)) for args in per_callable_args]
    _check_graphable(callables, flat_sample_args)

    # A module's graph inputs are its explicit arguments and its parameters.
    len_user_args = [len(args) for args in flat_sample_args]
    module_params = [tuple(c.parameters()) if isinstance(c, torch.nn.Module) else () for c in callables]
    static_inputs = [flat_sample_args[i] + module_params[i] for i in range(len(callables))]
    fwd_graphs = [NPUGraph() for _ in callables]
    bwd_graphs = [NPUGraph() for _ in callables]
    mempool = graph_pool_handle() if pool is None else pool

    # Warmup on a side stream keeps one-time work (compiles, lazy init) out of the captures.
    synchronize()
    with _stream_ctx(Stream()):
        for func, args, inputs in zip(callables, per_callable_args, static_inputs):
            for _ in range(num_warmup_iters):
                outputs = _pytree.tree_leaves(func(*args))
                outputs_grad = tuple(o for o in outputs if o.requires_grad)
                if outputs_grad:
                    torch.autograd.grad(
                        outputs=outputs_grad,
                        inputs=tuple(i for i in inputs if i.requires_grad),
                        grad_outputs=tuple(torch.empty_like(o) for o in outputs_grad),
                        only_inputs=True,
                        allow_unused=allow_unused_input,
                    )
            del outputs, outputs_grad
    synchronize()

    # Captures share a pool: capture in the order they replay (fwd 1..N, then bwd N..1).
    static_outputs: list[tuple[Tensor, ...]] = []
    output_specs = []
    for func, args, fwd_graph in zip(callables, per_callable_args, fwd_graphs):
        with graph(fwd_graph, pool=mempool):
            func_outputs = func(*args)
        flat_outputs, spec = _pytree.tree_flatten(func_outputs)
        static_outputs.append(tuple(flat_outputs))
        output_specs.append(spec)

    static_grad_outputs_rev = []
    static_grad_inputs_rev = []
    for inputs, outputs, bwd_graph in zip(reversed(static_inputs), reversed(static_outputs), reversed(bwd_graphs)):
        grad_outputs = tuple(torch.empty_like(o) if o.requires_grad else None for o in outputs)
        outputs_grad = tuple(o for o in outputs if o.requires_grad)
        grad_inputs = None
        if outputs_grad:
            with graph(bwd_graph, pool=mempool):
                grad_inputs = torch.autograd.grad(
                    outputs=outputs_grad,
                    inputs=tuple(i for i in inputs if i.requires_grad),
                    grad_outputs=tuple(g for g in grad_outputs if g is not None),
                    only_inputs=True,
                    allow_unused=allow_unused_input,
                )
        # One slot per input: None where the input needs no gradient.
        grads_iter = iter(grad_inputs or ())
        static_grad_inputs = tuple(next(grads_iter) if i.requires_grad and grad_inputs is not None else None
                                   for i in inputs)
        static_grad_outputs_rev.append(grad_outputs)
        static_grad_inputs_rev.append(static_grad_inputs)
    static_grad_outputs = list(reversed(static_grad_outputs_rev))
    static_grad_inputs = list(reversed(static_grad_inputs_rev))

    graphed = []
    for i, func in enumerate(callables):
        replayed = _graphed_function(fwd_graphs[i], bwd_graphs[i], module_params[i], len_user_args[i],
                                     output_specs[i], static_inputs[i], static_outputs[i], static_grad_outputs[i],
                                     static_grad_inputs[i])
        if isinstance(func, torch.nn.Module):
            func.forward = _graphed_forward(func, func.training, replayed, func.forward)
            graphed.append(func)
        else:
            graphed.append(replayed)
    return graphed[0] if just_one_callable else tuple(graphed)


def _graphed_function(
    fwd_graph: NPUGraph,
    bwd_graph: NPUGraph,
    module_params: tuple[torch.nn.Parameter, ...],
    len_user_args: int,
    output_spec: _pytree.TreeSpec,
    static_inputs: tuple[Tensor, ...],
    static_outputs: tuple[Tensor, ...],
    static_grad_outputs: tuple[Tensor | None, ...],
    static_grad_inputs: tuple[Tensor | None, ...],
) -> Callable[..., Any]:
    class Graphed(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *inputs: Tensor) -> tuple[Tensor, ...]:
            # Only the user arguments can be new tensors; parameters are read in place.
            for i in range(len_user_args):
                if static_inputs[i].data_ptr() != inputs[i].data_ptr():
                    static_inputs[i].copy_(inputs[i])
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx: Any, *grads: Tensor) -> tuple[Tensor | None, ...]:
            for static_grad, grad in zip(static_grad_outputs, grads):
                if static_grad is not None and static_grad.data_ptr() != grad.data_ptr():
                    static_grad.copy_(grad)
            bwd_graph.replay()
            return tuple(g.detach() if g is not None else None for g in static_grad_inputs)

    def functionalized(*user_args: Any) -> Any:
        flat_user_args = _pytree.arg_tree_leaves(*user_args)
        out = Graphed.apply(*(tuple(flat_user_args) + module_params))
        return _pytree.tree_unflatten(out, output_spec)

    return functionalized


def _graphed_forward(
    module: torch.nn.Module, graph_training_state: bool, graphed: Callable[..., Any], orig_fwd: Callable[..., Any]
) -> Callable[..., Any]:
    # The graph holds the mode it was captured in; the other mode runs the module eagerly.
    def new_fwd(*user_args: Any, **user_kwargs: Any) -> Any:
        if module.training == graph_training_state:
            return graphed(*user_args, **user_kwargs)
        return orig_fwd(*user_args, **user_kwargs)

    return new_fwd
