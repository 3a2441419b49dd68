// RUN: npu-opt %s --split-input-file --sim-predicates | FileCheck %s

#map = affine_map<(d0) -> (d0)>
// A compare read by two consumers is cloned, one copy per consumer: no i1 tensor is shared (stored).
// CHECK-LABEL: func.func @shared_mask_is_cloned
// CHECK: %[[M1:.*]] = linalg.generic
// CHECK: arith.cmpf
// CHECK: %[[M2:.*]] = linalg.generic
// CHECK: arith.cmpf
// CHECK: arith.select
// CHECK: arith.select
func.func @shared_mask_is_cloned(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xi1>
  %m = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf ogt, %x, %y : f32
    linalg.yield %c : i1
  } -> tensor<8xi1>
  %f = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%m, %a : tensor<8xi1>, tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%c: i1, %x: f32, %o: f32):
    %s = arith.select %c, %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%m, %b : tensor<8xi1>, tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%c: i1, %x: f32, %o: f32):
    %s = arith.select %c, %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
