// RUN: npu-opt %s --split-input-file --sim-scratch-allocator | FileCheck %s

// The generic allocation functions finalize-memref-to-llvm{use-generic-functions=1} calls are
// defined in the kernel's own module, over thread-local slots of kept blocks; malloc and free
// are declared for them.
// CHECK-LABEL: module
// CHECK: llvm.mlir.global internal @npu_sim_scratch_slots() {{.*}}: !llvm.array<4 x i64>
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(%{{.*}}: i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(%{{.*}}: !llvm.ptr)
module {
  func.func @kernel_body() {
    return
  }
}

// -----

// A module that declares malloc already keeps its one declaration.
// CHECK-LABEL: module
// CHECK-COUNT-1: llvm.func @malloc
// CHECK-NOT: llvm.func @malloc
module {
  llvm.func @malloc(i64) -> !llvm.ptr
}
