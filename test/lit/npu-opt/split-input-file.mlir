// Each chunk is parsed and run on its own and the outputs are joined with the marker; a chunk
// that fails does not stop the others, but the exit status is 1.
// RUN: not npu-opt %s --split-input-file --canonicalize 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// CHECK-LABEL: func.func @first
// CHECK-NEXT: return %arg0
func.func @first(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %0 = arith.mulf %x, %one : f32
  return %0 : f32
}

// -----

// ERR: split-input-file.mlir:[[# @LINE + 3]]:8: error: 'ascend.unary' op unknown kind 'cube'
// The location is the line in this file, not in the chunk.
func.func @second(%x: tensor<4xf32>) {
  %0 = "ascend.unary"(%x) {kind = "cube"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// CHECK: // -----
// CHECK-LABEL: func.func @third
func.func @third() {
  return
}
