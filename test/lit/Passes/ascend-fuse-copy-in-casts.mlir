// RUN: npu-opt %s --split-input-file --ascend-fuse | FileCheck %s

// The ND -> FRACTAL_NZ casts ascend-assign-formats puts on matmul operands run in the cube
// kernel (its copy-in converts GM ND -> L1 NZ): the kernel takes the ND tensors, no cast kernel.
// CHECK-LABEL: "ascend.kernel"
// CHECK: ^bb0(%[[A:.*]]: tensor<32x64xf16>, %[[B:.*]]: tensor<16x64xf16>):
// CHECK: %[[AN:.*]] = "ascend.format_cast"(%[[A]])
// CHECK: %[[BN:.*]] = "ascend.format_cast"(%[[B]])
// CHECK: "ascend.matmul"(%[[AN]], %[[BN]])
// CHECK: fusion = "matmul_epilogue", sym_name = "casts_in_copy_in_matmul_epilogue_0"
// CHECK-LABEL: func.func @casts_in_copy_in
// CHECK-NEXT: %[[R:.*]] = "ascend.launch"(%arg0, %arg1) {callee = @casts_in_copy_in_matmul_epilogue_0
// CHECK-NEXT: return %[[R]]
func.func @casts_in_copy_in(%a: tensor<32x64xf16>, %b: tensor<16x64xf16>) -> tensor<32x16xf16> {
  %an = "ascend.format_cast"(%a) : (tensor<32x64xf16>) -> tensor<32x64xf16, #ascend.format<"FRACTAL_NZ">>
  %bn = "ascend.format_cast"(%b) : (tensor<16x64xf16>) -> tensor<16x64xf16, #ascend.format<"FRACTAL_NZ">>
  %0 = "ascend.matmul"(%an, %bn) {transpose_a = false, transpose_b = true, acc_type = f32} : (tensor<32x64xf16, #ascend.format<"FRACTAL_NZ">>, tensor<16x64xf16, #ascend.format<"FRACTAL_NZ">>) -> tensor<32x16xf16>
  return %0 : tensor<32x16xf16>
}

// -----

// A weight two matmuls read (cse shares its cast): each cube kernel converts it in its own copy-in.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.format_cast"
// CHECK: "ascend.format_cast"
// CHECK: "ascend.matmul"
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.format_cast"
// CHECK: "ascend.format_cast"
// CHECK: "ascend.matmul"
// CHECK-LABEL: func.func @shared_weight_cast
// CHECK-NEXT: "ascend.launch"(%arg0, %arg2)
// CHECK-NEXT: "ascend.launch"(%arg1, %arg2)
// CHECK-NOT: "ascend.launch"
func.func @shared_weight_cast(%x: tensor<16x32xf16>, %y: tensor<16x32xf16>, %w: tensor<32x16xf16>) -> (tensor<16x16xf16>, tensor<16x16xf16>) {
  %xn = "ascend.format_cast"(%x) : (tensor<16x32xf16>) -> tensor<16x32xf16, #ascend.format<"FRACTAL_NZ">>
  %yn = "ascend.format_cast"(%y) : (tensor<16x32xf16>) -> tensor<16x32xf16, #ascend.format<"FRACTAL_NZ">>
  %wn = "ascend.format_cast"(%w) : (tensor<32x16xf16>) -> tensor<32x16xf16, #ascend.format<"FRACTAL_NZ">>
  %0 = "ascend.matmul"(%xn, %wn) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<16x32xf16, #ascend.format<"FRACTAL_NZ">>, tensor<32x16xf16, #ascend.format<"FRACTAL_NZ">>) -> tensor<16x16xf16>
  %1 = "ascend.matmul"(%yn, %wn) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<16x32xf16, #ascend.format<"FRACTAL_NZ">>, tensor<32x16xf16, #ascend.format<"FRACTAL_NZ">>) -> tensor<16x16xf16>
  return %0, %1 : tensor<16x16xf16>, tensor<16x16xf16>
}

// -----

// A cast whose NZ result leaves the function is a data conversion in GM: a kernel of its own.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.format_cast"
// CHECK: fusion = "single"
// CHECK-LABEL: func.func @returned_cast_is_a_kernel
// CHECK: "ascend.launch"(%arg0) {callee = @returned_cast_is_a_kernel_single_0
func.func @returned_cast_is_a_kernel(%a: tensor<32x32xf16>) -> tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">> {
  %0 = "ascend.format_cast"(%a) : (tensor<32x32xf16>) -> tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">>
  return %0 : tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">>
}

// -----

// Conv's NC1HWC0 input and FRACTAL_Z weight casts run in the conv kernel's copy-in, its result's
// cast back to ND in its copy-out, and the relu reading the ND result joins as its epilogue: one
// kernel taking and returning ND tensors.
// CHECK-LABEL: "ascend.kernel"
// CHECK: ^bb0(%[[X:.*]]: tensor<2x4x8x8xf32>, %[[W:.*]]: tensor<8x4x3x3xf32>):
// CHECK: %[[XN:.*]] = "ascend.format_cast"(%[[X]])
// CHECK: %[[WZ:.*]] = "ascend.format_cast"(%[[W]])
// CHECK: %[[C:.*]] = "ascend.conv2d"(%[[XN]], %[[WZ]])
// CHECK: %[[ND:.*]] = "ascend.format_cast"(%[[C]]) : (tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>) -> tensor<2x8x8x8xf32>
// CHECK: "ascend.unary"(%[[ND]]) {kind = "relu"}
// CHECK: fusion = "conv", sym_name = "conv_casts_in_copy_in_conv_0"
// CHECK-LABEL: func.func @conv_casts_in_copy_in
// CHECK-NEXT: %[[R:.*]] = "ascend.launch"(%arg0, %arg1) {callee = @conv_casts_in_copy_in_conv_0
// CHECK-NEXT: return %[[R]]
func.func @conv_casts_in_copy_in(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32> {
  %xn = "ascend.format_cast"(%x) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32, #ascend.format<"NC1HWC0">>
  %wz = "ascend.format_cast"(%w) : (tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32, #ascend.format<"FRACTAL_Z">>
  %c = "ascend.conv2d"(%xn, %wz) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32, #ascend.format<"NC1HWC0">>, tensor<8x4x3x3xf32, #ascend.format<"FRACTAL_Z">>) -> tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>
  %nd = "ascend.format_cast"(%c) : (tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>) -> tensor<2x8x8x8xf32>
  %r = "ascend.unary"(%nd) {kind = "relu"} : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %r : tensor<2x8x8x8xf32>
}

// -----

// A conv result read in NC1HWC0 by something else (here: returned as is) keeps its cast kernel.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.conv2d"
// CHECK-NOT: "ascend.format_cast"(%{{.*}}) : (tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>)
// CHECK: fusion = "conv"
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.format_cast"
// CHECK: fusion = "single"
// CHECK-LABEL: func.func @conv_result_used_twice
func.func @conv_result_used_twice(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>) {
  %xn = "ascend.format_cast"(%x) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32, #ascend.format<"NC1HWC0">>
  %wz = "ascend.format_cast"(%w) : (tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32, #ascend.format<"FRACTAL_Z">>
  %c = "ascend.conv2d"(%xn, %wz) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32, #ascend.format<"NC1HWC0">>, tensor<8x4x3x3xf32, #ascend.format<"FRACTAL_Z">>) -> tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>
  %nd = "ascend.format_cast"(%c) : (tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>) -> tensor<2x8x8x8xf32>
  return %nd, %c : tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32, #ascend.format<"NC1HWC0">>
}
