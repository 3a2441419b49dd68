// RUN: npu-opt %s --sim-wide-accumulators --split-input-file | FileCheck %s

// A full sum of 4097 x 257 float32 elements (x.sum()): the accumulator is widened to f64, each
// term extended, and the result rounded to f32 once after the op.
// CHECK-LABEL: func.func @full_sum
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<f32>) outs(%{{.*}} : tensor<f64>)
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4097x257xf32>) outs(%[[INIT]] : tensor<f64>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK: %[[W:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[ADD:.*]] = arith.addf %[[W]], %[[ACC]] : f64
// CHECK: linalg.yield %[[ADD]] : f64
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<f64>) outs(%{{.*}} : tensor<f32>)
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @full_sum(%x: tensor<4097x257xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<4097x257xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A fused sum of squares (mse_loss's): the terms stay f32, only the addition is f64.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK: %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK: %[[W:.*]] = arith.extf %[[SQ]] : f32 to f64
// CHECK: arith.addf %[[W]], %[[ACC]] : f64
func.func @sum_of_squares(%a: tensor<2048xf32>, %b: tensor<2048xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%a, %b : tensor<2048xf32>, tensor<2048xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %d = arith.subf %x, %y : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Rows of 1000 (a softmax's sum): short enough for a float32 running sum; left as it is.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: f64
func.func @short_rows(%x: tensor<64x1000xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1000xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// A matmul keeps its f32 register tiles, and a max over a long row is exact: neither is widened.
// CHECK-LABEL: func.func @contraction_and_max
// CHECK-NOT: f64
func.func @contraction_and_max(%a: tensor<8x4096xf32>, %b: tensor<4096x16xf32>, %c: tensor<8x16xf32>,
                               %m: tensor<8xf32>) -> (tensor<8x16xf32>, tensor<8xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x4096xf32>, tensor<4096x16xf32>) outs(%c : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                        iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x4096xf32>) outs(%m : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r, %mx : tensor<8x16xf32>, tensor<8xf32>
}
