"""How an `ascend.kernel`'s work maps onto one core: its shape class and its local buffers.

`ascend-tile`, `ascend-plan-memory`, `ascend-lower-tiles` and the AscendC emitter must agree on
which local buffers a kernel needs and how big each is per tile; this module is that agreement.

A kernel is one of:
  elementwise  every tensor has the iteration shape (scalars aside): the work is a flat run of
               `total` elements, cut into tiles of `tile_elems`.
  row          the kernel reduces trailing dims or broadcasts along them: every tensor is viewed
               as [rows, cols] (`full`), [rows] (`row`: a reduction result, one value per row) or
               [cols] (`col`: a vector broadcast over rows, e.g. a bias or a norm weight). The
               work is cut into tiles of `tile_rows` whole rows.
  matmul       one matmul / batch_matmul, possibly followed by elementwise ops on its result
               (the epilogue).
  opaque       anything else (transposes, conv, reductions over leading dims): one block, no
               local tiling; the sim runs it, the AscendC emitter rejects it.

Per-element buffer sizes are counted in elements of the buffer's own dtype; every buffer starts
32-byte aligned (UB alignment), so column counts are padded to `align_elems`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from torch_mlir import ir

from ..dialects.ascend.shaped import tensor_format

VECTOR_OPS = frozenset(
    {"ascend.unary", "ascend.binary", "ascend.ternary", "ascend.cast", "ascend.compare", "ascend.select"}
)
CUBE_OPS = frozenset({"ascend.matmul", "ascend.batch_matmul"})
# Scalar arithmetic raise-linalg leaves in kernel bodies (e.g. truncf of an f64 epsilon): it
# computes operands of vector ops and needs no buffer. Value -> C++ / MLIR text in the emitters.
SCALAR_CASTS = frozenset({"arith.truncf", "arith.extf", "arith.sitofp", "arith.uitofp", "arith.fptosi"})
SCALAR_BINARY = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/",
                 "arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}
# `tensor.extract` reads a scalar parameter (a 0-d kernel argument, see is_scalar_param).
SCALAR_OPS = SCALAR_CASTS | frozenset(SCALAR_BINARY) | {"arith.constant", "arith.negf", "tensor.extract"}


def is_scalar_op(op: ir.Operation) -> bool:
    return op.name in SCALAR_OPS and not any(isinstance(r.type, ir.ShapedType) for r in op.results)


# Copy-in conversions: (source format, cast format) -> {cube op: operand it feeds}. A cube op
# reads such an operand ND from GM and converts it on the way into L1 (AscendC's DataCopy with
# Nd2NzParams for matmul; for conv the NC1HWC0 input / FRACTAL_Z weight load), so ascend-fuse puts
# the cast in the cube op's kernel and no kernel of its own converts the operand in GM.
COPY_IN_CASTS = {
    ("ND", "FRACTAL_NZ"): {"ascend.matmul": (0, 1), "ascend.batch_matmul": (0, 1)},
    ("ND", "NC1HWC0"): {"ascend.conv2d": (0,)},
    ("ND", "FRACTAL_Z"): {"ascend.conv2d": (1,)},
}


def is_copy_in_cast(op: ir.Operation) -> bool:
    """A format_cast from ND read only as the operands of cube ops that convert it in their copy-in."""
    if op.name != "ascend.format_cast":
        return False
    readers = COPY_IN_CASTS.get((tensor_format(op.operands[0].type), tensor_format(op.results[0].type)))
    uses = list(op.results[0].uses)
    return bool(readers and uses) and all(u.operand_number in readers.get(u.owner.name, ()) for u in uses)


def is_copy_out_cast(op: ir.Operation) -> bool:
    """An NC1HWC0 -> ND format_cast of a conv2d result that nothing else reads: the conv kernel's
    copy-out writes its result ND (the inverse of the NC1HWC0 load), so the cast joins that kernel."""
    if op.name != "ascend.format_cast" or tensor_format(op.operands[0].type) != "NC1HWC0" \
            or tensor_format(op.results[0].type) != "ND":
        return False
    source = op.operands[0]
    return isinstance(source.owner, ir.OpView) and source.owner.operation.name == "ascend.conv2d" \
        and len(list(source.uses)) == 1


def cube_sources(cube_op: ir.Operation) -> tuple[ir.Value, ir.Value]:
    """The values a cube op's copy-in reads from GM for its A and B operands: through a copy-in
    cast, the cast's ND source; else the operand itself (ND, or already stored in NZ)."""
    def source(v: ir.Value) -> ir.Value:
        owner = v.owner
        if isinstance(owner, ir.OpView) and is_copy_in_cast(owner.operation):
            return owner.operands[0]
        return v
    return source(cube_op.operands[0]), source(cube_op.operands[1])


