// RUN: npu-opt %s --split-input-file --verify-diagnostics --ascend-verify-host | FileCheck %s

// Launches and reshapes are all a host function may hold.
// CHECK-LABEL: func.func @launches_and_views
"ascend.kernel"() ({
^bb0(%a: tensor<4x8xf32>):
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> ()
}) {sym_name = "k", function_type = (tensor<4x8xf32>) -> tensor<4x8xf32>, block_dim = 1 : i64, core_type = "aiv", fusion = "elementwise", tiling = {}} : () -> ()
func.func @launches_and_views(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = "ascend.launch"(%x) {callee = @k, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = tensor.collapse_shape %0 [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %1 : tensor<32xf32>
}

// -----

// Anything else computes outside every kernel and is rejected where it stands.
#id = affine_map<(d0) -> (d0)>
func.func @generic_left_on_the_host(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error@+1 {{ERR03007 GRAPH host function @generic_left_on_the_host computes with linalg.generic}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    %s = arith.addf %a, %f : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
