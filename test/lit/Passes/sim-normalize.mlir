// RUN: npu-opt %s --split-input-file --sim-normalize | FileCheck %s

// A keepdim row sum writes tensor<4x1> through the constant map (d0, d1) -> (d0, 0): the unit dim
// is dropped from the output (-> (d0) into tensor<4>) and restored by an expand_shape after it.
// CHECK-LABEL: func.func @keepdim_sum_output_map
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%[[C]] : tensor<4xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: return %[[E]]
func.func @keepdim_sum_output_map(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf32>) outs(%f : tensor<4x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}
