"""AscendC for vector kernels (tiling kinds elementwise and row): queues, stages, vector ops.

Inputs get a VECIN TQue and outputs a VECOUT TQue of BUFFER_NUM buffers, so the copy of tile i+1
overlaps the compute of tile i; temporaries live in VECCALC TBufs, one per memory slot that
ascend-plan-memory assigned (temporaries whose lifetimes do not overlap share a slot). Row kernels
keep whole rows in UB at a pitch of `cols_aligned` elements.
"""

from __future__ import annotations

from torch_mlir import ir

from .emit import CodegenError, KernelSignature, ctype, scalar_ctype
from ...analysis.kernel_model import SCALAR_BINARY, SCALAR_CASTS, Buffer, analyze, body_ops, is_scalar_op
from ...analysis.memory_plan import slots_of

_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "max": "Max", "min": "Min"}
_SCALAR_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_UNARY = {"exp": "Exp", "log": "Ln", "abs": "Abs", "sqrt": "Sqrt", "rsqrt": "Rsqrt",
          "reciprocal": "Reciprocal", "relu": "Relu", "tanh": "Tanh",
          # high-level math APIs
          "erf": "Erf", "sin": "Sin", "cos": "Cos", "floor": "Floor", "ceil": "Ceil", "round": "Round",
          "tan": "Tan", "sinh": "Sinh", "cosh": "Cosh", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh"}
_REDUCE = {"sum": "ReduceSum", "mean": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin"}


class Names:
    """C++ names of the kernel's values: tensors -> LocalTensor variables, scalars -> expressions."""

    def __init__(self, sig: KernelSignature, buffers: list[Buffer]):
        self.expr: dict[ir.Value, str] = {}
        self.cls: dict[ir.Value, str] = {}
        for name, v in sig.inputs + sig.outputs:
            self.expr[v] = name
        for i, b in enumerate(b for b in buffers if b.role == "tmp"):
            self.expr[b.value] = f"t{i}"
        for b in buffers:
            if b.value is not None:
                self.cls[b.value] = b.shape_class
        for name, v in sig.scalars:
            self.expr[v] = f"tiling_.{name}"
        self.params = {v for _, v in sig.scalars}  # 0-d tensor arguments passed by value
        # Element counts of a tile per shape class, and the UB row pitch.
        self.count = {"full": "n", "row": "rows", "col": "tiling_.cols_aligned"}
        self.pitch = "tiling_.cols_aligned"

    def scalar(self, v: ir.Value) -> str:
        if v in self.expr:
            return self.expr[v]
        op = v.owner
        if op.name == "arith.constant":
            value = op.attributes["value"]
            if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
                value = value.get_splat_value()
            if isinstance(value, ir.FloatAttr):
                f = float(value.value)  # C++ has no inf / nan literal
                return repr(f) if f - f == 0 else "(0.0f / 0.0f)" if f != f else ("-" if f < 0 else "") + "(1.0f / 0.0f)"
            if isinstance(value, ir.IntegerAttr):
                return str(value.value)
        if op.name == "tensor.extract":
            return self.scalar(op.operands[0])
        if op.name in SCALAR_CASTS:
            return f"static_cast<{scalar_ctype(op.results[0].type)}>({self.scalar(op.operands[0])})"
        if op.name in SCALAR_BINARY:
            return f"({self.scalar(op.operands[0])} {SCALAR_BINARY[op.name]} {self.scalar(op.operands[1])})"
        if op.name == "arith.negf":
            return f"(-{self.scalar(op.operands[0])})"
        raise CodegenError(f"ERR03007 GRAPH operand {v} is neither a kernel value nor a scalar constant")


def _binary(op: ir.Operation, names: Names, dst: str, t: str, n: str) -> list[str]:
    kind = ir.StringAttr(op.attributes["kind"]).value
    if kind not in _BINARY:
        raise CodegenError(f"ERR03007 GRAPH binary kind '{kind}' has no AscendC vector instruction")
    lhs, rhs = op.operands
    lt, rt = (isinstance(v.type, ir.RankedTensorType) and v not in names.params for v in (lhs, rhs))
    if lt and rt:
        return [f"{_BINARY[kind]}({dst}, {names.expr[lhs]}, {names.expr[rhs]}, {n});"]
    if not lt and not rt:  # two scalars (parameters): the scalar unit computes, the vector unit fills
        a, b = (f"static_cast<{t}>({names.scalar(v)})" for v in (lhs, rhs))
        value = {"max": f"({a} > {b} ? {a} : {b})", "min": f"({a} < {b} ? {a} : {b})"}.get(kind) or \
            f"({a} {_SCALAR_OPERATORS[kind]} {b})"
        return [f"Duplicate({dst}, static_cast<{t}>{value}, {n});"]
    tensor, s = (names.expr[lhs], names.scalar(rhs)) if lt else (names.expr[rhs], names.scalar(lhs))
    if kind in ("add", "mul", "max", "min"):
        fn = {"add": "Adds", "mul": "Muls", "max": "Maxs", "min": "Mins"}[kind]
        return [f"{fn}({dst}, {tensor}, static_cast<{t}>({s}), {n});"]
    if lt:  # tensor - s, tensor / s
        if kind == "sub":
            return [f"Adds({dst}, {tensor}, static_cast<{t}>(-({s})), {n});"]
        return [f"Muls({dst}, {tensor}, static_cast<{t}>(1.0f / ({s})), {n});"]
    if kind == "sub":  # s - tensor
        return [f"Muls({dst}, {tensor}, static_cast<{t}>(-1), {n});",
                f"Adds({dst}, {dst}, static_cast<{t}>({s}), {n});"]
    return [f"Reciprocal({dst}, {tensor}, {n});", f"Muls({dst}, {dst}, static_cast<{t}>({s}), {n});"]


def _unary(op: ir.Operation, names: Names, dst: str, t: str, n: str) -> list[str]:
    kind = ir.StringAttr(op.attributes["kind"]).value
    x = names.expr[op.operands[0]]
    if kind in _UNARY:
        return [f"{_UNARY[kind]}({dst}, {x}, {n});"]
    if kind == "neg":
        return [f"Muls({dst}, {x}, static_cast<{t}>(-1), {n});"]
    sigmoid = [f"Muls({dst}, {x}, static_cast<{t}>(-1), {n});", f"Exp({dst}, {dst}, {n});",
               f"Adds({dst}, {dst}, static_cast<{t}>(1), {n});", f"Reciprocal({dst}, {dst}, {n});"]
    if kind == "sigmoid":
        return sigmoid
    if kind == "silu":
        return sigmoid + [f"Mul({dst}, {dst}, {x}, {n});"]
    if kind == "gelu_tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        return [f"Mul({dst}, {x}, {x}, {n});", f"Mul({dst}, {dst}, {x}, {n});",
                f"Muls({dst}, {dst}, static_cast<{t}>(0.044715f), {n});", f"Add({dst}, {dst}, {x}, {n});",
                f"Muls({dst}, {dst}, static_cast<{t}>(0.7978845608f), {n});", f"Tanh({dst}, {dst}, {n});",
                f"Adds({dst}, {dst}, static_cast<{t}>(1), {n});", f"Mul({dst}, {dst}, {x}, {n});",
                f"Muls({dst}, {dst}, static_cast<{t}>(0.5f), {n});"]
    raise CodegenError(f"ERR03007 GRAPH unary kind '{kind}' has no AscendC vector lowering")


def _ternary(op: ir.Operation, names: Names, dst: str, t: str, n: str) -> list[str]:
    kind = ir.StringAttr(op.attributes["kind"]).value
    a, b, c = op.operands
    tensors = [isinstance(v.type, ir.RankedTensorType) and v not in names.params for v in (a, b, c)]
    if kind == "clamp" and tensors == [True, False, False]:  # min(max(a, lo), hi)
        return [f"Maxs({dst}, {names.expr[a]}, static_cast<{t}>({names.scalar(b)}), {n});",
                f"Mins({dst}, {dst}, static_cast<{t}>({names.scalar(c)}), {n});"]
    if all(tensors):
        x, y, z = (names.expr[v] for v in (a, b, c))
        if kind == "fma":  # a * b + c
            return [f"Mul({dst}, {x}, {y}, {n});", f"Add({dst}, {dst}, {z}, {n});"]
        if kind == "lerp":  # a + c * (b - a)
            return [f"Sub({dst}, {y}, {x}, {n});", f"Mul({dst}, {dst}, {z}, {n});", f"Add({dst}, {dst}, {x}, {n});"]
    raise CodegenError(f"ERR03007 GRAPH ternary '{kind}' with these operand kinds has no AscendC vector lowering")


_CMP = {"lt": "LT", "gt": "GT", "eq": "EQ", "le": "LE", "ge": "GE", "ne": "NE"}
_SWAPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}


