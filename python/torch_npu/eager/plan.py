"""Plan the compile of one eager call: the op to trace, its inputs, and which values are parameters.

Every argument an op writes is written, by the convention functionalization uses: the op compiles
its functional variant (`add_.Tensor`, `add.out` -> `add.Tensor`; `_native_batch_norm_legit` ->
`_native_batch_norm_legit_functional`), whose results are the op's own results followed by the new
value of each written argument it does not return (self, then out=, then the others). The plan maps
each kernel result to the argument (or tensor-list element) it is written into, and each of the op's
returns to an argument (in-place / out=) or to fresh results; the dispatcher writes them on the
stream. An op that writes an argument and has no such variant is rejected (it runs on the CPU, whose
kernel writes the NPU memory directly), never compiled without its writes. native_batch_norm writes
running_mean / running_var without saying so in its schema: UNSTATED_WRITES gives it the schema that
does. A number becomes a kernel parameter (so a
new value does not recompile) when it sits in a Tensor slot (`x * 2.5` reaches the dispatcher as
mul.Tensor with a wrapped 0-d tensor), when the op has a sibling overload taking a Tensor there
(`mul.Scalar` -> `mul.Tensor`), or when it is the `alpha` of add/sub/rsub (traced as a multiply).
A candidate is kept only if the op's result dtypes and shapes stay those of the original call,
checked on meta tensors; otherwise its value is "baked" into the kernel and into the cache key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from npu_mlir.frontend.decompositions.batch_norm import RETRACED as BATCH_NORM_RETRACES
from npu_mlir.frontend.decompositions.output_layout import memory_order
from npu_mlir.frontend.decompositions.scaled_pointwise import RETRACED as SCALED_POINTWISE_RETRACES
from npu_mlir.frontend.kernel_build import materialize, resolve_op
from npu_mlir.frontend.references import reference as custom_reference
from npu_mlir.frontend.references.formats import INTERNAL_FORMATS, contiguous_strides, storage_shape

DTYPE_NAMES = {"Float": torch.float32, "Half": torch.float16, "BFloat16": torch.bfloat16, "Double": torch.float64,
               "Long": torch.int64, "Int": torch.int32, "Short": torch.int16, "Char": torch.int8,
               "Byte": torch.uint8, "Bool": torch.bool}
# c10::ScalarType numbering: boxed kernels see a `ScalarType dtype` argument as this int.
SCALAR_TYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
                torch.float64, torch.complex32, torch.complex64, torch.complex128, torch.bool, torch.qint8,
                torch.quint8, torch.qint32, torch.bfloat16]
MLIR_TYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
              torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.bool: "i1"}
# Which operand `alpha` multiplies.
ALPHA_SCALES = {"add": "other", "sub": "other", "rsub": "self"}
# Numbers the kernel specializes on, as torch's CPU kernel does, so they are compiled in (and keyed),
# never parameters: a constant integer exponent is a chain of multiplications (approximate_math's
# fpowi rewrite), a parameter one libm powf per element (Llama's RMSNorm x.pow(2): 165 us for 16K).
SPECIALIZED_NUMBERS = {"aten::pow": frozenset({"exponent"})}
# Ops whose schema leaves out an argument they write: the op with the same arguments whose schema
# states it, and whether a call (arguments as the dispatcher describes them) writes.
UNSTATED_WRITES = {
    "aten::native_batch_norm": ("aten::_native_batch_norm_legit",
                                lambda args: args[5] is True and args[3] is not None and args[4] is not None),
}
# Optional tensor arguments an op ignores in some calls, by position: the plan drops them when empty
# (torch-mlir cannot import a zero-size tensor). Eval-mode batch norm returns (0,) save_mean /
# save_invstd, which its backward receives and, with train=False, does not read.
IGNORED_WHEN = {
    "aten::native_batch_norm_backward": lambda args: (5, 6) if args[7] is False else (),
}
# A factory's arguments its out= form does not have (the out tensor gives them).
TENSOR_OPTIONS = ("dtype", "layout", "device", "pin_memory")
# Ops whose result the empty tensors of their tensor list add nothing to.
SKIPS_EMPTY = frozenset({torch.ops.aten.cat.default})
# Retraces that take a 0-d tensor for each float argument (so those become kernel parameters).
PARAMETER_RETRACES = frozenset(BATCH_NORM_RETRACES) | frozenset(SCALED_POINTWISE_RETRACES)


class PlanError(ValueError):
    """The call cannot be compiled (the dispatcher runs it on the CPU fallback)."""


@dataclass
class Plan:
    request: dict
    inputs: list[tuple[int, int]] = field(default_factory=list)   # (argument, list element or -1) per tensor
    params: list[tuple[int, bool]] = field(default_factory=list)  # (argument, is float) per scalar slot
    baked: list[int] = field(default_factory=list)                # arguments whose values are compiled in
    empty_outputs: list | None = None  # [(sizes, mlir dtype)] when every result has no element
    # Per kernel result: (argument, list element or -1, resizable as out=) it is written into; argument -1
    # for a fresh result.
    targets: list[tuple[int, int, bool]] = field(default_factory=list)
    # Per return of the called op: (argument it is, -1 else; kernel results it is made of; is a list).
    returns: list[tuple[int, list[int], bool]] = field(default_factory=list)
    # Per kernel result: (sizes, strides) the dispatcher allocates it with, None for row-major; the
    # kernel writes it in that memory order (request["layouts"], decompositions/output_layout.py).
    layouts: list[tuple[list[int], list[int]] | None] = field(default_factory=list)


@dataclass
class Writes:
    """How a call's writes are computed: `op` is functional; its return k is the new value of argument
    carried[k] (None: a fresh result); the called op's return r is argument returned[r] itself (None:
    `op`'s return r)."""

    op: torch._ops.OpOverload
    carried: list[int | None]
    returned: list[int | None]
    out_args: frozenset[int] = frozenset()  # written arguments that are out= (resized to the result)