def epilogue_ops(kernel: ir.Operation) -> list[ir.Operation]:
    """The vector ops of a matmul kernel: every body op but the cube op, its copy-in casts and scalars."""
    return [o for o in body_ops(kernel) if o.name not in CUBE_OPS and not is_scalar_op(o) and not is_copy_in_cast(o)]


def is_scalar_param(v: ir.Value) -> bool:
    """A 0-d tensor kernel argument: a value passed by the launch (an eager scalar parameter), read
    once with tensor.extract; it has no local buffer and no tiling."""
    return isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).rank == 0 \
        and isinstance(v, ir.BlockArgument)


@dataclass
class Buffer:
    """One local buffer of a vector kernel: a kernel input, a kernel output or a temporary."""

    value: ir.Value
    role: str  # "in" | "out" | "tmp" | "work"
    shape_class: str  # "full" | "row" | "col"
    elem_bytes: int
    depth: int  # 2 = double-buffered queue, 1 = scratch buffer


@dataclass
class KernelModel:
    kind: str
    reason: str = ""  # why a kernel is opaque
    iter_shape: list[int] = field(default_factory=list)
    rows: int = 1
    cols: int = 1
    buffers: list[Buffer] = field(default_factory=list)
    cube_op: ir.Operation | None = None


def body_ops(kernel: ir.Operation) -> list[ir.Operation]:
    """The kernel body's ops without the terminator."""
    return [op.operation for op in kernel.regions[0].blocks[0].operations][:-1]


