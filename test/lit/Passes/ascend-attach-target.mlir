// RUN: npu-opt %s --split-input-file --verify-diagnostics --ascend-attach-target | FileCheck %s
// RUN: not npu-opt %s --ascend-attach-target=chip=Ascend310P 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// CHECK: module attributes {ascend.target = #ascend.target<"Ascend910B1", {{{.*}}cube_cores = 24 : i64{{.*}}l0_align = 512 : i64{{.*}}ub_bytes = 196608 : i64{{.*}}vector_cores = 48 : i64
// CHECK-LABEL: func.func @gets_the_default_target
// UNKNOWN: error: ERR03007 GRAPH unknown chip 'Ascend310P'; known: Ascend910B1
func.func @gets_the_default_target() {
  return
}

// -----

// Already built for this chip: nothing changes (the attribute keeps its hand-written contents).
// CHECK: module attributes {ascend.target = #ascend.target<"Ascend910B1", {cube_cores = 24 : i64}>}
// CHECK-LABEL: func.func @same_chip_is_kept
module attributes {ascend.target = #ascend.target<"Ascend910B1", {cube_cores = 24 : i64}>} {
  func.func @same_chip_is_kept() {
    return
  }
}

// -----

// expected-error@+1 {{module is already built for Ascend910B4, not Ascend910B1}}
module attributes {ascend.target = #ascend.target<"Ascend910B4", {}>} {
  func.func @other_chip_is_an_error() {
    return
  }
}
