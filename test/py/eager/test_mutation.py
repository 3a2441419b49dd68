"""Every supported op that writes an argument writes it, compiled or on the CPU fallback.

The walk reads npu_native_functions.yaml (what the build registers for PrivateUse1), takes each op
whose schema marks an argument as written (`Tensor(a!)`, `Tensor(a!)[]`) or that plan.UNSTATED_WRITES
says writes one, calls it on npu and on CPU with the same inputs, and compares every written argument
after the call (not only the returns), plus aliasing: a return the CPU kernel gives as one of its
arguments is that npu argument itself. It runs once as dispatched (compiled) and once with the
compiler refusing every call, where the fallback's zero-copy CPU kernel does the writing.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
import torch

import torch_npu._C as _C
from torch_npu.eager import miss
from npu_mlir.frontend.kernel_build import resolve_op
from npu_mlir.tools.compile_protocol import Unsupported
from torch_npu.eager.plan import UNSTATED_WRITES, PlanError, functional_of
from op_db_parity import TOL  # the same dtype tolerances as the op_db numbers

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python" / "torch_npu" / "csrc" / "aten"))
import gen_native_registrations  # noqa: E402

YAML = ROOT / "python" / "torch_npu" / "csrc" / "aten" / "npu_native_functions.yaml"
SHAPE = (4, 5)


def _supported() -> list[str]:
    return gen_native_registrations.parse(YAML.read_text())["supported"]


def _written(schema: torch._C.FunctionSchema) -> list[int]:
    return [i for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write]


def _stated(name: str) -> torch._ops.OpOverload:
    """The op whose schema states what `name` writes (UNSTATED_WRITES for the ones whose schema does not)."""
    qualified = f"aten::{name}"
    return resolve_op(UNSTATED_WRITES[qualified][0] if qualified in UNSTATED_WRITES else qualified)


WRITING = [name for name in _supported() if _written(_stated(name)._schema)]


def _positive(*shape: int) -> torch.Tensor:
    return torch.rand(*shape) + 0.5


# Arguments the generic rule below cannot make (by op, then by argument name).
SAMPLES: dict[str, dict[str, Callable[[], Any]]] = {
    "mm.out": {"self": lambda: torch.randn(4, 3), "mat2": lambda: torch.randn(3, 5)},
    "clamp_": {"min": lambda: 0.7, "max": lambda: 1.2},
    "clamp.out": {"min": lambda: 0.7, "max": lambda: 1.2},
    "native_batch_norm": {"running_mean": lambda: torch.randn(5), "running_var": lambda: _positive(5),
                          "training": lambda: True, "momentum": lambda: 0.3},
    "_native_batch_norm_legit": {"running_mean": lambda: torch.randn(5), "running_var": lambda: _positive(5),
                                 "training": lambda: True, "momentum": lambda: 0.3},
    "masked_fill_.Tensor": {"value": lambda: torch.tensor(-2.5)},
    "upsample_nearest2d.out": {"self": lambda: torch.randn(1, 2, 3, 4), "output_size": lambda: [6, 8]},
    "upsample_nearest3d.out": {"self": lambda: torch.randn(1, 2, 2, 3, 4), "output_size": lambda: [4, 6, 8]},
    "upsample_nearest2d_backward.grad_input": {"grad_output": lambda: torch.randn(1, 2, 6, 8),
                                               "output_size": lambda: [6, 8], "input_size": lambda: [1, 2, 3, 4]},
    "upsample_nearest3d_backward.grad_input": {"grad_output": lambda: torch.randn(1, 2, 4, 6, 8),
                                               "output_size": lambda: [4, 6, 8],
                                               "input_size": lambda: [1, 2, 2, 3, 4]},
    "replication_pad3d.out": {"self": lambda: torch.randn(1, 2, 3, 4, 5), "padding": lambda: [1, 1, 2, 0, 1, 2]},
    # index_fill / index_copy / index_reduce take a 1-d index along dim (and index_fill a 0-d value).
    "index_fill_.int_Tensor": {"index": lambda: torch.tensor([0, 2]), "value": lambda: torch.tensor(-2.5)},
    "index_fill_.int_Scalar": {"index": lambda: torch.tensor([0, 2])},
    "index_copy.out": {"index": lambda: torch.tensor([2, 0]), "source": lambda: torch.randn(SHAPE[0], 2)},
    "index_reduce.out": {"index": lambda: torch.tensor([2, 0, 2]), "source": lambda: torch.randn(SHAPE[0], 3),
                         "reduce": lambda: "amax"},
    # shifts take integers (an amount of 9 is outside int8's range of shifts: 0 on the CPU)
    **{f"__i{d}shift__.{o}": {"self": lambda: torch.randint(-50, 50, SHAPE, dtype=torch.int8),
                               "other": (lambda: torch.randint(-2, 10, SHAPE, dtype=torch.int8)) if o == "Tensor" else (lambda: 3)}
       for d in "lr" for o in ("Scalar", "Tensor")},
    # x[i] += v with a negative index (accumulate: index's backward)
    "_index_put_impl_": {"indices": lambda: [torch.tensor([3, 0, -1])], "values": lambda: torch.randn(3, SHAPE[1]),
                         "accumulate": lambda: True},
}
BY_NAME: dict[str, Callable[[], Any]] = {
    "mask": lambda: torch.rand(SHAPE) > 0.5,
    "index": lambda: torch.randint(0, SHAPE[1], SHAPE),
    "weight": lambda: 0.25,  # lerp's Scalar weight (batch norm's Tensor? weight is made above)
    "dim": lambda: 1,
    "k": lambda: 2,
}


def _value(name: str, arg: torch._C.Argument) -> Any:
    kind = str(arg.type)
    if name in SAMPLES and arg.name in SAMPLES[name]:
        return SAMPLES[name][arg.name]()
    if arg.name in ("weight", "bias") and kind.startswith("Optional[Tensor]"):
        return _positive(SHAPE[1])
    if arg.name in BY_NAME and not (arg.name == "weight" and "Tensor" in kind):
        return BY_NAME[arg.name]()
    if arg.has_default_value():
        return arg.default_value
    if kind in ("Tensor", "Optional[Tensor]"):
        return _positive(*SHAPE)
    if kind == "List[Tensor]":
        return [_positive(*SHAPE), _positive(3)]
    if kind in ("number", "Scalar", "float"):
        return 0.75
    if kind == "int":
        return 1
    if kind in ("bool", "Optional[bool]"):
        return False
    raise AssertionError(f"test_mutation: no sample for argument {arg.name}: {kind} of {name}; add one to SAMPLES")


def _out_dtypes(op: torch._ops.OpOverload, args: dict) -> dict[str, torch.dtype]:
    """Each out= argument's dtype: that of the functional variant's result it receives."""
    try:
        writes = functional_of(op)
    except PlanError:
        return {}
    functional_args = {a.name: args[a.name] for a in writes.op._schema.arguments if a.name in args}
    results = writes.op(**functional_args)
    results = results if isinstance(results, tuple) else (results,)
    arguments = op._schema.arguments
    return {arguments[i].name: r.dtype for i, r in zip(writes.carried, results)
            if i is not None and arguments[i].is_out and isinstance(r, torch.Tensor)}


_recorded: dict[str, dict] = {}


def _record_op_db() -> dict[str, dict]:
    """The arguments of the first call of each aten overload in op_db's first samples (float32, else int64
    or bool), forward and backward: realistic inputs (index ranges, pad sizes, dtypes) for the functional
    forms of the ops."""
    if _recorded:
        return _recorded
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten, tree_map

    def bind(func: torch._ops.OpOverload, args: tuple, kwargs: dict) -> dict:
        named = dict(kwargs)
        named.update({a.name: v for a, v in zip(func._schema.arguments, args)})
        return tree_map(lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v, named)

    class Record(TorchDispatchMode):
        called: set[str] = set()  # base names of the ops the current sample called

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.called.add(str(func).split(".")[1])
            if str(func) not in _recorded:
                _recorded[str(func)] = bind(func, args, kwargs or {})
            return func(*args, **(kwargs or {}))

    wanted = set()
    for name in WRITING:
        op = _stated(name)
        wanted.add(str(op))
        try:
            wanted.add(str(functional_of(op).op))
        except PlanError:
            pass
    # A backward is recorded by running the backward of the sample whose forward called its forward.
    forwards = {w.split(".")[1].removesuffix("_backward") for w in wanted if "_backward" in w}
    for info in op_db:
        if wanted <= _recorded.keys():
            break
        dtype = next((d for d in (torch.float32, torch.int64, torch.bool) if d in info.dtypes), None)
        if dtype is None:
            continue
        try:
            grad = info.supports_autograd and dtype.is_floating_point
            sample = next(iter(info.sample_inputs("cpu", dtype, requires_grad=grad)))
            with Record() as record, warnings.catch_warnings():
                warnings.simplefilter("ignore")  # op_db's samples call deprecated ops on purpose
                record.called = set()
                out = info.op(sample.input, *sample.args, **sample.kwargs)
                grads = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
                if grads and forwards & record.called:
                    sum(g.sum() for g in grads).backward()
        except Exception:  # a sample the CPU itself rejects records nothing
            continue
    return _recorded


def _arguments(name: str, op: torch._ops.OpOverload) -> dict:
    """Values of op's non-out arguments: hand-made (SAMPLES), else recorded from op_db, else generic."""
    wanted = [a for a in op._schema.arguments if not a.is_out]
    if name not in SAMPLES:
        try:
            functional = functional_of(op).op
        except PlanError:
            functional = op
        for overload in (functional, op):
            recorded = _record_op_db().get(str(overload))
            if recorded is not None and all(a.name in recorded or a.has_default_value() for a in wanted):
                return {a.name: recorded[a.name] if a.name in recorded else a.default_value for a in wanted}
    return {a.name: _value(name, a) for a in wanted}


