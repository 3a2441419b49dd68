"""Vector AscendC for a row reduction whose row is split across UB tiles (ascend-tile's col_tiles).

A row too long for UB is reduced in two levels: each column tile of `col_tile` elements (the last
one `tail_col_tile`) is copied in, its elementwise prologue computed, and reduced into a partial
result that the row's accumulator folds in (ReduceSum / ReduceMax / ReduceMin, then Add / Max /
Min of one element); after the row's last tile the row-shaped epilogue runs on the accumulators
and each result's element is copied out. Inputs are double-buffered TQues (the copy of tile c+1
overlaps the compute of tile c); accumulators and temporaries are TBufs of their own, since a row
value lives across every tile of its row.

Covered: analysis/split_rows.py's kernels (the ones ascend-lower-tiles gives a two-level tile
program too); the others stay on the scalar unit.
"""

from __future__ import annotations

from torch_mlir import ir

from .emit import CodegenError, KernelSignature, ctype
from .vector import _REDUCE, Names, compute
from ...analysis.kernel_model import analyze, body_ops, is_scalar_op
from ...analysis.split_rows import FOLD, split_row_refusal

def emit(kernel: ir.Operation, sig: KernelSignature) -> str:
    model = analyze(kernel)
    why = split_row_refusal(kernel, model)
    if why is not None:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: a row split across UB tiles with {why} has no "
                           "vector lowering yet")
    names = Names(sig, model.buffers)
    names.count = {"full": "len", "row": "1"}
    ins = [b for b in model.buffers if b.role == "in"]
    kept = [b for b in model.buffers if b.role in ("out", "tmp")]
    members, init, copy_in, deque, free, tile_lines, finish, copy_out = [], [], [], [], [], [], [], []
    for b in ins:
        name, t = names.expr[b.value], ctype(b.value.type)
        members += [f"TQue<QuePosition::VECIN, BUFFER_NUM> {name}Que;", f"GlobalTensor<{t}> {name}Gm;"]
        init += [f"{name}Gm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>({name}) + start * tiling_.cols);",
                 f"pipe.InitBuffer({name}Que, BUFFER_NUM, tiling_.col_tile * sizeof({t}));"]
        copy_in += [f"LocalTensor<{t}> {name} = {name}Que.AllocTensor<{t}>();",
                    f"CopyIn1D({name}, {name}Gm[r * tiling_.cols + c * tiling_.col_tile], len);",
                    f"{name}Que.EnQue({name});"]
        deque.append(f"LocalTensor<{t}> {name} = {name}Que.DeQue<{t}>();")
        free.append(f"{name}Que.FreeTensor({name});")
    for b in kept:
        name, t = names.expr[b.value], ctype(b.value.type)
        size = "32" if b.shape_class == "row" else f"tiling_.col_tile * sizeof({t})"
        members += [f"TBuf<TPosition::VECCALC> {name}Buf;", f"LocalTensor<{t}> {name};"]
        init += [f"pipe.InitBuffer({name}Buf, {size});", f"this->{name} = {name}Buf.Get<{t}>();"]
        if b.role == "out":
            members.append(f"GlobalTensor<{t}> {name}Gm;")
            init.append(f"{name}Gm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>({name}) + start);")
            copy_out.append(f"CopyOut1D({name}Gm[r], {name}, 1);")
    reduced = {ctype(op.operands[0].type) for op in body_ops(kernel) if op.name == "ascend.reduce"}
    for t in sorted(reduced):  # ReduceSum's scratch and one tile's partial result, per reduced dtype
        tag = "f32" if t == "float" else "f16"
        members += [f"TBuf<TPosition::VECCALC> work_{tag}Buf;", f"TBuf<TPosition::VECCALC> part_{tag}Buf;"]
        init += [f"pipe.InitBuffer(work_{tag}Buf, tiling_.col_tile * sizeof({t}));",
                 f"pipe.InitBuffer(part_{tag}Buf, 32);"]
        deque += [f"LocalTensor<{t}> work_{tag} = work_{tag}Buf.Get<{t}>();",
                  f"LocalTensor<{t}> part_{tag} = part_{tag}Buf.Get<{t}>();"]
    for op in body_ops(kernel):
        if is_scalar_op(op):
            continue
        if op.name == "ascend.reduce":
            kind, t = ir.StringAttr(op.attributes["kind"]).value, ctype(op.operands[0].type)
            tag, acc, src = "f32" if t == "float" else "f16", names.expr[op.results[0]], names.expr[op.operands[0]]
            tile_lines += [f"if (c == 0) {{",
                           f"  {_REDUCE[kind]}({acc}, {src}, work_{tag}, len);",
                           "} else {",
                           f"  {_REDUCE[kind]}(part_{tag}, {src}, work_{tag}, len);",
                           f"  {FOLD[kind]}({acc}, {acc}, part_{tag}, 1);",
                           "}"]
            if kind == "mean":
                finish.append(f"Muls({acc}, {acc}, static_cast<{t}>(1.0f / tiling_.cols), 1);")
        elif names.cls.get(op.results[0]) == "full":
            tile_lines += compute([op], names)
        else:
            finish += compute([op], names)

    def block(lines: list[str], indent: int) -> str:
        return "\n".join(" " * indent + ln for ln in lines)

    return f"""// A row split across {sig.tiling['col_tiles']} UB tiles: each tile reduced, the row's accumulator folds it in.
class Kernel_{sig.name} {{
 public:
  __aicore__ inline void Init({", ".join(f"GM_ADDR {p}" for p in sig.gm_params)}, const {sig.name}_TilingData& t) {{
    tiling_ = t;
    const int64_t start = GetBlockIdx() * tiling_.block_rows;
    rows_ = GetBlockIdx() == GetBlockNum() - 1 ? tiling_.last_block_rows : tiling_.block_rows;
{block(init, 4)}
  }}
  __aicore__ inline void Process() {{
    for (int64_t r = 0; r < rows_; ++r) {{
      for (int64_t c = 0; c < tiling_.col_tiles; ++c) {{
        const int64_t len = c == tiling_.col_tiles - 1 ? tiling_.tail_col_tile : tiling_.col_tile;
        CopyIn(r, c, len);
        Compute(c, len);
      }}
      Finish(r);
    }}
  }}

 private:
  __aicore__ inline void CopyIn(int64_t r, int64_t c, int64_t len) {{
{block(copy_in, 4)}
  }}
  __aicore__ inline void Compute(int64_t c, int64_t len) {{
{block(deque + tile_lines + free, 4)}
  }}
  __aicore__ inline void Finish(int64_t r) {{
{block(finish, 4)}
    // The row's results leave UB (MTE3) after the vector unit wrote them, and the next row's first
    // tile overwrites them only after they left.
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
{block(copy_out, 4)}
    SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
  }}

  TPipe pipe;
{block(members, 2)}
  {sig.name}_TilingData tiling_;
  int64_t rows_ = 0;
}};
"""