def _signature(schema: torch._C.FunctionSchema, tensorize: frozenset = frozenset(),
               options: bool = True) -> list[tuple[str, str]]:
    sig = []
    for a in schema.arguments:
        if a.is_out or (not options and a.kwarg_only and a.name in TENSOR_OPTIONS):
            continue
        kind = str(a.type)
        if a.name in tensorize:
            kind = "Tensor?" if kind.endswith("?") else "Tensor"
        sig.append((a.name, kind))
    return sig


def _sibling(op: torch._ops.OpOverload, signature: list[tuple[str, str]]) -> torch._ops.OpOverload | None:
    """The non-mutating overload of op's base name with exactly this signature."""
    base = op._schema.name.split("::")[1].rstrip("_")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    for overload in packet.overloads():
        candidate = getattr(packet, overload)
        if not candidate._schema.is_mutable and _signature(candidate._schema) == signature:
            return candidate
    return None


def _written(argument: torch._C.Argument) -> bool:
    return argument.alias_info is not None and argument.alias_info.is_write


def _scalar_form(op: torch._ops.OpOverload, schema_args: list, numbers: dict) -> torch._ops.OpOverload | None:
    """The overload taking a Scalar for each number of the call that sits in a Tensor slot."""
    names = {schema_args[i].name for i in numbers if str(schema_args[i].type).startswith("Tensor")}
    if not names:
        return None
    return _sibling(op, [(name, kind.replace("Tensor", "number") if name in names else kind)  # Scalar's str
                         for name, kind in _signature(op._schema)])


def _functional_variant(op: torch._ops.OpOverload, results: int) -> torch._ops.OpOverload | None:
    """`foo_` / `foo.out` -> the functional `foo` overload; a mutable `foo` -> `foo_functional`."""
    signature = _signature(op._schema)
    name = op._schema.name.split("::")[1]
    base = f"__{name[3:]}" if name.startswith("__i") else name.rstrip("_")  # Python's __ilshift__ -> __lshift__
    for name in (base, base + "_functional"):
        packet = getattr(torch.ops.aten, name, None)
        for overload in packet.overloads() if packet is not None else ():
            candidate = getattr(packet, overload)
            schema = candidate._schema
            # A factory pairs with its out= form without its TensorOptions (arange.start_out -> start_step).
            paired = _signature(schema) == signature or _signature(schema, options=False) == signature
            if not schema.is_mutable and paired and len(schema.returns) == results:
                return candidate
    return None


