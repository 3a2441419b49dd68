// RUN: npu-opt %s --split-input-file --sim-fusion-fence | FileCheck %s
// RUN: npu-opt %s --split-input-file --sim-fusion-fence --linalg-fuse-elementwise-ops --sim-fusion-fence=remove=true | FileCheck %s --check-prefix=FUSED

// exp(x) feeds a matmul, which reads each element once per output column: fused, the exp would
// run N times per element. A call to an external function gives it a second use, which keeps
// linalg-fuse-elementwise-ops from fusing it; the fences go after the fusion passes.
// CHECK-LABEL: func.func @costly_producer_of_a_contraction
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: call @npu_sim_fusion_fence_0(%[[E]])
// CHECK: linalg.matmul ins(%[[E]], %{{.*}}
// CHECK: func.func private @npu_sim_fusion_fence_0(tensor<8x16xf32>)
// FUSED-LABEL: func.func @costly_producer_of_a_contraction
// FUSED-NOT: npu_sim_fusion_fence
// FUSED: math.exp
// FUSED: linalg.matmul
// FUSED-NOT: npu_sim_fusion_fence
func.func @costly_producer_of_a_contraction(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<8x4xf32>
  %m1 = linalg.fill ins(%z : f32) outs(%m0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.matmul ins(%e, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%m1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// A cheap producer (a negation: no math op, no division) is not fenced: fusing it saves a pass
// through memory and costs little per recomputation.
// CHECK-LABEL: func.func @cheap_producer_fuses
// CHECK-NOT: npu_sim_fusion_fence
func.func @cheap_producer_fuses(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<8x4xf32>
  %m1 = linalg.fill ins(%z : f32) outs(%m0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.matmul ins(%e, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%m1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
