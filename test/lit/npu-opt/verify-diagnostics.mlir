// A diagnostic that was expected but not produced, or produced but not expected, fails the run.
// RUN: not npu-opt %s --verify-diagnostics 2>&1 | FileCheck %s

// CHECK-DAG: verify-diagnostics.mlir:[[# @LINE + 3]]: error: expected error "this never happens" was not produced
func.func @expected_but_missing(%x: tensor<4xf32>) {
  // expected-error@+1 {{this never happens}}
  %0 = "ascend.unary"(%x) {kind = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// CHECK-DAG: verify-diagnostics.mlir:[[# @LINE + 2]]:8: error: 'ascend.unary' op unknown kind 'cube'{{.*}}<- unexpected error
func.func @produced_but_unexpected(%x: tensor<4xf32>) {
  %0 = "ascend.unary"(%x) {kind = "cube"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
