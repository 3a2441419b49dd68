// RUN: npu-opt %s --split-input-file --ascend-raise-linalg | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @fused_chain_with_broadcast_and_relu
// CHECK: %[[B:.*]] = "ascend.broadcast"(%arg1) {dims = array<i64: 0>} : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[ADD:.*]] = "ascend.binary"(%arg0, %[[B]]) {kind = "add"}
// CHECK: %[[MUL:.*]] = "ascend.binary"(%[[ADD]], %{{.*}}) {kind = "mul"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
// CHECK: %[[R:.*]] = "ascend.unary"(%[[MUL]]) {kind = "relu"}
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @fused_chain_with_broadcast_and_relu(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.mulf %s, %two : f32
    %c = arith.cmpf ugt, %m, %zero : f32
    %r = arith.select %c, %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reduction_with_prologue
// CHECK: %[[E:.*]] = "ascend.unary"(%arg0) {kind = "exp"}
// CHECK: "ascend.reduce"(%[[E]]) {dims = array<i64: 1>, keepdim = false, kind = "sum"} : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NOT: linalg
func.func @reduction_with_prologue(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %ex = math.exp %x : f32
    %s = arith.addf %ex, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @max_keepdim_then_unit_dim_broadcast
// CHECK: %[[M:.*]] = "ascend.reduce"(%arg0) {dims = array<i64: 1>, keepdim = true, kind = "max"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[B:.*]] = "ascend.broadcast"(%[[M]]) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: "ascend.binary"(%arg0, %[[B]]) {kind = "sub"}
func.func @max_keepdim_then_unit_dim_broadcast(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<4x1xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %m = linalg.generic {indexing_maps = [#map, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%init : tensor<4x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #keep, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a, %m : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @reduction_into_live_accumulator
// CHECK: %[[R:.*]] = "ascend.reduce"(%arg0) {dims = array<i64: 0>, keepdim = false, kind = "sum"} : (tensor<16xf32>) -> tensor<f32>
// CHECK: "ascend.binary"(%[[R]], %arg1) {kind = "add"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
func.func @reduction_into_live_accumulator(%a: tensor<16xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %0 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction"]}
      ins(%a : tensor<16xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @linear_folds_weight_transpose
// CHECK: "ascend.matmul"(%arg0, %arg1) {acc_type = f32, transpose_a = false, transpose_b = true} : (tensor<4x8xf16>, tensor<3x8xf16>) -> tensor<4x3xf16>
// CHECK-NOT: linalg.matmul
func.func @linear_folds_weight_transpose(%x: tensor<4x8xf16>, %w: tensor<3x8xf16>) -> tensor<4x3xf16> {
  %zero = arith.constant 0.0 : f16
  %e0 = tensor.empty() : tensor<8x3xf16>
  %wt = linalg.transpose ins(%w : tensor<3x8xf16>) outs(%e0 : tensor<8x3xf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<4x3xf16>
  %init = linalg.fill ins(%zero : f16) outs(%e : tensor<4x3xf16>) -> tensor<4x3xf16>
  %0 = linalg.matmul ins(%x, %wt : tensor<4x8xf16>, tensor<8x3xf16>) outs(%init : tensor<4x3xf16>) -> tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
}

// -----

// CHECK-LABEL: func.func @batch_matmul
// CHECK: "ascend.batch_matmul"(%arg0, %arg1) {acc_type = f32, transpose_a = false, transpose_b = false}
func.func @batch_matmul(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>) -> tensor<2x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%init : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @conv_folds_pad_and_bias
// CHECK: "ascend.conv2d"(%arg0, %arg1, %arg2) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
// CHECK-NOT: tensor.pad
func.func @conv_folds_pad_and_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %cst = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %bias = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<1x4x8x8xf32>) dimensions = [0, 2, 3]
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%bias : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
// A body reading a column number cast to an integer (a fused torch.arange): the numbers are a constant.
// CHECK-LABEL: func.func @column_numbers_become_a_constant
// CHECK: %[[COLS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
// CHECK: %[[B:.*]] = "ascend.broadcast"(%[[COLS]]) {dims = array<i64: 0>} : (tensor<8xi64>) -> tensor<4x8xi64>
// CHECK: %[[F:.*]] = "ascend.cast"(%[[B]]) : (tensor<4x8xi64>) -> tensor<4x8xf32>
// CHECK: "ascend.binary"(%arg0, %[[F]]) {kind = "add"}
// CHECK-NOT: linalg.generic
func.func @column_numbers_become_a_constant(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %s = arith.addf %x, %f : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @transposed_matmul_variant_is_untouched
// CHECK: linalg.matmul
// CHECK-NOT: ascend.matmul
func.func @transposed_matmul_variant_is_untouched(%a: tensor<8x4xf32>, %b: tensor<8x3xf32>, %c: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<8x4xf32>, tensor<8x3xf32>) outs(%c : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
// An argmax-style body (the accumulator is read twice) is not a plain reduction.
// CHECK-LABEL: func.func @accumulator_used_twice_is_untouched
// CHECK: linalg.generic
// CHECK-NOT: ascend.reduce
func.func @accumulator_used_twice_is_untouched(%a: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %c = arith.cmpf ogt, %x, %acc : f32
    %s = arith.select %c, %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @permuted_input_and_scalar_only_ops
// CHECK-DAG: %[[S:.*]] = arith.mulf %arg1, %arg1 : f32
// CHECK-DAG: %[[T:.*]] = "ascend.transpose"(%arg0) {permutation = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
// CHECK: "ascend.binary"(%[[T]], %[[S]]) {kind = "add"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
func.func @permuted_input_and_scalar_only_ops(%a: tensor<8x4xf32>, %s: f32) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#t, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sq = arith.mulf %s, %s : f32
    %r = arith.addf %x, %sq : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#moved = affine_map<(d0, d1) -> (0, d0)>
// A unit dim that is not in place: collapse it away, then broadcast.
// CHECK-LABEL: func.func @unit_dim_out_of_place
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: %[[B:.*]] = "ascend.broadcast"(%[[C]]) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x8xf32>
// CHECK: "ascend.binary"(%arg0, %[[B]]) {kind = "mul"}
func.func @unit_dim_out_of_place(%a: tensor<4x8xf32>, %b: tensor<1x4xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #moved, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<1x4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red3 = affine_map<(d0, d1, d2) -> (d0, d1)>
// torch-mlir reduces [R, 1, C] to [R, 1] for softmax: reduce [R, C] with keepdim instead.
// CHECK-LABEL: func.func @reduction_through_unit_expand
// CHECK: "ascend.reduce"(%arg0) {dims = array<i64: 1>, keepdim = true, kind = "max"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
func.func @reduction_through_unit_expand(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x1xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  %x = tensor.expand_shape %a [[0, 1], [2]] output_shape [4, 1, 8] : tensor<4x8xf32> into tensor<4x1x8xf32>
  %0 = linalg.generic {indexing_maps = [#map3, #red3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x1x8xf32>) outs(%init : tensor<4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// A 0-d operand (an eager scalar parameter such as add's alpha) is read once as a scalar: the
// cast of its value stays scalar arith and the binary op takes the scalar, so no f64 or i64
// tensor of the iteration shape appears.
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @scalar_parameter_is_read_as_a_scalar
// CHECK: %[[S:.*]] = tensor.extract %arg1[] : tensor<f64>
// CHECK: %[[F:.*]] = arith.truncf %[[S]] : f64 to f32
// CHECK: "ascend.binary"(%arg0, %[[F]]) {kind = "mul"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
// CHECK-NOT: ascend.broadcast
// CHECK-NOT: linalg.generic
func.func @scalar_parameter_is_read_as_a_scalar(%x: tensor<4x8xf32>, %alpha: tensor<f64>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %alpha : tensor<4x8xf32>, tensor<f64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f64, %o: f32):
    %t = arith.truncf %s : f64 to f32
    %m = arith.mulf %a, %t : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// torch-mlir guards reciprocal with `cf.assert %x != 0, "unimplemented: tensor with zero
// element"`; torch gives inf there, so the guard is dropped and the division raises.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @assert_in_the_body_is_dropped
// CHECK: "ascend.binary"(%{{.*}}, %arg0) {kind = "div"}
// CHECK-NOT: cf.assert
// CHECK-NOT: linalg.generic
func.func @assert_in_the_body_is_dropped(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %ne = arith.cmpf one, %a, %zero : f32
    cf.assert %ne, "unimplemented: tensor with zero element"
    %r = arith.divf %one, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// sign's select between two 0-d constants: both values become scalars, the mask is the tensor.
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @select_between_two_scalars
// CHECK: "ascend.select"(%arg0, %{{.*}}, %{{.*}}) : (tensor<4x8xi1>, f32, f32) -> tensor<4x8xf32>
func.func @select_between_two_scalars(%c: tensor<4x8xi1>) -> tensor<4x8xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #scalar, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %one, %zero : tensor<4x8xi1>, tensor<f32>, tensor<f32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%m: i1, %t: f32, %f: f32, %o: f32):
    %r = arith.select %m, %t, %f : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A one-element operand read at constant 0 (addmm's bias of shape [1]) is a scalar too.
#id = affine_map<(d0, d1) -> (d0, d1)>
#first = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @one_element_operand_is_a_scalar
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg1 [] : tensor<1xf32> into tensor<f32>
// CHECK: %[[S:.*]] = tensor.extract %[[C]][] : tensor<f32>
// CHECK: "ascend.binary"(%arg0, %[[S]]) {kind = "add"} : (tensor<2x3xf32>, f32) -> tensor<2x3xf32>
// CHECK-NOT: ascend.broadcast
func.func @one_element_operand_is_a_scalar(%x: tensor<2x3xf32>, %b: tensor<1xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %0 = linalg.generic {indexing_maps = [#id, #first, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<2x3xf32>, tensor<1xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Math ops with a 1:1 ascend kind raise like the others (log1p, atan2, C's fmod as rem).
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @more_math_kinds
// CHECK: "ascend.unary"(%arg0) {kind = "log1p"}
// CHECK: "ascend.binary"(%{{.*}}, %arg1) {kind = "atan2"}
// CHECK: "ascend.binary"(%{{.*}}, %arg1) {kind = "rem"}
// CHECK-NOT: linalg.generic
func.func @more_math_kinds(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %l = math.log1p %a : f32
    %t = math.atan2 %l, %b : f32
    %r = arith.remf %t, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A transpose that only moves unit dims (torch's einsum permutes them) is a reshape: host views,
// no transpose kernel.
// CHECK-LABEL: func.func @transpose_of_unit_dims_is_a_reshape
// CHECK-NOT: ascend.transpose
// CHECK: %[[F:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<3x5x1x4xf32> into tensor<3x5x4xf32>
// CHECK: tensor.expand_shape %[[F]] {{\[\[}}0], [1], [2, 3]] output_shape [3, 5, 4, 1] : tensor<3x5x4xf32> into tensor<3x5x4x1xf32>
func.func @transpose_of_unit_dims_is_a_reshape(%x: tensor<3x5x1x4xf32>) -> tensor<3x5x4x1xf32> {
  %e = tensor.empty() : tensor<3x5x4x1xf32>
  %t = linalg.transpose ins(%x : tensor<3x5x1x4xf32>) outs(%e : tensor<3x5x4x1xf32>) permutation = [0, 1, 3, 2]
  return %t : tensor<3x5x4x1xf32>
}

// -----

// index_select / embedding as torch-mlir leaves them (decompositions/masked.py): each index compared
// with every row number (a torch.arange fused in as linalg.index) and the matching rows summed. The
// row numbers become a constant broadcast over the domain, so the reduction is raised.
#idx = affine_map<(d0, d1, d2) -> (d0)>
#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @rows_by_comparison
// CHECK: %[[ROWS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6]> : tensor<7xi64>
// CHECK: %[[I:.*]] = "ascend.broadcast"(%arg0) {dims = array<i64: 1, 2>} : (tensor<5xi64>) -> tensor<5x4x7xi64>
// CHECK: %[[R:.*]] = "ascend.broadcast"(%[[ROWS]]) {dims = array<i64: 0, 1>} : (tensor<7xi64>) -> tensor<5x4x7xi64>
// CHECK: %[[EQ:.*]] = "ascend.compare"(%[[I]], %[[R]]) {predicate = "eq"}
// CHECK: %[[S:.*]] = "ascend.select"(%[[EQ]],
// CHECK: "ascend.reduce"(%[[S]]) {dims = array<i64: 2>, keepdim = false, kind = "sum"}
// CHECK-NOT: linalg.generic
func.func @rows_by_comparison(%i: tensor<5xi64>, %w: tensor<7x4xf32>) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
  %0 = linalg.generic {indexing_maps = [#idx, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%i, %w : tensor<5xi64>, tensor<7x4xf32>) outs(%f : tensor<5x4xf32>) {
  ^bb0(%x: i64, %y: f32, %o: f32):
    %r = linalg.index 2 : index
    %c = arith.index_cast %r : index to i64
    %eq = arith.cmpi eq, %x, %c : i64
    %s = arith.select %eq, %y, %zero : f32
    %a = arith.addf %o, %s : f32
    linalg.yield %a : f32
  } -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

// A row number used as an index (not cast to an integer) stays in the generic.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @position_as_index
// CHECK: linalg.generic
func.func @position_as_index(%a: tensor<6xf32>) -> tensor<6xf32> {
  %e = tensor.empty() : tensor<6xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_castui %r : index to i64
    %f = arith.uitofp %c : i64 to f32
    %s = arith.addf %x, %f : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
// An index bounds check (split-index-checks' generic of asserts alone) must fail the kernel: its
// generic is not raised, so the asserts stay; only torch-mlir's zero-element guard is dropped.
// CHECK-LABEL: func.func @bounds_check_stays
// CHECK: linalg.generic
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
func.func @bounds_check_stays(%i: tensor<2xi64>) {
  %c4 = arith.constant 4 : index
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} ins(%i : tensor<2xi64>) {
  ^bb0(%in: i64):
    %0 = arith.index_cast %in : i64 to index
    %1 = arith.cmpi slt, %0, %c4 : index
    cf.assert %1, "index must be smaller than dim size"
    linalg.yield
  }
  return
}