def functional_of(op: torch._ops.OpOverload) -> Writes:
    """The functional op computing `op` and the argument each of its results is written into."""
    schema = op._schema
    arguments = list(schema.arguments)
    written = [i for i, a in enumerate(arguments) if _written(a)]
    returned = []
    for ret in schema.returns:
        alias = ret.alias_info.before_set if ret.alias_info is not None else None
        returned.append(next((i for i in written if arguments[i].alias_info.before_set == alias), None))
    if not written:
        return Writes(op, [None] * len(returned), returned)
    out_args = frozenset(i for i in written if arguments[i].is_out)
    # torchgen's order for the written arguments an op does not return: self, out=, then the others.
    rest = sorted(set(written) - set(returned), key=lambda i: (arguments[i].name != "self", not arguments[i].is_out, i))
    carried = returned + rest
    functional = _functional_variant(op, len(carried))
    if functional is None:
        names = ", ".join(arguments[i].name for i in written)
        raise PlanError(f"{schema.name}.{op._overloadname} writes {names}, and no functional variant returns the "
                        "new values, so a compiled kernel could not write them")
    # The appended results are named after the argument they carry (`running_mean_out`).
    for ret, arg in list(zip(functional._schema.returns, carried))[len(returned):]:
        if ret.name and ret.name != f"{arguments[arg].name}_out":
            raise PlanError(f"{functional._schema.name} returns {ret.name} where {schema.name} writes "
                            f"{arguments[arg].name}: not its functional variant")
    return Writes(functional, carried, returned, out_args)


def _stated(op_name: str, args: list) -> torch._ops.OpOverload:
    """The op whose schema states every write of this call."""
    unstated = UNSTATED_WRITES.get(op_name)
    if unstated is not None and unstated[1](args):
        return resolve_op(unstated[0])
    return resolve_op(op_name)


def _tensor_leaf(desc: Any, plan: Plan, arg: int, element: int) -> Any:
    if desc is None:
        return None
    if desc[0] != "T":
        raise PlanError("only 0-d CPU tensors may be mixed with NPU tensors")
    _, dtype, shape, strides, fmt = desc
    if DTYPE_NAMES.get(dtype) in (None, torch.uint8):
        raise PlanError(f"dtype {dtype} is not supported by the simulated device")
    plan.inputs.append((arg, element))
    if fmt in INTERNAL_FORMATS:
        # The kernel takes the physical storage; its prologue rebuilds the logical tensor.
        physical = storage_shape(tuple(shape), fmt, DTYPE_NAMES[dtype])
        plan.request["tensors"].append((DTYPE_NAMES[dtype], physical, contiguous_strides(physical)))
        return ("formatted", ("tensor", len(plan.request["tensors"]) - 1), fmt, tuple(shape))
    plan.request["tensors"].append((DTYPE_NAMES[dtype], tuple(shape), tuple(strides)))
    return ("tensor", len(plan.request["tensors"]) - 1)


def number_value(desc: Any) -> tuple[Any, Any] | None:
    """(value to bake, parameter slot type) of a number argument, or None if it is not one."""
    if isinstance(desc, tuple) and desc and desc[0] == "S":
        _, dtype, wrapped, value = desc
        baked = value if wrapped else torch.tensor(value, dtype=DTYPE_NAMES[dtype])
        kind = None if isinstance(value, bool) else ("f64" if isinstance(value, float) else "i64")
        return baked, kind
    if isinstance(desc, (int, float)) and not isinstance(desc, bool):
        return desc, "f64" if isinstance(desc, float) else "i64"
    return None


def _results(request: dict) -> list:
    """Per return of the request's op: (dtype, shape), or a list of them for a tensor-list return."""
    from npu_mlir.frontend.kernel_build import example_tensors

    tensors, params = example_tensors(request, device="meta")
    out = materialize(request, tensors, params)
    outs = out if isinstance(out, tuple) else (out,)
    return [[(t.dtype, tuple(t.shape)) for t in o] if isinstance(o, list) else (o.dtype, tuple(o.shape))
            for o in outs]


def _flat(results: list) -> list[tuple[torch.dtype, tuple]]:
    return [r for result in results for r in (result if isinstance(result, list) else [result])]