def _sample(name: str) -> tuple[torch._ops.OpOverload, dict]:
    op = _stated(name)
    args = _arguments(name, op)
    outs = [a for a in op._schema.arguments if a.is_out]
    dtypes = _out_dtypes(op, args)
    for a in outs:
        args[a.name] = torch.empty(0, dtype=dtypes.get(a.name, torch.float32))
    return resolve_op(f"aten::{name}"), args


def _to_npu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.npu()
    if isinstance(value, list):
        return [_to_npu(v) for v in value]
    return value


def _call(op: torch._ops.OpOverload, args: dict) -> Any:
    positional = [args[a.name] for a in op._schema.arguments if not a.kwarg_only]
    keywords = {a.name: args[a.name] for a in op._schema.arguments if a.kwarg_only}
    return op(*positional, **keywords)


def _tensors(value: Any) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _check(name: str) -> None:
    torch.manual_seed(0)
    op, cpu_args = _sample(name)
    npu_args = {k: _to_npu(v.clone() if isinstance(v, torch.Tensor) else v) for k, v in cpu_args.items()}
    before = {k: [t.data_ptr() for t in _tensors(v)] for k, v in npu_args.items()}
    cpu_out = _call(op, cpu_args)
    npu_out = _call(op, npu_args)
    schema = _stated(name)._schema
    for i in _written(schema):
        arg = schema.arguments[i].name
        for got, want in zip(_tensors(npu_args[arg]), _tensors(cpu_args[arg]), strict=True):
            torch.testing.assert_close(got.cpu(), want, equal_nan=True, **TOL.get(want.dtype, {}), msg=lambda m: f"{name} wrote {arg}: {m}")
        if not schema.arguments[i].is_out:  # written in place: the same memory
            assert [t.data_ptr() for t in _tensors(npu_args[arg])] == before[arg], f"{name} moved {arg}"
    cpu_returns = cpu_out if isinstance(cpu_out, tuple) else (cpu_out,)
    npu_returns = npu_out if isinstance(npu_out, tuple) else (npu_out,)
    assert len(npu_returns) == len(cpu_returns), name
    for r, (got, want) in enumerate(zip(npu_returns, cpu_returns)):
        owner = next((k for k, v in cpu_args.items() if v is want), None)
        if owner is not None:
            assert got is npu_args[owner], f"{name} return {r} is not the npu {owner} itself"
        for g, w in zip(_tensors(got), _tensors(want), strict=True):
            torch.testing.assert_close(g.cpu(), w, equal_nan=True, **TOL.get(w.dtype, {}), msg=lambda m: f"{name} return {r}: {m}")


