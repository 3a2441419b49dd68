// RUN: npu-opt %s --split-input-file --sim-device-assert | FileCheck %s

// A failed assertion lowered to abort() stores 1 into the status word the ABI wrapper returns and
// returns from the body before the access it guards: the launch fails, the process lives on.
// CHECK-LABEL: llvm.func @gather_body
// CHECK: llvm.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:.*]]
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[W:.*]] = llvm.mlir.addressof @npu_assert_status : !llvm.ptr
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.store %[[ONE]], %[[W]] : i32, !llvm.ptr
// CHECK-NEXT: llvm.return
// CHECK-NOT: llvm.call @abort
// CHECK-NOT: llvm.unreachable
// CHECK: llvm.mlir.global internal @npu_assert_status(0 : i32)
module {
  llvm.func @abort()
  llvm.func @gather_body(%in_range: i1) {
    llvm.cond_br %in_range, ^ok, ^fail
  ^ok:
    llvm.return
  ^fail:
    llvm.call @abort() : () -> ()
    llvm.unreachable
  }
}

// -----

// A body with no assertion is left as it is: no status word.
// CHECK-LABEL: llvm.func @add_body
// CHECK-NOT: npu_assert_status
module {
  llvm.func @add_body() {
    llvm.return
  }
}

// -----

// With function=, only that body is rewritten.
// RUN: npu-opt %s --split-input-file --sim-device-assert="function=other_body" | FileCheck %s --check-prefix=NAMED
// CHECK-LABEL: llvm.func @named_body
// NAMED-LABEL: llvm.func @named_body
// NAMED: llvm.call @abort
// NAMED: llvm.unreachable
module {
  llvm.func @abort()
  llvm.func @named_body() {
    llvm.call @abort() : () -> ()
    llvm.unreachable
  }
}