def _route(writes: Writes, results: list, args: list) -> tuple[list, list]:
    """Plan.targets and Plan.returns of a call whose functional op gives `results`."""
    arguments = writes.op._schema.arguments
    targets, outputs = [], []
    for k, result in enumerate(results):
        arg = writes.carried[k] if k < len(writes.carried) else None
        is_list = isinstance(result, list)
        first = len(targets)
        outputs.append(list(range(first, first + (len(result) if is_list else 1))))
        if arg is None:
            targets += [(-1, -1, False)] * len(outputs[-1])
            continue
        if arg not in writes.out_args:  # out= arguments are not described: the dispatcher checks them
            given = args[arg]
            if is_list != isinstance(given, list) or (is_list and len(given) != len(result)):
                raise PlanError(f"{writes.op._schema.name}'s result {k} does not match {arguments[arg].name}, "
                                "the argument it writes")
            if given is None:
                raise PlanError(f"{arguments[arg].name} is written but None")
        resize = arg in writes.out_args
        targets += [(arg, j if is_list else -1, resize) for j in range(len(outputs[-1]))]
    returns = [(arg, [], False) if arg is not None else (-1, outputs[r], isinstance(results[r], list))
               for r, arg in enumerate(writes.returned)]
    return targets, returns


def plan_call(op_name: str, args: list, block_dim: int) -> Plan:
    """A plan for `op_name` ("aten::add_.Tensor") called with args described by the dispatcher."""
    ignored = IGNORED_WHEN.get(op_name)
    if ignored is not None:
        args = [None if i in ignored(args) and isinstance(d, tuple) and d[0] == "T" and 0 in d[2] else d
                for i, d in enumerate(args)]
    writes = functional_of(_stated(op_name, args))
    op = writes.op
    _check_cpu_only_ranges(op, args)
    schema_args = [a for a in op._schema.arguments]
    if all(a.name in TENSOR_OPTIONS for a in schema_args[len(args):]):
        # The factory's defaults: its result is cast into the out= tensor (the key leaves out= tensors out).
        args = list(args) + [None] * (len(schema_args) - len(args))
    if len(schema_args) != len(args):
        raise PlanError(f"{op_name} got {len(args)} arguments, its functional form takes {len(schema_args)}")
    plan = Plan({"target": f"{op._schema.name}.{op._overloadname}", "args": [], "tensors": [], "params": [], "block_dim": block_dim,
                 "name": op_name.split("::")[-1].replace(".", "_")})
    numbers = _describe(plan, schema_args, args, frozenset())
    if not plan.request["tensors"] and not writes.out_args:
        _check_factory(schema_args, args)
    try:
        expected = _results(plan.request)
    except Exception as err:  # no meta kernel, data-dependent shapes, bad arguments: not compilable
        # A number C++ code passes in a Tensor slot (take_along_dim's `indices % size` reaches
        # remainder.Tensor) is a Python number here, which some Tensor overloads refuse: the Scalar
        # overload is the same call.
        scalar_form = _scalar_form(op, schema_args, numbers)
        if scalar_form is None:
            raise PlanError(f"cannot infer the results on meta tensors: {type(err).__name__}: {str(err)[:300]}") from err
        op = scalar_form
        plan.request["target"] = f"{op._schema.name}.{op._overloadname}"
        expected = _results(plan.request)
    skipped = _skipped_empty_elements(op, args)
    if skipped:
        # The kernel takes only the inputs that contribute; the call's result must not change.
        reduced = Plan(dict(plan.request, args=[], tensors=[], params=[]))
        _describe(reduced, schema_args, args, skipped)
        if _results(reduced.request) == expected:
            plan = reduced
    plan.targets, plan.returns = _route(writes, expected, args)
    flat = _flat(expected)
    empty_input = any(0 in shape for _, shape, _ in plan.request["tensors"])
    if empty_input or (flat and all(0 in shape for _, shape in flat)):
        # With every result empty there is nothing to compute, whatever the inputs; and a zero-size
        # result must not reach torch-mlir alone: its lowering divides by the size (SIGFPE in the
        # compile worker, e.g. x.repeat(0)). Empty results beside non-empty ones compile (eval-mode
        # batch norm's (0,) save_mean / save_invstd).
        if not all(0 in shape for _, shape in flat):
            raise PlanError("an empty input with a non-empty result (e.g. a sum over nothing) is not compiled")
        if any(dtype not in MLIR_TYPES for dtype, _ in flat):
            raise PlanError(f"result dtypes {[str(d) for d, _ in flat]} are not supported")
        plan.empty_outputs = [(list(shape), MLIR_TYPES[dtype]) for dtype, shape in flat]
        # The numbers made the results empty (arange(0, 0)): the entry is keyed by all of them, or
        # a later arange(0, 9) of the same dtype would hit it and come back empty.
        plan.baked = sorted(numbers)
        return plan
    _parameterize(op, schema_args, numbers, plan, expected)
    _lay_out(plan, args)
    return plan


