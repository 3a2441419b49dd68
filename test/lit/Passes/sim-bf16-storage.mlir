// RUN: npu-opt %s --split-input-file --sim-bf16-storage | FileCheck %s

// A kernel that only moves bf16 data (load, store) moves it as i16: LLVM never holds a bf16 value,
// so it never calls compiler-rt's __truncsfbf2 to keep one across blocks.
// CHECK-LABEL: llvm.func @moves_bf16
// CHECK: %[[V:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK: llvm.store %[[V]], %{{.*}} : i16, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @moves_bf16(%p: !llvm.ptr, %q: !llvm.ptr) {
  %0 = llvm.load %p : !llvm.ptr -> bf16
  llvm.store %0, %q : bf16, !llvm.ptr
  llvm.return
}

// -----

// An op that computes on bf16 (here an fadd) leaves the whole module as it is.
// CHECK-LABEL: llvm.func @computes_on_bf16
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> bf16
// CHECK: llvm.fadd %{{.*}} : bf16
llvm.func @computes_on_bf16(%p: !llvm.ptr, %q: !llvm.ptr) {
  %0 = llvm.load %p : !llvm.ptr -> bf16
  %1 = llvm.fadd %0, %0 : bf16
  llvm.store %1, %q : bf16, !llvm.ptr
  llvm.return
}