def _compare(op: ir.Operation, names: Names, dst: str, n: str) -> list[str]:
    """A bit mask in UB (the i1 tensor's buffer), as Compare writes it for Select."""
    pred = ir.StringAttr(op.attributes["predicate"]).value
    lhs, rhs = op.operands
    lt, rt = (isinstance(v.type, ir.RankedTensorType) and v not in names.params for v in (lhs, rhs))
    mask = f"{dst}.ReinterpretCast<uint8_t>()"
    if not lt and not rt:
        raise CodegenError("ERR03007 GRAPH a comparison of two scalars has no vector mask")
    if lt and rt:
        return [f"Compare({mask}, {names.expr[lhs]}, {names.expr[rhs]}, CMPMODE::{_CMP[pred]}, {n});"]
    tensor, scalar = (lhs, rhs) if lt else (rhs, lhs)
    pred = pred if lt else _SWAPPED[pred]
    t = ctype(tensor.type)
    return [f"CompareScalar({mask}, {names.expr[tensor]}, static_cast<{t}>({names.scalar(scalar)}), "
            f"CMPMODE::{_CMP[pred]}, {n});"]


def _select(op: ir.Operation, names: Names, dst: str, t: str, n: str) -> list[str]:
    cond, a, b = op.operands
    if cond in names.params:
        raise CodegenError("ERR03007 GRAPH a select on a scalar condition has no vector mask")
    mask = f"{names.expr[cond]}.ReinterpretCast<uint8_t>()"
    at, bt = (isinstance(v.type, ir.RankedTensorType) and v not in names.params for v in (a, b))
    if at and bt:
        return [f"Select({dst}, {mask}, {names.expr[a]}, {names.expr[b]}, SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});"]
    if at:
        return [f"Select({dst}, {mask}, {names.expr[a]}, static_cast<{t}>({names.scalar(b)}), "
                f"SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});"]
    if bt:  # scalar where true: fill, then keep the fill where the mask is set
        return [f"Duplicate({dst}, static_cast<{t}>({names.scalar(a)}), {n});",
                f"Select({dst}, {mask}, {dst}, {names.expr[b]}, SELMODE::VSEL_TENSOR_TENSOR_MODE, {n});"]
    # Two scalars (sign's 1 / -1): fill with the true value, then the false value where the mask is clear.
    return [f"Duplicate({dst}, static_cast<{t}>({names.scalar(a)}), {n});",
            f"Select({dst}, {mask}, {dst}, static_cast<{t}>({names.scalar(b)}), SELMODE::VSEL_TENSOR_SCALAR_MODE, {n});"]


