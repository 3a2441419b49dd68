// RUN: npu-opt %s --split-input-file --verify-diagnostics

func.func @matmul_k_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error@+1 {{'ascend.matmul' op contraction dims differ: lhs K = 8, rhs K = 7}}
  %0 = "ascend.matmul"(%a, %b) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<4x8xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @matmul_transposed_k_mismatch(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{contraction dims differ: lhs K = 8, rhs K = 3}}
  %0 = "ascend.matmul"(%a, %b) {transpose_a = false, transpose_b = true, acc_type = f32} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_bad_bias(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %bias: tensor<4xf32>) {
  // expected-error@+1 {{bias shape [4] should be [3]}}
  %0 = "ascend.matmul"(%a, %b, %bias) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @matmul_missing_attr(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'ascend.matmul' op needs attribute 'acc_type'}}
  %0 = "ascend.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @batch_matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x3xf32>) {
  // expected-error@+1 {{batch dims differ: [2] vs [3]}}
  %0 = "ascend.batch_matmul"(%a, %b) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<2x4x8xf32>, tensor<3x8x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @reduce_dim_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{reduce dims [2] must be distinct and in range [0, 2) for a rank-2 input}}
  %0 = "ascend.reduce"(%x) {kind = "sum", dims = array<i64: 2>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_wrong_result(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{result shape [4] should be [4, 1]}}
  %0 = "ascend.reduce"(%x) {kind = "max", dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_unknown_kind(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{unknown kind 'median'; expected one of sum, max, min, prod, mean}}
  %0 = "ascend.reduce"(%x) {kind = "median", dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @format_cast_nc1hwc0_needs_rank_4(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{format NC1HWC0 needs a tensor of rank 4, got rank 2}}
  %0 = "ascend.format_cast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32, #ascend.format<"NC1HWC0">>
  return
}

// -----

func.func @format_cast_nz_needs_rank_2(%x: tensor<8xf16>) {
  // expected-error@+1 {{format FRACTAL_NZ needs a tensor of rank at least 2, got rank 1}}
  %0 = "ascend.format_cast"(%x) : (tensor<8xf16>) -> tensor<8xf16, #ascend.format<"FRACTAL_NZ">>
  return
}

// -----

func.func @format_cast_to_itself(%x: tensor<4x8xf16>) {
  // expected-error@+1 {{casts ND to itself}}
  %0 = "ascend.format_cast"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return
}

// -----

func.func @binary_shape_mismatch(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+1 {{operand shape [8, 4] differs from result shape [4, 8]}}
  %0 = "ascend.binary"(%a, %b) {kind = "add"} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @binary_only_scalars(%a: f32, %b: f32) {
  // expected-error@+1 {{needs at least one tensor operand}}
  %0 = "ascend.binary"(%a, %b) {kind = "add"} : (f32, f32) -> tensor<4xf32>
  return
}

// -----

func.func @unary_unknown_kind(%a: tensor<4xf32>) {
  // expected-error@+1 {{unknown kind 'cbrt'}}
  %0 = "ascend.unary"(%a) {kind = "cbrt"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @compare_result_not_i1(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{result must be a tensor of i1}}
  %0 = "ascend.compare"(%a, %b) {predicate = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @transpose_not_a_permutation(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{permutation [0, 0] is not a permutation of [0, 2)}}
  %0 = "ascend.transpose"(%a) {permutation = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_wrong_shape(%a: tensor<8xf32>) {
  // expected-error@+1 {{result shape [8, 4] without dims [0] is [4], not the input shape [8]}}
  %0 = "ascend.broadcast"(%a) {dims = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @broadcast_stretch_of_non_unit_dim(%a: tensor<4x2xf32>) {
  // expected-error@+1 {{dims [1] must be size-1 dims of the input [4, 2] to stretch}}
  %0 = "ascend.broadcast"(%a) {dims = array<i64: 1>} : (tensor<4x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{input channels 3 and weight [4, 3, 3, 3] do not split into 2 groups}}
  %0 = "ascend.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1, 1>, groups = 2} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_output_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{result shape [1, 4, 8, 8] should be [1, 4, 6, 6]}}
  %0 = "ascend.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1, 1>, groups = 1} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

// expected-error@+1 {{unknown core_type 'gpu'; expected one of aiv, aic, mix}}
"ascend.kernel"() ({
^bb0(%x: tensor<4xf32>):
  "ascend.yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
}) {sym_name = "k", function_type = (tensor<4xf32>) -> tensor<4xf32>, core_type = "gpu", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// expected-error@+1 {{yielded types differ from function_type results}}
"ascend.kernel"() ({
^bb0(%x: tensor<4xf32>):
  "ascend.yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
}) {sym_name = "k", function_type = (tensor<4xf32>) -> tensor<8xf32>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

func.func @kernel_uses_value_from_above(%y: tensor<4xf32>) {
  // expected-note@+1 {{required by region isolation constraints}}
  "ascend.kernel"() ({
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{using value defined outside the region}}
    %0 = "ascend.binary"(%x, %y) {kind = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
  }) {sym_name = "k", function_type = (tensor<4xf32>) -> tensor<4xf32>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {}} : () -> ()
  return
}

// -----

func.func @launch_unknown_kernel(%x: tensor<4xf32>) {
  // expected-error@+1 {{calls @nope, which is not an ascend.kernel in this module}}
  %0 = "ascend.launch"(%x) {callee = @nope, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

"ascend.kernel"() ({
^bb0(%x: tensor<4xf32>):
  "ascend.yield"(%x) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
}) {sym_name = "k", function_type = (tensor<4xf32>) -> tensor<4xf32>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

func.func @launch_wrong_types(%x: tensor<8xf32>) {
  // expected-error@+1 {{operand types differ from the inputs of @k}}
  %0 = "ascend.launch"(%x) {callee = @k, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @alloc_too_big() {
  // expected-error@+1 {{2 x 131072 bytes exceed the 196608-byte ub}}
  %0 = "ascend.alloc"() {space = #ascend.memspace<"ub">, bytes = 131072, depth = 2} : () -> memref<32768xf32, #ascend.memspace<"ub">>
  return
}

// -----

func.func @alloc_misaligned() {
  // expected-error@+1 {{100 bytes is not a multiple of the 512-byte l0a alignment}}
  %0 = "ascend.alloc"() {space = #ascend.memspace<"l0a">, bytes = 100, depth = 1} : () -> memref<25xf32, #ascend.memspace<"l0a">>
  return
}

// -----

func.func @copy_in_wrong_space(%a: memref<16xf32, #ascend.memspace<"ub">>, %b: memref<16xf32, #ascend.memspace<"ub">>) {
  // expected-error@+1 {{src is in memory space ub; expected gm}}
  "ascend.copy_in"(%a, %b) : (memref<16xf32, #ascend.memspace<"ub">>, memref<16xf32, #ascend.memspace<"ub">>) -> ()
  return
}

// -----

func.func @mmad_shapes(%a: memref<16x32xf16, #ascend.memspace<"l0a">>, %b: memref<16x16xf16, #ascend.memspace<"l0b">>, %c: memref<16x16xf32, #ascend.memspace<"l0c">>) {
  // expected-error@+1 {{tile shapes [16, 32] x [16, 16] -> [16, 16] do not form a matrix product}}
  "ascend.mmad"(%a, %b, %c) {init = true} : (memref<16x32xf16, #ascend.memspace<"l0a">>, memref<16x16xf16, #ascend.memspace<"l0b">>, memref<16x16xf32, #ascend.memspace<"l0c">>) -> ()
  return
}

// -----

func.func @bad_pipe() {
  // expected-error@+1 {{unknown src_pipe 'GPU'}}
  "ascend.set_flag"() {src_pipe = "GPU", dst_pipe = "V", event_id = 0} : () -> ()
  return
}

// -----

func.func @yield_outside_kernel() {
  // expected-error@+1 {{must be the terminator of an ascend.kernel}}
  "ascend.yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
}
