// RUN: npu-opt %s --split-input-file --ascend-read-stored-formats | FileCheck %s

// The traced prologue rebuilding a [24, 20] weight from its NZ storage [2, 2, 16, 16] goes away:
// the argument is the NZ tensor and the matmul reads it as stored.
// CHECK-LABEL: func.func @nz_weight_read_as_stored
// CHECK-SAME: (%arg0: tensor<40x24xf16>, %arg1: tensor<24x20xf16, #ascend.format<"FRACTAL_NZ">>)
// CHECK-NOT: ascend.transpose
// CHECK-NOT: tensor.extract_slice
// CHECK: "ascend.matmul"(%arg0, %arg1)
func.func @nz_weight_read_as_stored(%x: tensor<40x24xf16>, %w: tensor<2x2x16x16xf16>) -> tensor<40x20xf32> {
  %0 = "ascend.transpose"(%w) {permutation = array<i64: 1, 2, 0, 3>} : (tensor<2x2x16x16xf16>) -> tensor<2x16x2x16xf16>
  %1 = tensor.collapse_shape %0 [[0, 1], [2, 3]] : tensor<2x16x2x16xf16> into tensor<32x32xf16>
  %2 = tensor.extract_slice %1[0, 0] [24, 32] [1, 1] : tensor<32x32xf16> to tensor<24x32xf16>
  %3 = tensor.extract_slice %2[0, 0] [24, 20] [1, 1] : tensor<24x32xf16> to tensor<24x20xf16>
  %4 = "ascend.matmul"(%x, %3) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<40x24xf16>, tensor<24x20xf16>) -> tensor<40x20xf32>
  return %4 : tensor<40x20xf32>
}

// -----

// A vector op reads the logical weight too: it needs the ND tensor, so the prologue stays.
// CHECK-LABEL: func.func @also_read_by_a_vector_op
// CHECK-SAME: %arg1: tensor<2x2x16x16xf16>
// CHECK: "ascend.transpose"(%arg1)
func.func @also_read_by_a_vector_op(%x: tensor<40x24xf16>, %w: tensor<2x2x16x16xf16>) -> (tensor<40x20xf32>, tensor<24x20xf16>) {
  %0 = "ascend.transpose"(%w) {permutation = array<i64: 1, 2, 0, 3>} : (tensor<2x2x16x16xf16>) -> tensor<2x16x2x16xf16>
  %1 = tensor.collapse_shape %0 [[0, 1], [2, 3]] : tensor<2x16x2x16xf16> into tensor<32x32xf16>
  %2 = tensor.extract_slice %1[0, 0] [24, 20] [1, 1] : tensor<32x32xf16> to tensor<24x20xf16>
  %3 = "ascend.matmul"(%x, %2) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<40x24xf16>, tensor<24x20xf16>) -> tensor<40x20xf32>
  %4 = "ascend.unary"(%2) {kind = "exp"} : (tensor<24x20xf16>) -> tensor<24x20xf16>
  return %3, %4 : tensor<40x20xf32>, tensor<24x20xf16>
}

// -----

// A slice that keeps less than the fractals' worth of rows is not the NZ layout of its result.
// CHECK-LABEL: func.func @not_an_nz_unpacking
// CHECK: "ascend.transpose"(%arg1)
func.func @not_an_nz_unpacking(%x: tensor<40x8xf16>, %w: tensor<2x2x16x16xf16>) -> tensor<40x20xf32> {
  %0 = "ascend.transpose"(%w) {permutation = array<i64: 1, 2, 0, 3>} : (tensor<2x2x16x16xf16>) -> tensor<2x16x2x16xf16>
  %1 = tensor.collapse_shape %0 [[0, 1], [2, 3]] : tensor<2x16x2x16xf16> into tensor<32x32xf16>
  %2 = tensor.extract_slice %1[0, 0] [8, 20] [1, 1] : tensor<32x32xf16> to tensor<8x20xf16>
  %3 = "ascend.matmul"(%x, %2) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<40x8xf16>, tensor<8x20xf16>) -> tensor<40x20xf32>
  return %3 : tensor<40x20xf32>
}