def _cast(op: ir.Operation, names: Names, dst: str, n: str) -> list[str]:
    src, res = (ir.RankedTensorType(v.type).element_type for v in (op.operands[0], op.results[0]))
    if isinstance(res, ir.IntegerType) and not isinstance(src, ir.IntegerType):
        mode = "CAST_TRUNC"  # torch truncates float -> int toward zero
    elif isinstance(res, ir.FloatType) and isinstance(src, ir.FloatType) and res.width < src.width:
        mode = "CAST_RINT"
    else:
        mode = "CAST_NONE"
    return [f"Cast({dst}, {names.expr[op.operands[0]]}, RoundMode::{mode}, {n});"]


def _reduce(op: ir.Operation, names: Names, dst: str, t: str) -> list[str]:
    kind = ir.StringAttr(op.attributes["kind"]).value
    if kind not in _REDUCE:
        raise CodegenError(f"ERR03007 GRAPH reduce kind '{kind}' has no AscendC vector lowering")
    src = names.expr[op.operands[0]]
    if t == "bfloat16_t":
        # A 910B reduces half and float only: widen each bf16 row to float, reduce there, round once.
        acc = "widen[tiling_.cols_aligned]"
        lines = [f"for (int64_t r = 0; r < rows; ++r) {{",
                 f"  Cast(widen, {src}[r * tiling_.cols_aligned], RoundMode::CAST_NONE, tiling_.cols);",
                 f"  {_REDUCE[kind]}({acc}, widen, work, tiling_.cols);"]
        if kind == "mean":
            lines.append(f"  Muls({acc}, {acc}, 1.0f / tiling_.cols, 1);")
        return lines + [f"  Cast({dst}[r], {acc}, RoundMode::CAST_RINT, 1);", "}"]
    lines = [f"for (int64_t r = 0; r < rows; ++r) {{",
             f"  {_REDUCE[kind]}({dst}[r], {src}[r * tiling_.cols_aligned], work, tiling_.cols);", "}"]
    if kind == "mean":
        lines.append(f"Muls({dst}, {dst}, static_cast<{t}>(1.0f / tiling_.cols), rows);")
    return lines


