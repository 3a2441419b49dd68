"""Accumulate long float32 sums in float64, as precise as the chip's tree reductions.

The sim's UB tiling runs a reduction as one accumulator per output element and adds every reduced
element to it in turn. Torch's CPU kernels sum in a cascade (and a 910B's ReduceSum in a tree), so
their error grows with log(n), where a running float32 sum's grows with n: `x.sum()` of 4097 x 257
came out with a relative error of 1.6e-5 and `F.mse_loss` of a million elements 5.7e-4, against
the CPU's 6e-8 and 4e-8; summing a 3000 x 3000 over its rows, 2.3e-6 against 1.9e-7. Too far
for assert_close, and a loss a training run would see move.

Here every float32 accumulator of a reduction over at least MIN_REDUCED elements that only adds
(the body yields `addf(x, acc)`) is kept in float64: the init is widened, the body adds `extf(x)`,
and the result is rounded to float32 once after the op. Contractions (matmul, and conv lowered to
one) keep their float32 register tiles: their reduced extent is K, summed into vector accumulators
as oneDNN sums it. max / min / products and integer sums are exact or do not grow this way.
"""

from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from npu_mlir.targets.sim.schedule import loop_nest

# Reduced elements per output from which a float32 running sum is measurably worse than the CPU's:
# rows of 1000 matched it (1.8e-7), columns of 3000 did not (2.3e-6).
MIN_REDUCED = 1024


def _reduced_elements(op: ir.Operation) -> int | None:
    """Elements summed into each output element, or None if the op reduces nothing or is a contraction."""
    nest = loop_nest(op)
    # On tensors only: a tile-level program's generics work on memrefs its own copies stage.
    on_tensors = len(op.results) > 0 and all(isinstance(r.type, ir.RankedTensorType) for r in op.results)
    if nest is None or not on_tensors or all(nest.parallel) or nest.is_contraction:
        return None
    ranges = [r for r, p in zip(nest.ranges, nest.parallel) if not p]
    return math.inf if min(ranges) < 0 else math.prod(ranges)


def _summed_outputs(op: ir.Operation) -> list[int]:
    """Positions of the float32 outputs whose accumulator is only added to."""
    generic = op.opview
    block = op.regions[0].blocks[0]
    args = list(block.arguments)[len(generic.inputs):]
    yielded = list(list(block.operations)[-1].operands)
    found = []
    for j, (acc, value) in enumerate(zip(args, yielded)):
        if not isinstance(acc.type, ir.F32Type) or isinstance(value, ir.BlockArgument):
            continue
        add = value.owner.operation
        uses = list(acc.uses)
        if add.name == "arith.addf" and acc in list(add.operands) and len(uses) == 1 \
                and len(list(add.results[0].uses)) == 1 and list(add.operands)[0] != list(add.operands)[1]:
            found.append(j)
    return found


def _elementwise(value: ir.Value, element: ir.Type, cast) -> ir.Value:
    """`cast` applied to every element of the tensor `value`, into a new tensor of `element`."""
    source = ir.RankedTensorType(value.type)
    result = ir.RankedTensorType.get(source.shape, element)
    empty = tensor.EmptyOp(source.shape, element).result
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(source.rank))
    op = linalg.GenericOp([result], [value], [empty], ir.ArrayAttr.get([identity, identity]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * source.rank))
    block = op.regions[0].blocks.append(source.element_type, element)
    with ir.InsertionPoint(block):
        linalg.YieldOp([cast(element, block.arguments[0])])
    return op.result if len(op.results) == 1 else op.results[0]


def _widen(op: ir.Operation, summed: list[int]) -> None:
    generic = op.opview
    inputs, outputs = list(generic.inputs), list(generic.outputs)
    f64 = ir.F64Type.get()
    with ir.InsertionPoint(op), op.location:
        inits = [_elementwise(init, f64, arith.extf) if j in summed else init for j, init in enumerate(outputs)]
        types = [init.type for init in inits]
        new = linalg.GenericOp(types, inputs, inits, op.attributes["indexing_maps"], op.attributes["iterator_types"])
        old_block = op.regions[0].blocks[0]
        arg_types = [a.type for a in old_block.arguments]
        for j in summed:
            arg_types[len(inputs) + j] = f64
        block = new.regions[0].blocks.append(*arg_types)
        for old_arg, new_arg in zip(old_block.arguments, block.arguments):
            if new_arg.type == old_arg.type:
                old_arg.replace_all_uses_with(new_arg)
        for inner in list(old_block.operations):
            block.append(inner)
        yielded = list(block.operations)[-1]
        for j in summed:
            acc_old, acc = old_block.arguments[len(inputs) + j], block.arguments[len(inputs) + j]
            add = list(yielded.operands)[j].owner.operation
            term = [v for v in add.operands if v != acc_old][0]
            with ir.InsertionPoint(add):
                wide = arith.AddFOp(arith.extf(f64, term), acc).result
            yielded.operands[j] = wide
            add.erase()
    with ir.InsertionPoint.after(new.operation), op.location:
        results = [_elementwise(r, ir.F32Type.get(), arith.truncf) if j in summed else r
                   for j, r in enumerate(new.results)]
    for old, result in zip(op.results, results):
        old.replace_all_uses_with(result)
    op.erase()


def widen_long_sums(module: ir.Module | ir.Operation) -> int:
    """Keep every long float32 sum of `module` in float64 (module docstring); returns how many ops."""
    found = []

    def visit(op):
        if op.name == "linalg.generic":
            reduced = _reduced_elements(op)
            summed = _summed_outputs(op) if reduced is not None and reduced >= MIN_REDUCED else []
            if summed:
                found.append((op, summed))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op, summed in found:
        _widen(op, summed)
    return len(found)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-wide-accumulators): `widen_long_sums` on `module`."""
    widen_long_sums(module)
    return True