def _lay_out(plan: Plan, args: list) -> None:
    """Each result in the layout the op gives it on CPU (TensorIterator's: channels_last or permuted
    inputs give such results), read off the op itself on meta tensors; a result written into an
    argument in place is laid out as that argument, so the kernel writes it directly; a resized out=
    tensor as the functional result."""
    from npu_mlir.frontend.kernel_build import example_tensors

    tensors, params = example_tensors(plan.request, device="meta")
    try:
        out = materialize(plan.request, tensors, params, retraced=False)
    except Exception:  # the op itself does not take a parameter's 0-d tensor, or has no meta kernel
        out = materialize(plan.request, tensors, params)
    flat = [t for o in (out if isinstance(out, tuple) else (out,)) for t in (o if isinstance(o, list) else [o])]
    if len(flat) != len(plan.targets) or not all(isinstance(t, torch.Tensor) for t in flat):
        return
    layouts, orders = [], []
    for result, (arg, element, resize) in zip(flat, plan.targets):
        sizes, strides = list(result.shape), list(result.stride())
        if arg >= 0 and not resize:
            desc = args[arg][element] if element >= 0 else args[arg]
            written = isinstance(desc, tuple) and desc[0] == "T" and desc[4] not in INTERNAL_FORMATS
            strides = list(desc[3]) if written and list(desc[2]) == sizes else list(contiguous_strides(tuple(sizes)))
        # An out= tensor is not described (the key leaves it out): one the call resizes takes the
        # functional result's layout, as the CPU restrides a resized out (the dispatcher's
        # as_strided_), and is written directly; one of the right size keeps its own, written by a copy.
        order = memory_order(sizes, strides)
        row_major = order is None or strides == list(contiguous_strides(tuple(sizes)))
        layouts.append(None if row_major else (sizes, strides))
        orders.append(None if row_major or order == tuple(range(len(sizes))) else order)
    if any(layouts):
        plan.layouts = layouts
        plan.request["layouts"] = orders


def _check_cpu_only_ranges(op: torch._ops.OpOverload, args: list) -> None:
    """Argument ranges the CPU kernel checks and the meta function does not: compiled, such a call
    returns garbage where the CPU raises, so it is refused and the CPU fallback raises its error."""
    if op._schema.name == "aten::kthvalue" and args and isinstance(args[0], tuple) and args[0][0] == "T":
        shape = args[0][2]
        k = number_value(args[1])[0] if len(args) > 1 else None
        dim = args[2] if len(args) > 2 and isinstance(args[2], int) else -1
        size = shape[dim] if shape else 1
        if not isinstance(k, int) or not 1 <= k <= size:
            raise PlanError(f"kthvalue's k={k} is out of range for a dimension of size {size}")


def _describe(plan: Plan, schema_args: list, args: list, skipped: frozenset) -> dict:
    """Fill plan.request's arguments (and plan.inputs) from the call, leaving out the `skipped`
    (argument, element) tensors; returns argument -> (baked value, slot type) of each number."""
    numbers = {}
    for i, (schema_arg, desc) in enumerate(zip(schema_args, args)):
        number = number_value(desc)
        # A dtype is an int to the dispatcher and to torch.ops (`int` is its type there too), but
        # Python code such as a retrace's `x.to(dtype)` reads an int as a device: pass the dtype.
        if "ScalarType" in str(schema_arg.real_type) and isinstance(desc, int):
            plan.request["args"].append(("value", SCALAR_TYPES[desc]))
        elif number is not None:
            numbers[i] = number
            plan.request["args"].append(("value", number[0]))
        elif isinstance(desc, tuple) and desc and desc[0] == "T":
            plan.request["args"].append(_tensor_leaf(desc, plan, i, -1))
        elif isinstance(desc, list) and desc and all(d is None or isinstance(d, tuple) for d in desc):
            plan.request["args"].append(("list", [_tensor_leaf(d, plan, i, j) for j, d in enumerate(desc)
                                                  if (i, j) not in skipped]))
        else:
            plan.request["args"].append(("value", desc))
    return numbers


