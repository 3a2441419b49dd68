// RUN: npu-opt %s --split-input-file --ascend-assign-formats | FileCheck %s
// RUN: npu-opt %s --split-input-file --ascend-assign-formats=cube-nz=false | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @matmul_operands_to_nz
// CHECK: %[[A:.*]] = "ascend.format_cast"(%arg0) : (tensor<32x64xf16>) -> tensor<32x64xf16, #ascend.format<"FRACTAL_NZ">>
// CHECK: %[[B:.*]] = "ascend.format_cast"(%arg1) : (tensor<16x64xf16>) -> tensor<16x64xf16, #ascend.format<"FRACTAL_NZ">>
// CHECK: "ascend.matmul"(%[[A]], %[[B]]) {{.*}} : (tensor<32x64xf16, #ascend.format<"FRACTAL_NZ">>, tensor<16x64xf16, #ascend.format<"FRACTAL_NZ">>) -> tensor<32x16xf16>
// OFF-LABEL: func.func @matmul_operands_to_nz
// OFF-NOT: format_cast
func.func @matmul_operands_to_nz(%a: tensor<32x64xf16>, %b: tensor<16x64xf16>) -> tensor<32x16xf16> {
  %0 = "ascend.matmul"(%a, %b) {transpose_a = false, transpose_b = true, acc_type = f32} : (tensor<32x64xf16>, tensor<16x64xf16>) -> tensor<32x16xf16>
  return %0 : tensor<32x16xf16>
}

// -----

// A constant weight is laid out at compile time: the cast folds into the constant.
// OFF-LABEL: func.func @constant_weight_folds
// CHECK-LABEL: func.func @constant_weight_folds
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<4x2xf32, #ascend.format<"FRACTAL_NZ">>
// CHECK-NOT: "ascend.format_cast"(%cst
// CHECK: "ascend.matmul"(%{{.*}}, %[[W]])
func.func @constant_weight_folds(%a: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %0 = "ascend.matmul"(%a, %w) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// f64 has no cube fractal: the format cannot apply and the matmul is left alone.
// CHECK-LABEL: func.func @f64_has_no_fractal
// CHECK-NOT: format_cast
// CHECK: "ascend.matmul"(%arg0, %arg1)
func.func @f64_has_no_fractal(%a: tensor<4x8xf64>, %b: tensor<8x3xf64>) -> tensor<4x3xf64> {
  %0 = "ascend.matmul"(%a, %b) {transpose_a = false, transpose_b = false, acc_type = f64} : (tensor<4x8xf64>, tensor<8x3xf64>) -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// -----

// Two convs in a row: the NC1HWC0 -> ND -> NC1HWC0 pair between them cancels.
// CHECK-LABEL: func.func @conv_chain_cancels_inverse_casts
// CHECK: %[[X:.*]] = "ascend.format_cast"(%arg0) : (tensor<1x16x8x8xf16>) -> tensor<1x16x8x8xf16, #ascend.format<"NC1HWC0">>
// CHECK: %[[W:.*]] = "ascend.format_cast"(%arg1) : (tensor<16x16x3x3xf16>) -> tensor<16x16x3x3xf16, #ascend.format<"FRACTAL_Z">>
// CHECK: %[[C1:.*]] = "ascend.conv2d"(%[[X]], %[[W]]) {{.*}} -> tensor<1x16x8x8xf16, #ascend.format<"NC1HWC0">>
// CHECK: %[[C2:.*]] = "ascend.conv2d"(%[[C1]], %{{.*}}) {{.*}} -> tensor<1x16x8x8xf16, #ascend.format<"NC1HWC0">>
// CHECK: %[[OUT:.*]] = "ascend.format_cast"(%[[C2]]) : (tensor<1x16x8x8xf16, #ascend.format<"NC1HWC0">>) -> tensor<1x16x8x8xf16>
// CHECK: return %[[OUT]]
func.func @conv_chain_cancels_inverse_casts(%x: tensor<1x16x8x8xf16>, %w: tensor<16x16x3x3xf16>) -> tensor<1x16x8x8xf16> {
  %0 = "ascend.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1} : (tensor<1x16x8x8xf16>, tensor<16x16x3x3xf16>) -> tensor<1x16x8x8xf16>
  %1 = "ascend.conv2d"(%0, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1} : (tensor<1x16x8x8xf16>, tensor<16x16x3x3xf16>) -> tensor<1x16x8x8xf16>
  return %1 : tensor<1x16x8x8xf16>
}

// -----

// Hand-written chains collapse: ND -> NZ -> ND is the identity, ND -> NC1HWC0 -> FRACTAL_Z one cast.
// CHECK-LABEL: func.func @cast_chains
// CHECK-NEXT: %[[C:.*]] = "ascend.format_cast"(%arg0) : (tensor<16x16x3x3xf16>) -> tensor<16x16x3x3xf16, #ascend.format<"FRACTAL_Z">>
// CHECK-NEXT: return %arg1, %[[C]]
func.func @cast_chains(%x: tensor<16x16x3x3xf16>, %m: tensor<32x32xf16>) -> (tensor<32x32xf16>, tensor<16x16x3x3xf16, #ascend.format<"FRACTAL_Z">>) {
  %0 = "ascend.format_cast"(%m) : (tensor<32x32xf16>) -> tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">>
  %1 = "ascend.format_cast"(%0) : (tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">>) -> tensor<32x32xf16>
  %2 = "ascend.format_cast"(%x) : (tensor<16x16x3x3xf16>) -> tensor<16x16x3x3xf16, #ascend.format<"NC1HWC0">>
  %3 = "ascend.format_cast"(%2) : (tensor<16x16x3x3xf16, #ascend.format<"NC1HWC0">>) -> tensor<16x16x3x3xf16, #ascend.format<"FRACTAL_Z">>
  return %1, %3 : tensor<32x32xf16>, tensor<16x16x3x3xf16, #ascend.format<"FRACTAL_Z">>
}