def elem_bytes(t: ir.Type) -> int:
    t = t.element_type if isinstance(t, ir.ShapedType) else t
    if isinstance(t, ir.IndexType):
        return 8
    return max(1, t.width // 8)


def _tensor(v: ir.Value) -> ir.RankedTensorType | None:
    return ir.RankedTensorType(v.type) if isinstance(v.type, ir.RankedTensorType) else None


def _attr_ints(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def analyze(kernel: ir.Operation) -> KernelModel:
    """Classify `kernel` and list the local buffers one core needs for it."""
    ops = body_ops(kernel)
    names = {op.name for op in ops if not is_scalar_op(op)}
    if names & CUBE_OPS:
        cube = [op for op in ops if op.name in CUBE_OPS]
        if len(cube) != 1:
            return KernelModel("opaque", reason="more than one matmul in a kernel")
        return KernelModel("matmul", iter_shape=list(_tensor(cube[0].results[0]).shape), cube_op=cube[0])
    unknown = names - VECTOR_OPS - {"ascend.reduce", "ascend.broadcast"}
    if unknown:
        return KernelModel("opaque", reason=f"{', '.join(sorted(unknown))} has no vector tiling")
    if "ascend.reduce" in names or "ascend.broadcast" in names:
        return _row_model(kernel, ops)
    return _elementwise_model(kernel, ops)


def _values(kernel: ir.Operation, ops: list[ir.Operation]) -> tuple[list[ir.Value], list[ir.Value], list[ir.Value]]:
    block = kernel.regions[0].blocks[0]
    inputs = [a for a in block.arguments if _tensor(a) is not None and not is_scalar_param(a)]
    outputs = list(list(block.operations)[-1].operands)
    temps = [r for op in ops for r in op.results if _tensor(r) is not None and r not in outputs]
    return inputs, outputs, temps


def _buffers(kernel: ir.Operation, ops: list[ir.Operation], classify) -> list[Buffer] | str:
    inputs, outputs, temps = _values(kernel, ops)
    if any(isinstance(o, ir.BlockArgument) for o in outputs):
        return "a kernel output is one of its inputs"
    bufs = []
    for role, values, depth in (("in", inputs, 2), ("out", outputs, 2), ("tmp", temps, 1)):
        for v in values:
            cls = classify(v)
            if cls is None:
                return f"a value of shape {_tensor(v).shape} fits neither rows nor columns of the iteration space"
            bufs.append(Buffer(v, role, cls, elem_bytes(v.type), depth))
    return bufs


def _elementwise_model(kernel: ir.Operation, ops: list[ir.Operation]) -> KernelModel:
    shapes = {tuple(_tensor(r).shape) for op in ops for r in op.results if _tensor(r) is not None}
    if len(shapes) != 1:
        return KernelModel("opaque", reason="elementwise ops of different shapes")
    shape = list(shapes.pop())
    if any(d < 0 for d in shape):
        return KernelModel("opaque", reason="dynamic shapes")
    bufs = _buffers(kernel, ops, lambda v: "full" if list(_tensor(v).shape) == shape else None)
    if isinstance(bufs, str):
        return KernelModel("opaque", reason=bufs)
    return KernelModel("elementwise", iter_shape=shape, rows=1, cols=prod(shape), buffers=bufs)


def _row_model(kernel: ir.Operation, ops: list[ir.Operation]) -> KernelModel:
    # The iteration shape is the largest tensor; the reduced / broadcast dims must be its trailing dims.
    shapes = [list(_tensor(v).shape) for op in ops for v in [*op.operands, *op.results] if _tensor(v) is not None]
    shape = max(shapes, key=lambda s: (prod(s), len(s)))
    if any(d < 0 for d in shape):
        return KernelModel("opaque", reason="dynamic shapes")
    split = None
    for op in ops:
        if op.name == "ascend.reduce":
            dims = sorted(_attr_ints(op, "dims"))
        elif op.name == "ascend.broadcast":
            dims = sorted(_attr_ints(op, "dims"))
            src = _tensor(op.operands[0]).shape
            if dims == list(range(len(dims))):  # a column vector broadcast over leading dims
                dims = list(range(len(dims), len(shape)))
                if list(src) != shape[len(shape) - len(src):]:
                    return KernelModel("opaque", reason="broadcast of a non-trailing block")
        else:
            continue
        if list(_tensor(op.results[0] if op.name == "ascend.broadcast" else op.operands[0]).shape) != shape:
            return KernelModel("opaque", reason="reductions or broadcasts over different shapes")
        if dims != list(range(len(shape) - len(dims), len(shape))):
            return KernelModel("opaque", reason=f"dims {dims} are not the trailing dims of {shape}")
        first = dims[0]
        if split is not None and split != first:
            return KernelModel("opaque", reason="reductions over different trailing dims")
        split = first
    rows, cols = prod(shape[:split]), prod(shape[split:])
    # A broadcast's input says which way it runs, even where rows == cols makes shapes ambiguous.
    forced = {}
    for op in ops:
        if op.name == "ascend.broadcast":
            leading = sorted(_attr_ints(op, "dims")) == list(range(len(_attr_ints(op, "dims"))))
            forced[op.operands[0]] = "col" if leading else "row"

    def classify(v: ir.Value) -> str | None:
        if v in forced:
            return forced[v]
        s = list(_tensor(v).shape)
        numel = prod(s)
        if s == shape:
            return "full"
        if numel == rows and [d for d in s if d != 1] == [d for d in shape[:split] if d != 1]:
            return "row"
        if numel == cols and [d for d in s if d != 1] == [d for d in shape[split:] if d != 1]:
            return "col"
        return None

    bufs = _buffers(kernel, ops, classify)
    if isinstance(bufs, str):
        return KernelModel("opaque", reason=bufs)
    # Whole-row reductions need a scratch row for the vector unit's pairwise passes.
    reduces = [op for op in ops if op.name == "ascend.reduce"]
    if reduces:
        widened = any(str(ir.RankedTensorType(op.operands[0].type).element_type) == "bf16" for op in reduces)
        widest = 4 if widened else max(b.elem_bytes for b in bufs)
        bufs.append(Buffer(None, "work", "col", widest, 1))
        if widened:
            # A 910B reduces half / float only: a bf16 row is widened to float first. The second
            # scratch holds that float row and its 32-byte result slot, so it is counted at 8
            # bytes per column (a row is at least 16 bf16 columns: 64 spare bytes).
            bufs.append(Buffer(None, "work", "col", 8, 1))
    return KernelModel("row", iter_shape=shape, rows=rows, cols=cols, buffers=bufs)


def epilogue_values(kernel: ir.Operation, model: KernelModel) -> list[tuple[ir.Value, str]] | str:
    """What a matmul kernel's vector epilogue keeps in UB per output tile, or why it cannot.

    The matmul result, the kernel's other tensor inputs and every epilogue op's result, each
    'full' (an [m, n] tile) or 'col' (an [n] vector broadcast over rows, e.g. a bias).
    """
    cube = model.cube_op
    shape = model.iter_shape
    block = kernel.regions[0].blocks[0]
    operands = cube_sources(cube)
    values = [cube.results[0]]
    values += [a for a in block.arguments if _tensor(a) is not None and a not in operands and not is_scalar_param(a)]
    values += [r for op in epilogue_ops(kernel) for r in op.results]
    out = []
    for v in values:
        s = list(_tensor(v).shape)
        layout = epilogue_layout(s, shape)
        if layout is None:
            return f"epilogue tensor of shape {s} is neither the matmul result's {shape} nor a row of it"
        out.append((v, layout))
    return out


def epilogue_layout(shape: list[int], result: list[int]) -> str | None:
    """How a matmul kernel's epilogue holds a tensor of `shape` next to its `result`-shaped output:
    'full' (one element per result element), 'col' (an [n] vector broadcast over rows), or None
    (it cannot, e.g. a per-batch row [b, 1, n]; ascend-fuse then keeps such ops out of the kernel)."""
    if prod(shape) == prod(result) and [d for d in shape if d != 1] == [d for d in result if d != 1]:
        return "full"
    if prod(shape) == result[-1]:
        return "col"
    return None
