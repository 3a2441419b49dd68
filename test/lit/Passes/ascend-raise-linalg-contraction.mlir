// RUN: npu-opt %s --split-input-file --ascend-raise-linalg --canonicalize | FileCheck %s

// A linear on a [2, 8, 32] input after fusion by expansion: M = (d0, d1), N = d2, K = d3; the
// weight is read through its transpose (transpose_b) and the bias add runs in the matmul's shape.
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @linear_on_3d_input
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : tensor<2x8x32xf32> into tensor<16x32xf32>
// CHECK: %[[MM:.*]] = "ascend.matmul"(%[[X]], %arg0) {acc_type = f32, transpose_a = false, transpose_b = true} : (tensor<16x32xf32>, tensor<48x32xf32>) -> tensor<16x48xf32>
// CHECK: %[[B:.*]] = "ascend.broadcast"(%arg1) {dims = array<i64: 0>} : (tensor<48xf32>) -> tensor<16x48xf32>
// CHECK: %[[ADD:.*]] = "ascend.binary"(%[[MM]], %[[B]]) {kind = "add"} : (tensor<16x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
// CHECK-NOT: ascend.reduce
// CHECK-NOT: linalg.
// CHECK: return %[[ADD]]
func.func @linear_on_3d_input(%w: tensor<48x32xf32>, %bias: tensor<48xf32>, %x: tensor<2x8x32xf32>) -> tensor<16x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<32x48xf32>
  %wt = linalg.transpose ins(%w : tensor<48x32xf32>) outs(%e0 : tensor<32x48xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<2x8x48xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wt : tensor<2x8x32xf32>, tensor<32x48xf32>) outs(%init : tensor<2x8x48xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x48xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm, %bias : tensor<2x8x48xf32>, tensor<48xf32>) outs(%e1 : tensor<2x8x48xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.addf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<2x8x48xf32>
  %r = tensor.collapse_shape %y [[0, 1], [2]] : tensor<2x8x48xf32> into tensor<16x48xf32>
  return %r : tensor<16x48xf32>
}

// -----

// A bmm on 4-d operands (batch = (d0, d1)) is one batch_matmul over the collapsed batch.
#a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @bmm_on_4d
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
// CHECK: %[[MM:.*]] = "ascend.batch_matmul"(%[[A]], %[[B]]) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[R]]
func.func @bmm_on_4d(%x: tensor<2x4x8x16xf32>, %y: tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) outs(%init : tensor<2x4x8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Attention scores q @ k^T with k as [b, h, s, d]: B holds [N, K], so transpose_b.
#a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @attention_scores_q_kt
// CHECK: "ascend.batch_matmul"(%{{.*}}, %{{.*}}) {acc_type = f32, transpose_a = false, transpose_b = true} : (tensor<8x16x8xf32>, tensor<8x16x8xf32>) -> tensor<8x16x16xf32>
// CHECK-NOT: ascend.transpose
// CHECK-NOT: ascend.reduce
func.func @attention_scores_q_kt(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%init : tensor<2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// -----

// A weight gradient: K = (d2, d3) (batch and sequence) collapse into one reduced dim of the
// transposed A, M = d0 and N = d1.
#a = affine_map<(d0, d1, d2, d3) -> (d2, d3, d0)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @weight_grad_two_reduced_dims
// CHECK: %[[G:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2]] : tensor<4x8x24xf32> into tensor<32x24xf32>
// CHECK: "ascend.matmul"(%[[G]], %[[X]]) {acc_type = f32, transpose_a = true, transpose_b = false} : (tensor<32x16xf32>, tensor<32x24xf32>) -> tensor<16x24xf32>
func.func @weight_grad_two_reduced_dims(%g: tensor<4x8x16xf32>, %x: tensor<4x8x24xf32>) -> tensor<16x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x24xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%g, %x : tensor<4x8x16xf32>, tensor<4x8x24xf32>) outs(%init : tensor<16x24xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x24xf32>
  return %0 : tensor<16x24xf32>
}

// -----

// The result holds N before M: computed as B^T A^T, no transpose of the result.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @result_n_before_m
// CHECK: %[[MM:.*]] = "ascend.matmul"(%arg1, %arg0) {acc_type = f32, transpose_a = true, transpose_b = true} : (tensor<16x24xf32>, tensor<8x16xf32>) -> tensor<24x8xf32>
// CHECK-NOT: ascend.transpose
// CHECK: return %[[MM]]
func.func @result_n_before_m(%x: tensor<8x16xf32>, %y: tensor<16x24xf32>) -> tensor<24x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<24x8xf32>) -> tensor<24x8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<8x16xf32>, tensor<16x24xf32>) outs(%init : tensor<24x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<24x8xf32>
  return %0 : tensor<24x8xf32>
}