def _broadcast(op: ir.Operation, names: Names, dst: str) -> list[str]:
    src = op.operands[0]
    x = names.expr[src]
    if names.cls[src] == "row":
        # The scalar unit reads what the vector unit wrote: it must wait for V (a real hazard).
        return ["SetFlag<HardEvent::V_S>(EVENT_ID0);", "WaitFlag<HardEvent::V_S>(EVENT_ID0);",
                f"for (int64_t r = 0; r < rows; ++r) {{",
                f"  Duplicate({dst}[r * {names.pitch}], {x}.GetValue(r), {names.pitch});", "}"]
    return [f"for (int64_t r = 0; r < rows; ++r) {{",
            f"  DataCopy({dst}[r * {names.pitch}], {x}, {names.pitch});", "}"]


def compute(ops: list[ir.Operation], names: Names) -> list[str]:
    lines = []
    for op in ops:
        if is_scalar_op(op):
            continue
        res = op.results[0]
        dst, t = names.expr[res], ctype(res.type)
        n = names.count[names.cls[res]]
        params = [v for v in op.operands if v in names.params]
        if op.name == "ascend.cast" and params and str(ir.RankedTensorType(res.type).element_type) != "i1":
            # A scalar parameter converted (x * lr in x's dtype): the scalar unit converts (static_cast
            # truncates toward zero and rounds to nearest as the Cast modes below), the vector unit fills.
            lines.append(f"Duplicate({dst}, static_cast<{t}>({names.scalar(params[0])}), {n});")
            continue
        if params and op.name not in ("ascend.binary", "ascend.compare", "ascend.select", "ascend.ternary"):
            raise CodegenError(f"ERR03007 GRAPH {op.name} of a scalar parameter has no AscendC vector lowering")
        if op.name == "ascend.binary":
            lines += _binary(op, names, dst, t, n)
        elif op.name == "ascend.unary":
            lines += _unary(op, names, dst, t, n)
        elif op.name == "ascend.compare":
            lines += _compare(op, names, dst, n)
        elif op.name == "ascend.select":
            lines += _select(op, names, dst, t, n)
        elif op.name == "ascend.ternary":
            lines += _ternary(op, names, dst, t, n)
        elif op.name == "ascend.cast":
            lines += _cast(op, names, dst, n)
        elif op.name == "ascend.reduce":
            lines += _reduce(op, names, dst, t)
        elif op.name == "ascend.broadcast":
            lines += _broadcast(op, names, dst)
        else:
            raise CodegenError(f"ERR03007 GRAPH {op.name} has no AscendC vector lowering")
    return lines


