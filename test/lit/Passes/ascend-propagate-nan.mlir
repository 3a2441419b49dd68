// RUN: npu-opt %s --split-input-file --ascend-propagate-nan | FileCheck %s

#map = affine_map<(d0) -> (d0)>
// torch-mlir's aten.maximum: an ordered compare and a select, which drops a NaN first operand.
// CHECK-LABEL: func.func @maximum_becomes_maximumf
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.select
func.func @maximum_becomes_maximumf(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %y : f32
    %s = arith.select %c, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @minimum_becomes_minimumf
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.select
func.func @minimum_becomes_minimumf(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %c = arith.cmpf olt, %x, %y : f32
    %s = arith.select %c, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
// Picking the other operand is a different op (no rewrite).
// CHECK-LABEL: func.func @swapped_select_is_left_alone
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK-NOT: arith.maximumf
func.func @swapped_select_is_left_alone(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %y : f32
    %s = arith.select %c, %y, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> ()>
// torch-mlir's argmax: the value through maximumf, the index moved on an ordered compare. The
// first NaN must take the index and keep it.
// CHECK-LABEL: func.func @argmax_index_takes_the_first_nan
// CHECK: %[[MAX:.*]] = arith.maximumf %[[IN:.*]], %[[ACC:.*]] : f32
// CHECK: %[[NEW_NAN:.*]] = arith.cmpf uno, %[[IN]], %[[IN]]
// CHECK: %[[SEEN:.*]] = arith.cmpf ord, %[[ACC]], %[[ACC]]
// CHECK: %[[FIRST:.*]] = arith.andi %[[NEW_NAN]], %[[SEEN]]
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[IN]], %[[ACC]]
// CHECK: %[[TAKE:.*]] = arith.ori %[[GT]], %[[FIRST]]
// CHECK: arith.select %[[TAKE]]
func.func @argmax_index_takes_the_first_nan(%x: tensor<8xf32>, %v0: tensor<f32>, %i0: tensor<i64>) -> tensor<i64> {
  %0:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["reduction"]} ins(%x : tensor<8xf32>) outs(%v0, %i0 : tensor<f32>, tensor<i64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %acc : f32
    %c = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %c, %ii, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<f32>, tensor<i64>)
  return %0#1 : tensor<i64>
}
