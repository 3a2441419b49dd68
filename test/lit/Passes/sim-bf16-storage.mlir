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

// -----

// Aggregates of bf16 vectors (an n-d vector, lowered) are retyped too: a splat aggregate constant
// is written again as i16 with the same bits (0xFF80 is -inf), and the vectors extracted, selected
// and carried across blocks move as i16.
// CHECK-LABEL: llvm.func @moves_aggregates
// CHECK: llvm.mlir.constant(dense<-128> : vector<2x9xi16>) : !llvm.array<2 x vector<9xi16>>
// CHECK: llvm.extractvalue %{{.*}}[1] : !llvm.array<2 x vector<9xi16>>
// CHECK: llvm.select %{{.*}} : vector<9xi1>, vector<9xi16>
// CHECK: ^bb1(%{{.*}}: !llvm.array<2 x vector<9xi16>>)
// CHECK-NOT: bf16
llvm.func @moves_aggregates(%p: !llvm.ptr, %c: vector<9xi1>) {
  %0 = llvm.mlir.constant(dense<0xFF80> : vector<2x9xbf16>) : !llvm.array<2 x vector<9xbf16>>
  %1 = llvm.extractvalue %0[1] : !llvm.array<2 x vector<9xbf16>>
  %2 = llvm.load %p : !llvm.ptr -> vector<9xbf16>
  %3 = llvm.select %c, %1, %2 : vector<9xi1>, vector<9xbf16>
  %4 = llvm.insertvalue %3, %0[0] : !llvm.array<2 x vector<9xbf16>>
  llvm.br ^bb1(%4 : !llvm.array<2 x vector<9xbf16>>)
^bb1(%5: !llvm.array<2 x vector<9xbf16>>):
  %6 = llvm.extractvalue %5[0] : !llvm.array<2 x vector<9xbf16>>
  llvm.store %6, %p : vector<9xbf16>, !llvm.ptr
  llvm.return
}