def _size_expr(b: Buffer, kind: str) -> str:
    if kind == "elementwise":
        return "tiling_.tile_elems"
    return {"full": "tiling_.tile_rows * tiling_.cols_aligned",
            "row": "(tiling_.tile_rows + tiling_.align_elems - 1) / tiling_.align_elems * tiling_.align_elems",
            "col": "tiling_.cols_aligned"}[b.shape_class]


def _gm_offset(b: Buffer, kind: str) -> tuple[str, str]:
    """(offset of this block's data, offset of tile `i` within it) in elements."""
    if kind == "elementwise":
        return "start", "i * tiling_.tile_elems"
    return {"full": ("start * tiling_.cols", "i * tiling_.tile_rows * tiling_.cols"),
            "row": ("start", "i * tiling_.tile_rows"), "col": ("0", "0")}[b.shape_class]


def _copy(b: Buffer, kind: str, local: str, gm: str, direction: str) -> str:
    if kind == "elementwise" or b.shape_class == "row":
        count = "n" if kind == "elementwise" else "rows"
        return f"Copy{direction}1D({local if direction == 'In' else gm}, {gm if direction == 'In' else local}, {count});"
    if b.shape_class == "col":
        args = (local, gm) if direction == "In" else (gm, local)
        return f"Copy{direction}1D({args[0]}, {args[1]}, tiling_.cols);"
    args = (local, gm) if direction == "In" else (gm, local)
    return f"CopyRows{direction}({args[0]}, {args[1]}, rows, tiling_.cols, tiling_.cols_aligned, tiling_.cols);"


