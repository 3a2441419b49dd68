// RUN: npu-opt %s --split-input-file --ascend-tile --ascend-plan-memory | npu-translate --split-input-file --emit-ascendc | FileCheck %s
// RUN: not npu-translate %S/Inputs/untranslatable.mlir --split-input-file --emit-ascendc 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: npu-opt %s --split-input-file --ascend-tile --ascend-lower-tiles | not npu-translate --split-input-file --emit-ascendc 2>&1 | FileCheck %s --check-prefix=LOWERED

// CHECK: #include "kernel_operator.h"
// CHECK: constexpr int32_t BUFFER_NUM = 2;

// Elementwise: the tiling struct carries the record; one VECIN/VECOUT queue per tensor,
// temporaries in VECCALC slots; CopyIn / Compute / CopyOut per tile.
// CHECK-LABEL: // ---- kernel @chain (tiling kind elementwise)
// CHECK: struct chain_TilingData {
// CHECK:   int64_t tile_elems;
// CHECK: class Kernel_chain {
// CHECK:   pipe.InitBuffer(in0Que, BUFFER_NUM, (tiling_.tile_elems) * sizeof(half));
// CHECK:   pipe.InitBuffer(slot0, (tiling_.tile_elems) * sizeof(half));
// CHECK:   CopyIn(i, len);
// CHECK-NEXT: Compute(i, len);
// CHECK-NEXT: CopyOut(i, len);
// CHECK: CopyIn1D(in0, in0Gm[i * tiling_.tile_elems], n);
// CHECK: in0Que.EnQue(in0);
// CHECK: LocalTensor<half> in0 = in0Que.DeQue<half>();
// CHECK: Exp(t0, in0, n);
// CHECK: Muls(out0, t0, static_cast<half>(0.5), n);
// CHECK: TQue<QuePosition::VECIN, BUFFER_NUM> in0Que;
// CHECK: TBuf<TPosition::VECCALC> slot0;
// CHECK: extern "C" __global__ __aicore__ void chain(GM_ADDR in0, GM_ADDR out0, GM_ADDR tiling) {
// CHECK:   Kernel_chain op;
"ascend.kernel"() ({
^bb0(%a: tensor<4096xf16>):
  %c = arith.constant 0.5 : f16
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<4096xf16>) -> tensor<4096xf16>
  %1 = "ascend.binary"(%0, %c) {kind = "mul"} : (tensor<4096xf16>, f16) -> tensor<4096xf16>
  "ascend.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4096xf16>) -> ()
}) {sym_name = "chain", function_type = (tensor<4096xf16>) -> tensor<4096xf16>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// Row reduction: whole rows at a padded pitch, ReduceSum per row into the row-output queue.
// CHECK-LABEL: // ---- kernel @rowsum (tiling kind row)
// CHECK: CopyRowsIn(in0, in0Gm[i * tiling_.tile_rows * tiling_.cols], rows, tiling_.cols, tiling_.cols_aligned, tiling_.cols);
// CHECK: ReduceSum(out0[r], in0[r * tiling_.cols_aligned], work, tiling_.cols);
// CHECK: CopyOut1D(out0Gm[i * tiling_.tile_rows], out0, rows);
"ascend.kernel"() ({
^bb0(%a: tensor<77x300xf32>):
  %0 = "ascend.reduce"(%a) {kind = "sum", dims = array<i64: 1>, keepdim = false} : (tensor<77x300xf32>) -> tensor<77xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<77xf32>) -> ()
}) {sym_name = "rowsum", function_type = (tensor<77x300xf32>) -> tensor<77xf32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()

// -----

// Cube: GM -> L1 in NZ (Nd2NzParams), LoadData into L0A (zZ, plain) and L0B (nZ: a [k, n] B is
// transposed per fractal), Mmad into L0C, Fixpipe to GM as fp16; an AIC-only kernel.
// CHECK-LABEL: // ---- kernel @mm (tiling kind matmul)
// CHECK: KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
// CHECK: pipe.InitBuffer(a1Que, BUFFER_NUM, m16 * k16 * sizeof(half));
// CHECK: DataCopy(a1, aGm[{{.*}}],
// CHECK-NEXT: Nd2NzParams(
// CHECK: LoadData(a2[mi * k1 * FRAC], a1, LoadData2DParams(static_cast<uint16_t>(mi), static_cast<uint8_t>(k1),
// CHECK: LoadData(b2[ki * n1 * FRAC], b1, LoadData2DParams(static_cast<uint16_t>(ki), static_cast<uint8_t>(n1),
// CHECK-NEXT: static_cast<uint16_t>(kb16), 0, 0, true, 0));
// CHECK: Mmad(c, a2, b2, MmadParams(
// CHECK: p.quantPre = QuantMode_t::F322F16;
// CHECK: Fixpipe(cGm[
// CHECK: TQue<QuePosition::CO1, 1> c1Que;
// CHECK: extern "C" __global__ __aicore__ void mm(GM_ADDR in0, GM_ADDR in1, GM_ADDR out0, GM_ADDR tiling) {
"ascend.kernel"() ({
^bb0(%a: tensor<256x64xf16>, %b: tensor<64x128xf16>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<256x128xf16>) -> ()
}) {sym_name = "mm", function_type = (tensor<256x64xf16>, tensor<64x128xf16>) -> tensor<256x128xf16>, core_type = "aic", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// Mix kernel: the f32 -> f16 cast folds into Fixpipe; bias add + relu run per output tile on the
// group's two AIVs (half of the rows each) after the AIC signals (CrossCoreSetFlag / CrossCoreWaitFlag);
// B is stored [n, k], which is L0B's nZ already: no fractal transpose.
// CHECK-LABEL: // ---- kernel @linear_relu (tiling kind matmul)
// CHECK: int64_t epilogue_rows;
// CHECK: KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
// CHECK: if ASCEND_IS_AIV {
// CHECK: pipe.InitBuffer(accBuf, tiling_.epilogue_rows * tiling_.epilogue_pitch * sizeof(half));
// CHECK: pipe.InitBuffer(in2Buf, tiling_.epilogue_pitch * sizeof(half));
// CHECK: if ASCEND_IS_AIC {
// CHECK: CrossCoreWaitFlag<2, PIPE_FIX>(1);
// CHECK: if ASCEND_IS_AIV {
// CHECK-NEXT: Epilogue(bt * tiling_.m + tm * tiling_.base_m, tn * tiling_.base_n, mLen, nLen);
// CHECK: DataCopy(b1, bGm[bt * k * n + tn * tiling_.base_n * k + kt * tiling_.base_k],
// CHECK: LoadData(b2[ki * n1 * FRAC], b1, LoadData2DParams(static_cast<uint16_t>(ki * n1), static_cast<uint8_t>(n1), 1,
// CHECK-NEXT: 0, 0, false, 0));
// CHECK: p.quantPre = QuantMode_t::F322F16;
// CHECK: CrossCoreSetFlag<0x2, PIPE_FIX>(0);
// CHECK: __aicore__ inline void Epilogue(int64_t row0, int64_t n0, int64_t mLen, int64_t nLen) {
// CHECK:   CrossCoreWaitFlag(0);
// CHECK:   CopyRowsIn(acc, cGm[at], rows, nLen, pitch, tiling_.n);
// CHECK:   CopyIn1D(in2, in2Gm[n0], nLen);
// CHECK:   DataCopy(e0[r * pitch], in2, pitch);
// CHECK:   Add(e1, acc, e0, n);
// CHECK:   Relu(e2, e1, n);
// CHECK:   CopyRowsOut(cGm[at], e2, rows, nLen, pitch, tiling_.n);
// CHECK:   CrossCoreSetFlag<2, PIPE_MTE3>(1);
"ascend.kernel"() ({
^bb0(%x: tensor<64x48xf16>, %w: tensor<40x48xf16>, %bias: tensor<40xf16>):
  %0 = "ascend.matmul"(%x, %w) {acc_type = f32, transpose_a = false, transpose_b = true} : (tensor<64x48xf16>, tensor<40x48xf16>) -> tensor<64x40xf32>
  %1 = "ascend.cast"(%0) : (tensor<64x40xf32>) -> tensor<64x40xf16>
  %2 = "ascend.broadcast"(%bias) {dims = array<i64: 0>} : (tensor<40xf16>) -> tensor<64x40xf16>
  %3 = "ascend.binary"(%1, %2) {kind = "add"} : (tensor<64x40xf16>, tensor<64x40xf16>) -> tensor<64x40xf16>
  %4 = "ascend.unary"(%3) {kind = "relu"} : (tensor<64x40xf16>) -> tensor<64x40xf16>
  "ascend.yield"(%4) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x40xf16>) -> ()
}) {sym_name = "linear_relu", function_type = (tensor<64x48xf16>, tensor<40x48xf16>, tensor<40xf16>) -> tensor<64x40xf16>, core_type = "mix", fusion = "matmul_epilogue", block_dim = 1, tiling = {}} : () -> ()

// -----

// A scalar parameter (0-d f64 argument) is a tiling-struct field like a scalar argument: double
// on the host side, narrowed by the kernel's scalar cast; it has no GM tensor.
// CHECK-LABEL: // ---- kernel @scaled (tiling kind elementwise)
// CHECK: struct scaled_TilingData {
// CHECK:   double scalar0;
// CHECK: __aicore__ inline void Init(GM_ADDR in0, GM_ADDR out0, const scaled_TilingData& t) {
// CHECK: Muls({{.*}}, static_cast<float>(static_cast<float>(tiling_.scalar0)), n);
"ascend.kernel"() ({
^bb0(%a: tensor<32x64xf32>, %alpha: tensor<f64>):
  %s = tensor.extract %alpha[] : tensor<f64>
  %f = arith.truncf %s : f64 to f32
  %0 = "ascend.binary"(%a, %f) {kind = "mul"} : (tensor<32x64xf32>, f32) -> tensor<32x64xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x64xf32>) -> ()
}) {sym_name = "scaled", function_type = (tensor<32x64xf32>, tensor<f64>) -> tensor<32x64xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// Two scalar parameters combined (a product of two 0-d i64 arguments, then cast and added to a
// 0-d tensor): the scalar unit computes the product and the vector unit fills the tile with it;
// no vector instruction takes two scalars.
// CHECK-LABEL: // ---- kernel @scalar_product (tiling kind elementwise)
// CHECK: Duplicate(t{{[0-9]+}}, static_cast<int64_t>(static_cast<int64_t>(tiling_.scalar0) * static_cast<int64_t>(tiling_.scalar1)), n);
// CHECK-NOT: Mul(t{{[0-9]+}}, tiling_
"ascend.kernel"() ({
^bb0(%a: tensor<i64>, %b: tensor<i64>, %x: tensor<f32>):
  %0 = "ascend.binary"(%a, %b) {kind = "mul"} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %1 = "ascend.cast"(%0) : (tensor<i64>) -> tensor<f32>
  %2 = "ascend.binary"(%x, %1) {kind = "add"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "ascend.yield"(%2) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>) -> ()
}) {sym_name = "scalar_product", function_type = (tensor<i64>, tensor<i64>, tensor<f32>) -> tensor<f32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// A scalar parameter cast to the tensor's dtype (x + lr in x's dtype) is converted on the scalar
// unit and Duplicated into the tile: Cast takes a LocalTensor, not the tiling struct's field.
// CHECK-LABEL: // ---- kernel @cast_param (tiling kind elementwise)
// CHECK: Duplicate(t{{[0-9]+}}, static_cast<float>(tiling_.scalar0), n);
// CHECK-NOT: Cast(t{{[0-9]+}}, tiling_
"ascend.kernel"() ({
^bb0(%s: tensor<f64>, %x: tensor<f32>):
  %0 = "ascend.cast"(%s) : (tensor<f64>) -> tensor<f32>
  %1 = "ascend.binary"(%x, %0) {kind = "add"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "ascend.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>) -> ()
}) {sym_name = "cast_param", function_type = (tensor<f64>, tensor<f32>) -> tensor<f32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// A select on a 0-d condition has no vector mask to read (the condition is a tiling field): the
// kernel runs on the scalar unit, which picks per element.
// CHECK-LABEL: // ---- kernel @select_param (tiling kind elementwise)
// CHECK: // Runs on the scalar unit
// CHECK: tiling_.scalar0 ? v{{[0-9]+}} : tiling_.scalar2;
// CHECK-NOT: ReinterpretCast
"ascend.kernel"() ({
^bb0(%c: tensor<i1>, %x: tensor<f32>, %y: tensor<f32>):
  %0 = "ascend.unary"(%x) {kind = "exp"} : (tensor<f32>) -> tensor<f32>
  %1 = "ascend.select"(%c, %0, %y) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  "ascend.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>) -> ()
}) {sym_name = "select_param", function_type = (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// max / min of two scalars is a conditional expression on the scalar unit (it raised KeyError).
// CHECK-LABEL: // ---- kernel @max_param (tiling kind elementwise)
// CHECK: Duplicate(out0, static_cast<float>(static_cast<float>(tiling_.scalar0) > static_cast<float>(0.0) ? static_cast<float>(tiling_.scalar0) : static_cast<float>(0.0)), n);
"ascend.kernel"() ({
^bb0(%x: tensor<f32>):
  %cst = arith.constant 0.0 : f32
  %0 = "ascend.binary"(%x, %cst) {kind = "max"} : (tensor<f32>, f32) -> tensor<f32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>) -> ()
}) {sym_name = "max_param", function_type = (tensor<f32>) -> tensor<f32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// ERR: untranslatable.mlir:4:1: error: ERR03003 GRAPH kernel has no tiling record; run ascend-tile before emitting
// ERR: untranslatable.mlir:14:1: error: ERR03007 GRAPH kernel @tr has no AscendC lowering (ascend.transpose has no vector tiling; on the scalar unit: element type f8E4M3FN has no scalar-unit AscendC type)
// ERR: untranslatable.mlir:23:1: error: ERR03007 GRAPH kernel @abs_f8 has no AscendC lowering (element type f8E4M3FN has no AscendC type; cast to f32/f16/bf16/i32 first; on the scalar unit: element type f8E4M3FN has no scalar-unit AscendC type)
// LOWERED: error: ERR03007 GRAPH kernel @chain is already lowered to tile-level ops; emit AscendC from the ascend-tile / ascend-plan-memory output

// -----

// A row too long for UB (70000 f32) is split across column tiles: each tile is copied in and
// reduced, the row's accumulator folds the partial results, and its one element goes out after the
// row's last tile.
// CHECK-LABEL: // ---- kernel @long_rows (tiling kind row)
// CHECK: // A row split across 5 UB tiles
// CHECK: const int64_t len = c == tiling_.col_tiles - 1 ? tiling_.tail_col_tile : tiling_.col_tile;
// CHECK: CopyIn1D(in0, in0Gm[r * tiling_.cols + c * tiling_.col_tile], len);
// CHECK: ReduceSum(out0, in0, work_f32, len);
// CHECK: ReduceSum(part_f32, in0, work_f32, len);
// CHECK-NEXT: Add(out0, out0, part_f32, 1);
// CHECK: CopyOut1D(out0Gm[r], out0, 1);
"ascend.kernel"() ({
^bb0(%a: tensor<3x70000xf32>):
  %0 = "ascend.reduce"(%a) {dims = array<i64: 1>, keepdim = false, kind = "sum"} : (tensor<3x70000xf32>) -> tensor<3xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3xf32>) -> ()
}) {sym_name = "long_rows", function_type = (tensor<3x70000xf32>) -> tensor<3xf32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()