def test_the_walk_covers_the_writing_ops():
    assert {"add_.Tensor", "add.out", "_native_batch_norm_legit", "native_batch_norm"} <= set(WRITING)


@pytest.mark.parametrize("name", WRITING)
def test_written_arguments_match_cpu(name):
    _check(name)


@pytest.fixture
def compiler_refuses(monkeypatch):
    """Every call misses and is refused: the CPU fallback runs it."""
    _C._eager_clear_memory_cache()
    monkeypatch.setattr(miss, "compile_for_dispatch", lambda key, op, args, done=None: Unsupported("refused by the test"))
    yield
    _C._eager_clear_memory_cache()


@pytest.mark.parametrize("name", WRITING)
def test_written_arguments_match_cpu_on_the_fallback(name, compiler_refuses, eager_stats):
    _check(name)
    stats = eager_stats()
    assert f"aten::{name}" in stats and stats[f"aten::{name}"]["fallback"] >= 1, stats


def test_a_write_no_functional_variant_carries_is_refused_with_the_reason():
    from torch_npu.eager.plan import plan_call

    # _cummax_helper writes values and indices, and no functional variant returns them.
    with pytest.raises(PlanError, match="writes values, indices, and no functional variant returns"):
        plan_call("aten::_cummax_helper", [("T", "Float", [4], [1], 2), ("T", "Float", [4], [1], 2),
                                           ("T", "Long", [4], [1], 2), 0], 1)