def emit(kernel: ir.Operation, sig: KernelSignature, kind: str) -> str:
    if "col_tiles" in sig.tiling:
        from . import split_rows

        return split_rows.emit(kernel, sig)
    model = analyze(kernel)
    for b in model.buffers:
        if b.role in ("in", "out") and str(ir.RankedTensorType(b.value.type).element_type) == "i1":
            raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: bool tensors are bytes in GM but bit masks in UB; "
                               "a kernel with i1 inputs or outputs has no AscendC lowering")
    names = Names(sig, model.buffers)
    ins = [b for b in model.buffers if b.role == "in"]
    outs = [b for b in model.buffers if b.role == "out"]
    temps = [b for b in model.buffers if b.role == "tmp"]
    work = [b for b in model.buffers if b.role == "work"]
    slots = slots_of(kernel, model)
    compute_lines = compute(body_ops(kernel), names)

    members, init, copy_in, copy_out, deque, alloc, enque, free = [], [], [], [], [], [], [], []
    for b in ins + outs:
        name, t = names.expr[b.value], ctype(b.value.type)
        block_off, tile_off = _gm_offset(b, kind)
        que = "VECIN" if b.role == "in" else "VECOUT"
        members += [f"TQue<QuePosition::{que}, BUFFER_NUM> {name}Que;", f"GlobalTensor<{t}> {name}Gm;"]
        init += [f"{name}Gm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>({name}) + {block_off});",
                 f"pipe.InitBuffer({name}Que, BUFFER_NUM, ({_size_expr(b, kind)}) * sizeof({t}));"]
        if b.role == "in":
            copy_in += [f"LocalTensor<{t}> {name} = {name}Que.AllocTensor<{t}>();",
                        _copy(b, kind, name, f"{name}Gm[{tile_off}]", "In"), f"{name}Que.EnQue({name});"]
            deque.append(f"LocalTensor<{t}> {name} = {name}Que.DeQue<{t}>();")
            free.append(f"{name}Que.FreeTensor({name});")
        else:
            alloc.append(f"LocalTensor<{t}> {name} = {name}Que.AllocTensor<{t}>();")
            enque.append(f"{name}Que.EnQue({name});")
            copy_out += [f"LocalTensor<{t}> {name} = {name}Que.DeQue<{t}>();",
                         _copy(b, kind, name, f"{name}Gm[{tile_off}]", "Out"), f"{name}Que.FreeTensor({name});"]
    slot_size: dict[int, list[str]] = {}
    for b, slot in zip(temps, slots):
        slot_size.setdefault(slot, []).append(f"({_size_expr(b, kind)}) * sizeof({ctype(b.value.type)})")
        alloc.append(f"LocalTensor<{ctype(b.value.type)}> {names.expr[b.value]} = "
                     f"slot{slot}.Get<{ctype(b.value.type)}>();")
    for slot, sizes in sorted(slot_size.items()):
        members.append(f"TBuf<TPosition::VECCALC> slot{slot};")
        size = sizes[0] if len(sizes) == 1 else "std::max({" + ", ".join(f"int64_t({s})" for s in sizes) + "})"
        init.append(f"pipe.InitBuffer(slot{slot}, {size});")
    if work:
        widened = len(work) == 2  # kernel_model's bf16 rows: a float scratch and the widened row
        t = "float" if work[0].elem_bytes == 4 else "half"
        members.append("TBuf<TPosition::VECCALC> workBuf;")
        init.append(f"pipe.InitBuffer(workBuf, tiling_.cols_aligned * sizeof({t}));")
        alloc.insert(0, f"LocalTensor<{t}> work = workBuf.Get<{t}>();")
        alloc.insert(0, "// ReduceSum/ReduceMax scratch of the reduced dtype (float for a widened bf16 row)")
        if widened:
            # One float row plus the row's result, 32-byte aligned after it.
            members.append("TBuf<TPosition::VECCALC> widenBuf;")
            init.append("pipe.InitBuffer(widenBuf, (tiling_.cols_aligned + 8) * sizeof(float));")
            alloc.insert(0, "LocalTensor<float> widen = widenBuf.Get<float>();")

    if kind == "elementwise":
        span = ("blockLen_", "tiling_.block_elems", "tiling_.last_block_elems", "tiling_.tile_elems")
        stage_args, stage_params = "i, len", "int64_t i, int64_t n"
    else:
        span = ("blockLen_", "tiling_.block_rows", "tiling_.last_block_rows", "tiling_.tile_rows")
        stage_args, stage_params = "i, len", "int64_t i, int64_t rows"
    uses_n = any(", n);" in ln for ln in compute_lines)
    n_decl = ["const int64_t n = rows * tiling_.cols_aligned;"] if kind == "row" and uses_n else []

    def block(lines: list[str], indent: int) -> str:
        return "\n".join(" " * indent + ln for ln in lines)

    return f"""class Kernel_{sig.name} {{
 public:
  __aicore__ inline void Init({", ".join(f"GM_ADDR {p}" for p in sig.gm_params)}, const {sig.name}_TilingData& t) {{
    tiling_ = t;
    const int64_t start = GetBlockIdx() * {span[1]};
    {span[0]} = GetBlockIdx() == GetBlockNum() - 1 ? {span[2]} : {span[1]};
{block(init, 4)}
  }}
  __aicore__ inline void Process() {{
    const int64_t tiles = ({span[0]} + {span[3]} - 1) / {span[3]};
    for (int64_t i = 0; i < tiles; ++i) {{
      const int64_t len = {span[0]} - i * {span[3]} < {span[3]} ? {span[0]} - i * {span[3]} : {span[3]};
      CopyIn({stage_args});
      Compute({stage_args});
      CopyOut({stage_args});
    }}
  }}

 private:
  __aicore__ inline void CopyIn({stage_params}) {{
{block(copy_in, 4)}
  }}
  __aicore__ inline void Compute({stage_params}) {{
    (void)i;
{block(n_decl + deque + alloc + compute_lines + enque + free, 4)}
  }}
  __aicore__ inline void CopyOut({stage_params}) {{
{block(copy_out, 4)}
  }}

  TPipe pipe;
{block(members, 2)}
  {sig.name}_TilingData tiling_;
  int64_t {span[0]} = 0;
}};
"""
