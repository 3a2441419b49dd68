// RUN: npu-opt %s --split-input-file --ascend-fuse | FileCheck %s
// RUN: npu-opt %s --split-input-file --ascend-fuse=max-ops=1 | FileCheck %s --check-prefix=ONE
// RUN: npu-opt %s --split-input-file --pass-pipeline='builtin.module(ascend-fuse{epilogue=false})' | FileCheck %s --check-prefix=NOEPI

// An elementwise chain becomes one vector kernel; the scalar constant is cloned into the body,
// the runtime scalar %s becomes a kernel argument.
// CHECK-LABEL: "ascend.kernel"
// CHECK: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>, %[[S:.*]]: f32):
// CHECK: %[[TWO:.*]] = arith.constant 2.0
// CHECK: %[[X:.*]] = "ascend.binary"(%[[A]], %[[B]]) {kind = "add"}
// CHECK: %[[Y:.*]] = "ascend.binary"(%[[X]], %[[TWO]]) {kind = "mul"}
// CHECK: %[[Z:.*]] = "ascend.binary"(%[[Y]], %[[S]]) {kind = "sub"}
// CHECK: "ascend.yield"(%[[Z]])
// CHECK: core_type = "aiv", {{.*}}fusion = "elementwise", sym_name = "chain_elementwise_0"
// CHECK-LABEL: func.func @chain
// CHECK: %[[R:.*]] = "ascend.launch"(%arg0, %arg1, %arg2) {callee = @chain_elementwise_0
// CHECK-NEXT: return %[[R]]
// ONE-LABEL: func.func @chain
// ONE-COUNT-3: "ascend.launch"
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf32> {
  %two = arith.constant 2.0 : f32
  %0 = "ascend.binary"(%a, %b) {kind = "add"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ascend.binary"(%0, %two) {kind = "mul"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
  %2 = "ascend.binary"(%1, %s) {kind = "sub"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A matmul takes its elementwise consumers as an epilogue (a mix kernel); without epilogue
// fusion the cube kernel stands alone.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.matmul"
// CHECK-NEXT: "ascend.binary"({{.*}}) {kind = "add"}
// CHECK-NEXT: "ascend.unary"({{.*}}) {kind = "gelu"}
// CHECK-NEXT: "ascend.yield"
// CHECK: core_type = "mix", {{.*}}fusion = "matmul_epilogue"
// CHECK-LABEL: func.func @linear_gelu
// CHECK-COUNT-1: "ascend.launch"
// CHECK-NOT: "ascend.launch"
// NOEPI-LABEL: "ascend.kernel"
// NOEPI: "ascend.matmul"
// NOEPI-NEXT: "ascend.yield"
// NOEPI: core_type = "aic", {{.*}}fusion = "matmul_epilogue"
// NOEPI: fusion = "elementwise"
// NOEPI-LABEL: func.func @linear_gelu
// NOEPI-COUNT-2: "ascend.launch"
func.func @linear_gelu(%x: tensor<16x32xf16>, %w: tensor<64x32xf16>, %b: tensor<16x64xf16>) -> tensor<16x64xf16> {
  %0 = "ascend.matmul"(%x, %w) {transpose_a = false, transpose_b = true, acc_type = f32} : (tensor<16x32xf16>, tensor<64x32xf16>) -> tensor<16x64xf16>
  %1 = "ascend.binary"(%0, %b) {kind = "add"} : (tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<16x64xf16>
  %2 = "ascend.unary"(%1) {kind = "gelu"} : (tensor<16x64xf16>) -> tensor<16x64xf16>
  return %2 : tensor<16x64xf16>
}

// -----

// Softmax: both reductions, the broadcasts and the elementwise ops share one row kernel.
// CHECK-LABEL: "ascend.kernel"
// CHECK-COUNT-2: "ascend.reduce"
// CHECK: fusion = "reduction"
// CHECK-LABEL: func.func @softmax
// CHECK-COUNT-1: "ascend.launch"
// CHECK-NOT: "ascend.launch"
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = "ascend.reduce"(%x) {kind = "max", dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %mb = "ascend.broadcast"(%m) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %d = "ascend.binary"(%x, %mb) {kind = "sub"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "ascend.unary"(%d) {kind = "exp"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "ascend.reduce"(%e) {kind = "sum", dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %sb = "ascend.broadcast"(%s) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %r = "ascend.binary"(%e, %sb) {kind = "div"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Ops the dialect does not know stay in the host function, and a reduction over other dims
// than the group's does not join it.
// CHECK-LABEL: func.func @unknown_ops_stay_on_host
// CHECK: %[[L:.*]] = "ascend.launch"(%arg0) {callee = @unknown_ops_stay_on_host_elementwise_0
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[L]]
// CHECK: "ascend.launch"(%[[C]]) {callee = @unknown_ops_stay_on_host_reduction_1
func.func @unknown_ops_stay_on_host(%x: tensor<4x8xf32>) -> tensor<f32> {
  %e = "ascend.unary"(%x) {kind = "exp"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = tensor.collapse_shape %e [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %s = "ascend.reduce"(%c) {kind = "sum", dims = array<i64: 0>, keepdim = false} : (tensor<32xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// %t is computed outside the group (a transpose is a kernel of its own) from the group's result
// and feeds it again: joining would make the kernel wait for itself, so the add starts a new one.
// CHECK-LABEL: func.func @no_cycle_through_outside_op
// CHECK: %[[K0:.*]] = "ascend.launch"(%arg0) {callee = @no_cycle_through_outside_op_elementwise_0
// CHECK: %[[T:.*]] = "ascend.launch"(%[[K0]]) {callee = @no_cycle_through_outside_op_single_1
// CHECK: "ascend.launch"(%[[K0]], %[[T]]) {callee = @no_cycle_through_outside_op_elementwise_2
func.func @no_cycle_through_outside_op(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = "ascend.unary"(%x) {kind = "abs"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = "ascend.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = "ascend.binary"(%a, %t) {kind = "add"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// The row sums and the normalised rows both leave the group: outputs of two types cannot share
// one ascend.yield, so the trailing ops move to a second kernel that reads the sums.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.reduce"
// CHECK-NEXT: "ascend.yield"({{.*}}) {{.*}}: (tensor<4x1xf32>) -> ()
// CHECK: "ascend.kernel"
// CHECK: "ascend.broadcast"
// CHECK-NEXT: "ascend.binary"
// CHECK-NEXT: "ascend.yield"({{.*}}) {{.*}}: (tensor<4x8xf32>) -> ()
// CHECK-LABEL: func.func @outputs_of_two_types
// CHECK: %[[S:.*]] = "ascend.launch"(%arg0)
// CHECK: %[[R:.*]] = "ascend.launch"(%[[S]], %arg0)
// CHECK: return %[[S]], %[[R]]
func.func @outputs_of_two_types(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %s = "ascend.reduce"(%x) {kind = "sum", dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %sb = "ascend.broadcast"(%s) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %r = "ascend.binary"(%x, %sb) {kind = "div"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s, %r : tensor<4x1xf32>, tensor<4x8xf32>
}

// -----

// A bias broadcast waits for its consumer and runs inside the matmul kernel.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.matmul"
// CHECK-NEXT: "ascend.broadcast"
// CHECK-NEXT: "ascend.binary"
// CHECK: fusion = "matmul_epilogue"
// CHECK-LABEL: func.func @bias_broadcast_joins_epilogue
// CHECK-COUNT-1: "ascend.launch"
// CHECK-NOT: "ascend.launch"
func.func @bias_broadcast_joins_epilogue(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %0 = "ascend.matmul"(%x, %w) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = "ascend.broadcast"(%b) {dims = array<i64: 0>} : (tensor<64xf32>) -> tensor<16x64xf32>
  %2 = "ascend.binary"(%0, %1) {kind = "add"} : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
}

// -----

// A per-batch row [b, 1, n] broadcast over a batch_matmul's rows is no epilogue operand the tiling
// can hold ('full' or an [n] 'col'): the op reading it starts a vector kernel (which claims the
// broadcast) instead of failing ascend-tile for the whole call.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.batch_matmul"
// CHECK-NOT: "ascend.broadcast"
// CHECK: fusion = "matmul_epilogue"
// CHECK: "ascend.broadcast"
// CHECK-NEXT: "ascend.binary"
// CHECK: fusion = "elementwise"
// CHECK-LABEL: func.func @batch_row_broadcast_leaves_epilogue
// CHECK-COUNT-2: "ascend.launch"
// CHECK-NOT: "ascend.launch"
func.func @batch_row_broadcast_leaves_epilogue(%x: tensor<2x16x32xf32>, %w: tensor<2x32x64xf32>, %r: tensor<2x1x64xf32>) -> tensor<2x16x64xf32> {
  %0 = "ascend.batch_matmul"(%x, %w) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<2x16x32xf32>, tensor<2x32x64xf32>) -> tensor<2x16x64xf32>
  %1 = "ascend.broadcast"(%r) {dims = array<i64: 1>} : (tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  %2 = "ascend.binary"(%0, %1) {kind = "sub"} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %2 : tensor<2x16x64xf32>
}

// -----

// Layer norm's mean branch and variance branch start from the same input independently; the op
// that combines them merges both groups into one kernel.
// CHECK-LABEL: "ascend.kernel"
// CHECK-COUNT-2: "ascend.reduce"
// CHECK: fusion = "reduction"
// CHECK-LABEL: func.func @independent_branches_merge
// CHECK-COUNT-1: "ascend.launch"
// CHECK-NOT: "ascend.launch"
func.func @independent_branches_merge(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "ascend.reduce"(%x) {kind = "sum", dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %sb = "ascend.broadcast"(%s) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = "ascend.binary"(%x, %x) {kind = "mul"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = "ascend.reduce"(%sq) {kind = "sum", dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %qb = "ascend.broadcast"(%q) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %r = "ascend.binary"(%sb, %qb) {kind = "div"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A scalar computed from a 0-d tensor (tensor.extract of a scalar parameter, then its cast)
// moves into the kernel with its reader: the 0-d tensor is the kernel argument and the host
// function is left with the launch alone.
// CHECK-LABEL: "ascend.kernel"
// CHECK: ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[P:.*]]: tensor<i64>):
// CHECK: %[[S:.*]] = tensor.extract %[[P]][] : tensor<i64>
// CHECK: %[[F:.*]] = arith.sitofp %[[S]] : i64 to f32
// CHECK: "ascend.binary"(%[[X]], %[[F]]) {kind = "mul"}
// CHECK-LABEL: func.func @scalar_parameter_moves_into_the_kernel
// CHECK-NEXT: %[[R:.*]] = "ascend.launch"(%arg0, %arg1) {callee = @scalar_parameter_moves_into_the_kernel_elementwise_0
// CHECK-NEXT: return %[[R]]
func.func @scalar_parameter_moves_into_the_kernel(%x: tensor<4x8xf32>, %alpha: tensor<i64>) -> tensor<4x8xf32> {
  %s = tensor.extract %alpha[] : tensor<i64>
  %f = arith.sitofp %s : i64 to f32
  %0 = "ascend.binary"(%x, %f) {kind = "mul"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A tensor constant that is no splat (a table torch-mlir folded) is written by an opaque copy
// kernel, which clones it in, and the vector kernel reads that buffer: an ascend kernel takes
// tensors as arguments, and no launch may read a constant of the host function.
// CHECK-LABEL: "ascend.kernel"
// CHECK: arith.constant dense<[1.000000e+00, -2.000000e+00, 3.000000e+00, 5.000000e-01]> : tensor<4xf32>
// CHECK: linalg.copy
// CHECK: fusion = "opaque", sym_name = "constant_table_opaque_0"
// CHECK-LABEL: "ascend.kernel"
// CHECK: fusion = "elementwise", sym_name = "constant_table_elementwise_1"
// CHECK-LABEL: func.func @constant_table
// CHECK-NOT: arith.constant
// CHECK: %[[T:.*]] = "ascend.launch"() {callee = @constant_table_opaque_0
// CHECK: "ascend.launch"(%[[T]], %arg0) {callee = @constant_table_elementwise_1
func.func @constant_table(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %c = arith.constant dense<[1.0, -2.0, 3.0, 0.5]> : tensor<4xf32>
  %0 = "ascend.broadcast"(%c) {dims = array<i64: 0>} : (tensor<4xf32>) -> tensor<8x4xf32>
  %1 = "ascend.binary"(%x, %0) {kind = "mul"} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
