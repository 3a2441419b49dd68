// RUN: npu-opt %s --split-input-file --ascend-tile | npu-translate --split-input-file --emit-ascendc | FileCheck %s

// A transpose has no vector tiling: its AscendC runs the sim's own loops on the scalar unit,
// GlobalTensor::GetValue / SetValue at the strides of each side, on block 0 only.
// CHECK-LABEL: // ---- kernel @tr (tiling kind opaque)
// CHECK: // Runs on the scalar unit
// CHECK: class Kernel_tr {
// CHECK: __aicore__ inline void Init(GM_ADDR in0Addr, GM_ADDR out0Addr, const tr_TilingData& t) {
// CHECK: in0.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in0Addr));
// CHECK: out0.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out0Addr));
// CHECK: if (GetBlockIdx() != 0) return;
// CHECK: for (int64_t [[I:i[0-9]+]] = int64_t(0); [[I]] < int64_t(4);
// CHECK: for (int64_t [[J:i[0-9]+]] = int64_t(0); [[J]] < int64_t(8);
// CHECK: const float [[V:v[0-9]+]] = in0.GetValue([[J]] * 4 + [[I]]);
// CHECK: out0.SetValue([[I]] * 8 + [[J]], [[V]]);
// CHECK: GlobalTensor<float> in0;
"ascend.kernel"() ({
^bb0(%a: tensor<8x4xf32>):
  %0 = "ascend.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> ()
}) {sym_name = "tr", function_type = (tensor<8x4xf32>) -> tensor<4x8xf32>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// A math function in a scalar-unit kernel runs its vector instruction on one element of a UB
// scratch, between barriers (the scalar unit has no exp); bools are bytes in GM.
// CHECK-LABEL: // ---- kernel @exp_mask
// CHECK: pipe.InitBuffer(math_f32Buf, 64);
// CHECK: math_f32.SetValue(0, [[X:v[0-9]+]]);
// CHECK-NEXT: PipeBarrier<PIPE_ALL>();
// CHECK-NEXT: Exp(math_f32[8], math_f32, 1);
// CHECK-NEXT: PipeBarrier<PIPE_ALL>();
// CHECK-NEXT: const float [[E:v[0-9]+]] = math_f32.GetValue(8);
// CHECK: out0.SetValue({{.*}}, static_cast<uint8_t>(
"ascend.kernel"() ({
^bb0(%a: tensor<2x1x5xf32>, %b: tensor<2x3x5xf32>):
  %0 = "ascend.broadcast"(%a) {dims = array<i64: 1>} : (tensor<2x1x5xf32>) -> tensor<2x3x5xf32>
  %1 = "ascend.binary"(%0, %b) {kind = "add"} : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %2 = "ascend.unary"(%1) {kind = "exp"} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %3 = "ascend.compare"(%2, %b) {predicate = "gt"} : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xi1>
  "ascend.yield"(%3) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3x5xi1>) -> ()
}) {sym_name = "exp_mask", function_type = (tensor<2x1x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xi1>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// f64 math: no vector instruction takes double, so the scalar unit computes it with the
// double-arithmetic functions emitted once before the kernel (include guard); no UB scratch.
// CHECK-LABEL: // ---- kernel @exp_f64
// CHECK: #ifndef NPU_F64_MATH
// CHECK: __aicore__ inline double F64Exp(double x) {
// CHECK: __aicore__ inline double F64Pow(double a, double b) {
// CHECK: #endif  // NPU_F64_MATH
// CHECK: class Kernel_exp_f64 {
// CHECK-NOT: math_f32
// CHECK: const double [[X:v[0-9]+]] = in0.GetValue(
// CHECK: const double [[E:v[0-9]+]] = F64Exp([[X]]);
// CHECK: const double [[P:v[0-9]+]] = F64Pow([[E]], {{.*}});
"ascend.kernel"() ({
^bb0(%a: tensor<64xf64>, %b: tensor<64xf64>):
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<64xf64>) -> tensor<64xf64>
  %1 = "ascend.binary"(%0, %b) {kind = "pow"} : (tensor<64xf64>, tensor<64xf64>) -> tensor<64xf64>
  "ascend.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf64>) -> ()
}) {sym_name = "exp_f64", function_type = (tensor<64xf64>, tensor<64xf64>) -> tensor<64xf64>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// An intermediate UB cannot hold (the 66x1024 f32 padded tensor, 270 KB) lives in the kernel's GM
// workspace, the argument after its results.
// CHECK-LABEL: // ---- kernel @pad_in_workspace
// CHECK: __aicore__ inline void Init(GM_ADDR in0Addr, GM_ADDR out0Addr, GM_ADDR workspaceAddr,
// CHECK: [[T:tmp[0-9]+]].SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspaceAddr + 0));
// CHECK: GlobalTensor<float> [[T]];
// CHECK: void pad_in_workspace(GM_ADDR in0, GM_ADDR out0, GM_ADDR workspace, GM_ADDR tiling)
// CHECK: op.Init(in0, out0, workspace, t);
"ascend.kernel"() ({
^bb0(%a: tensor<64x1024xf32>):
  %cst = arith.constant 0.000000e+00 : f32
  %p = tensor.pad %a low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<64x1024xf32> to tensor<66x1024xf32>
  %s = tensor.extract_slice %p[0, 0] [33, 1024] [2, 1] : tensor<66x1024xf32> to tensor<33x1024xf32>
  "ascend.yield"(%s) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<33x1024xf32>) -> ()
}) {sym_name = "pad_in_workspace", function_type = (tensor<64x1024xf32>) -> tensor<33x1024xf32>, core_type = "aiv", fusion = "opaque", block_dim = 1, tiling = {}} : () -> ()
