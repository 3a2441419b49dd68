"""ascend-read-stored-formats: a matmul operand stored in FRACTAL_NZ is read as it is stored.

A tensor kept in NZ (`torch_npu.npu_format_cast(w, 29)`) reaches the compiler as its physical
storage, [n1, m1, 16, c0], and the traced prologue that rebuilds the logical [m, n] tensor from it
(frontend/references/formats.to_logical: transpose, collapse, slice off the padding). When that
logical tensor only feeds matmul operands, the prologue is a round trip through GM for nothing:
the cube kernel's copy-in can read the fractals directly. So the function argument takes the
logical type with the FRACTAL_NZ encoding (the same bytes: formats.storage_shape of it is the
storage shape) and the prologue goes away; ascend-assign-formats then has nothing to cast.

Runs on host functions after ascend-raise-linalg (the prologue's transpose is an ascend.transpose)
and before ascend-assign-formats. 2-d logical tensors only; anything else is left as traced.
"""

from __future__ import annotations

from math import ceil

from torch_mlir import ir

from ..analysis.kernel_model import CUBE_OPS
from ..dialects.ascend import load_ascend, with_format

NZ_PERMUTATION = [1, 2, 0, 3]  # storage [n1, m1, 16, c0] -> [m1, 16, n1, c0]


def _only_user(v: ir.Value, name: str) -> ir.Operation | None:
    uses = list(v.uses)
    if len(uses) != 1 or uses[0].owner.name != name:
        return None
    return uses[0].owner


def _ints(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _unpack_chain(arg: ir.BlockArgument) -> list[ir.Operation] | None:
    """The ops rebuilding a 2-d logical tensor from NZ storage `arg` (transpose, collapse, slices)."""
    t = arg.type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape or t.rank != 4 or t.encoding is not None:
        return None
    n1, m1, r0, c0 = t.shape
    if r0 != 16 or c0 != (32 if t.element_type.width == 8 else 16):
        return None
    transpose = _only_user(arg, "ascend.transpose")
    if transpose is None or _ints(transpose, "permutation") != NZ_PERMUTATION:
        return None
    collapse = _only_user(transpose.results[0], "tensor.collapse_shape")
    if collapse is None:
        return None
    groups = [[ir.IntegerAttr(d).value for d in g] for g in ir.ArrayAttr(collapse.attributes["reassociation"])]
    if groups != [[0, 1], [2, 3]]:
        return None
    chain = [transpose, collapse]
    while True:
        uses = list(chain[-1].results[0].uses)
        nxt = uses[0].owner if len(uses) == 1 else None
        if nxt is None or nxt.name != "tensor.extract_slice" or len(nxt.operands) != 1:
            break  # a slice with dynamic offsets or sizes has operands beyond its source
        if any(_ints(nxt, "static_offsets")) or any(s != 1 for s in _ints(nxt, "static_strides")):
            return None
        chain.append(nxt)
    rows, cols = ir.RankedTensorType(chain[-1].results[0].type).shape
    if ceil(rows / 16) != m1 or ceil(cols / c0) != n1:
        return None
    return chain


def _read_as_stored(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    changed = False
    for arg in block.arguments:
        chain = _unpack_chain(arg)
        if chain is None:
            continue
        logical = chain[-1].results[0]
        if not all(u.owner.name in CUBE_OPS and u.operand_number < 2 for u in logical.uses):
            continue  # a vector op reads it too: it needs the ND tensor the prologue builds
        arg.set_type(with_format(logical.type, "FRACTAL_NZ"))
        logical.replace_all_uses_with(arg)
        for op in reversed(chain):
            op.erase()
        changed = True
    if changed:
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], list(ftype.results)))


def run(module: ir.Operation) -> bool:
    load_ascend(module.context)
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and op.regions[0].blocks:
            _read_as_stored(op.operation)
    return True