def _check_factory(schema_args: list, args: list) -> None:
    """A call with no NPU tensor compiles only as a factory whose result goes on the current device
    (its out= form, or OpCommand under a device guard, see csrc/aten/AllocOps.cpp): the dispatcher
    places a kernel with no tensor argument there, so a device named in the call would be ignored."""
    options = {a.name: desc for a, desc in zip(schema_args, args) if a.kwarg_only and a.name in TENSOR_OPTIONS}
    if "device" not in options:
        raise PlanError("the call has no NPU tensor")
    named = {name: desc for name, desc in options.items() if name != "dtype" and desc not in (None, False)}
    if named:
        raise PlanError(f"a factory compiles for the current device with default options; this call gives {named}")


def _skipped_empty_elements(op: torch._ops.OpOverload, args: list) -> frozenset:
    """The (argument, element) list tensors `op` ignores because they are empty, unless every element
    is one (an empty result): cat skips 1-d empty tensors (a KV cache starts as one), and an empty
    tensor of any other shape adds no element (split_with_sizes' backward cats the gradient of a
    size-0 piece). The caller keeps the reduced call only if its results are the call's."""
    if op not in SKIPS_EMPTY:
        return frozenset()
    skipped = set()
    for i, desc in enumerate(args):
        if isinstance(desc, list):
            empties = {(i, j) for j, d in enumerate(desc) if isinstance(d, tuple) and d[0] == "T" and 0 in tuple(d[2])}
            if len(empties) < len(desc):
                skipped |= empties
    return frozenset(skipped)


def _is_float_or_scalar(schema_type: torch._C.JitType) -> bool:
    if schema_type.kind() == "OptionalType":
        schema_type = schema_type.getElementType()
    return schema_type.kind() in ("FloatType", "NumberType")


def _parameterize(op: torch._ops.OpOverload, schema_args: list, numbers: dict, plan: Plan,
                  expected: list) -> None:
    request = plan.request
    original = (request["target"], list(request["args"]))
    tensor_slot = {i for i in numbers if str(schema_args[i].type).startswith("Tensor")}
    scalar_slot = {i for i in numbers if i not in tensor_slot and numbers[i][1] is not None}
    alpha = next((i for i in scalar_slot if schema_args[i].name == "alpha"), None)
    base = op._schema.name.split("::")[1]
    if alpha is not None and base not in ALPHA_SCALES:
        alpha = None
    specialized = SPECIALIZED_NUMBERS.get(op._schema.name, frozenset())
    tensorize = {i for i in scalar_slot if i != alpha and schema_args[i].name not in specialized}
    target = op
    if custom_reference(request["target"]) is not None or op in PARAMETER_RETRACES:
        # A custom op's reference takes a 0-d tensor for any float / Scalar argument (npu_mlir/frontend/references/).
        tensorize = {i for i in tensorize if _is_float_or_scalar(schema_args[i].type)}
    elif tensorize:
        target = _sibling(op, _signature(op._schema, frozenset(schema_args[i].name for i in tensorize)))
        if target is None:
            tensorize = set()
            target = op
    chosen = sorted(i for i in tensor_slot | tensorize if numbers[i][1] is not None)
    half = any(dtype in (torch.float16, torch.bfloat16) for dtype, _, _ in request["tensors"])
    for i in chosen:
        narrow = half and numbers[i][1] == "f64"
        request["args"][i] = ("param_f32" if narrow else "param", len(request["params"]))
        request["params"].append(numbers[i][1])
    if alpha is not None:
        operand = [a.name for a in schema_args].index(ALPHA_SCALES[base])
        narrow = half and numbers[alpha][1] == "f64"
        scale = ("param_f32" if narrow else "param", len(request["params"]))
        request["args"][operand] = ("scaled", request["args"][operand], scale)
        request["args"][alpha] = ("value", 1)
        request["params"].append(numbers[alpha][1])
        chosen.append(alpha)
    request["target"] = f"{target._schema.name}.{target._overloadname}"
    try:
        same = _results(request) == expected
    except (RuntimeError, TypeError):
        same = False
    if not same:
        request["target"], request["args"], request["params"] = original[0], original[1], []
        chosen = []
    plan.params = [(i, numbers[i][1] == "f64") for i in chosen]
    plan.baked = sorted(set(numbers) - set(chosen))
