// RUN: npu-opt %s --split-input-file --sim-unshare-empty-tensors | FileCheck %s

// One tensor.empty initialising two ops (as CSE leaves it) becomes one per use, so bufferization
// cannot give an intermediate the output's buffer.
// CHECK-LABEL: func.func @empty_per_use
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[A:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A]] : tensor<8xf32>) outs(%[[E0]] : tensor<8xf32>)
func.func @empty_per_use(%v: f32) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.fill ins(%v : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

// An empty tensor with one use stays the only one.
// CHECK-LABEL: func.func @single_use
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @single_use(%v: f32) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.fill ins(%v : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %a : tensor<8xf32>
}
