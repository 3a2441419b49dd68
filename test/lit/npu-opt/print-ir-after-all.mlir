// RUN: npu-opt %s --mlir-print-ir-after-all --ascend-attach-target --canonicalize 2>&1 >/dev/null | FileCheck %s

// Python passes print under their registry name, upstream ones under theirs.
// CHECK: IR Dump After ascend-attach-target
// CHECK: ascend.target = #ascend.target<"Ascend910B1"
// CHECK: IR Dump After Canonicalizer
func.func @f() {
  return
}