// -----

// M's dims come in the other order in A than in the result: one ascend.transpose puts A as
// [M, K], and a non-zero init is added after the product.
#a = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @operand_needs_a_transpose
// CHECK: %[[T:.*]] = "ascend.transpose"(%arg0) {permutation = array<i64: 1, 0, 2>} : (tensor<8x2x32xf32>) -> tensor<2x8x32xf32>
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2]] : tensor<2x8x32xf32> into tensor<16x32xf32>
// CHECK: %[[MM:.*]] = "ascend.matmul"(%[[A]], %arg1) {acc_type = f32, transpose_a = false, transpose_b = false}
// CHECK: %[[E:.*]] = tensor.expand_shape %[[MM]]
// CHECK: "ascend.binary"(%[[E]], %arg2) {kind = "add"} : (tensor<2x8x48xf32>, tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
func.func @operand_needs_a_transpose(%x: tensor<8x2x32xf32>, %w: tensor<32x48xf32>, %acc: tensor<2x8x48xf32>) -> tensor<2x8x48xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x2x32xf32>, tensor<32x48xf32>) outs(%acc : tensor<2x8x48xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x48xf32>
  return %0 : tensor<2x8x48xf32>
}

// -----

// A matrix-vector product broadcasts nothing: it stays a multiply and a sum on the vector unit.
#a = affine_map<(d0, d1) -> (d0, d1)>
#b = affine_map<(d0, d1) -> (d1)>
#c = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @matrix_vector_stays_a_reduction
// CHECK-NOT: ascend.matmul
// CHECK: "ascend.binary"(%arg0, %{{.*}}) {kind = "mul"} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: "ascend.reduce"
func.func @matrix_vector_stays_a_reduction(%x: tensor<8x16xf32>, %v: tensor<16xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction"]}
      ins(%x, %v : tensor<8x16xf32>, tensor<16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// probs @ v with the softmax normalisation fused into the contraction as a prologue: the division
// is computed once over [b, h, s, t] (not once per column of v) and the product goes to the cube.
#p = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0)>
#v = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @normalised_probs_times_v
// CHECK: %[[B:.*]] = "ascend.broadcast"(%arg1) {dims = array<i64: 3>} : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
// CHECK: %[[P:.*]] = "ascend.binary"(%arg0, %[[B]]) {kind = "div"} : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x16x16xf32> into tensor<8x16x16xf32>
// CHECK: "ascend.batch_matmul"(%[[A]], %{{.*}}) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<8x16x16xf32>, tensor<8x16x8xf32>) -> tensor<8x16x8xf32>
// CHECK-NOT: ascend.reduce
func.func @normalised_probs_times_v(%e: tensor<2x4x16x16xf32>, %sum: tensor<2x4x16x1xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %0 = linalg.generic {indexing_maps = [#p, #s, #v, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %sum, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x1xf32>, tensor<2x4x16x8xf32>) outs(%init : tensor<2x4x16x8xf32>) {
  ^bb0(%x: f32, %s: f32, %y: f32, %out: f32):
    %p = arith.divf %x, %s : f32
    %m = arith.mulf %p, %y : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}
