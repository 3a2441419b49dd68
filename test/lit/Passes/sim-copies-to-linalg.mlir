// RUN: npu-opt %s --sim-copies-to-linalg | FileCheck %s

// A copy between strided buffers would be a call into MLIR's runner library (memrefCopy), which a
// kernel .so cannot link; linalg.copy lowers to loops.
// CHECK-LABEL: func.func @strided_copy
// CHECK: linalg.copy {{.*}}ins(%arg0 : memref<4x8xf32, strided<[16, 1]>>) outs(%arg1 : memref<4x8xf32>)
// CHECK-NOT: memref.copy
func.func @strided_copy(%src: memref<4x8xf32, strided<[16, 1]>>, %dst: memref<4x8xf32>) {
  memref.copy %src, %dst : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32>
  return
}