def test_op_command_writes_the_arguments_it_is_given():
    # OpCommand (C++ custom kernels) runs the same record: batch norm's statistics are written.
    torch.manual_seed(1)
    x, mean, var = torch.randn(6, 3), torch.randn(3), torch.rand(3) + 0.5
    mean_n, var_n = mean.npu(), var.npu()
    got = _C._eager_op_command("aten::_native_batch_norm_legit", [x.npu(), mean_n, var_n],
                               {"weight": None, "bias": None, "training": True, "momentum": 0.2, "eps": 1e-5}, [])
    want = torch.ops.aten._native_batch_norm_legit(x, None, None, mean, var, True, 0.2, 1e-5)
    assert len(got) == 3
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w)
    torch.testing.assert_close(mean_n.cpu(), mean)
    torch.testing.assert_close(var_n.cpu(), var)


def test_plan_routes_list_and_multiple_writes():
    # No yaml op writes a list yet: the plan's routing for one (each element a result) and for an op
    # writing two arguments, one of them returned (GradScaler's _amp_update_scale_).
    from torch_npu.eager.plan import plan_call

    t = ("T", "Float", [3], [1], 2)
    plan = plan_call("aten::_foreach_mul_.Scalar", [[t, t], 0.5], 1)
    assert plan.request["target"] == "aten::_foreach_mul.Scalar"
    assert plan.targets == [(0, 0, False), (0, 1, False)] and plan.returns == []
    plan = plan_call("aten::_foreach_mul.Scalar_out", [[t, t], 0.5], 1)
    assert plan.targets == [(2, 0, True), (2, 1, True)] and plan.returns == []
    one, step = ("T", "Float", [1], [1], 2), ("T", "Int", [1], [1], 2)
    plan = plan_call("aten::_amp_update_scale_", [one, step, one, 2.0, 0.5, 10], 1)
    assert plan.request["target"] == "aten::_amp_update_scale.default"
    assert plan.targets == [(0, -1, False), (1, -1, False)] and plan.returns == [(0, [], False)]


@pytest.mark.parametrize("start,end,step,dtype", [(0, 7, 2, torch.int64), (0, 7, 2, torch.float32),
                                                  (0.5, 3.0, 0.25, torch.float32), (1, 5, 1, torch.int32)])
def test_a_factory_out_form_compiles_into_its_out_tensor(start, end, step, dtype, eager_stats):
    # arange.start_out pairs with arange.start_step (TensorOptions dropped, as torchgen pairs them); the
    # kernel has no input: the out tensor is the call's only NPU tensor.
    out = torch.empty(0, dtype=dtype, device="npu")
    got = _C._eager_op_command("aten::arange.start_out", [], {"start": start, "end": end, "step": step}, [out])
    assert got[0].data_ptr() == out.data_ptr()
    torch.testing.assert_close(out.cpu(), torch.arange(start, end, step, dtype=dtype))
    row = eager_stats()["aten::arange.start_out"]
    assert (row["compiled"], row["fallback"]) == (1, 0), row
