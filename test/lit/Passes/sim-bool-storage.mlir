// RUN: npu-opt %s --split-input-file --sim-bool-storage | FileCheck %s

// An i1 vector goes to memory as bytes: LLVM would pack it into bits, while scalar loads and
// stores of the same i1 buffer address one byte per element.
// CHECK-LABEL: llvm.func @moves_mask
// CHECK: %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<8xi8>
// CHECK: %[[M:.*]] = llvm.trunc %[[B]] : vector<8xi8> to vector<8xi1>
// CHECK: %[[W:.*]] = llvm.zext %[[M]] : vector<8xi1> to vector<8xi8>
// CHECK: llvm.store %[[W]], %{{.*}} : vector<8xi8>, !llvm.ptr
llvm.func @moves_mask(%p: !llvm.ptr, %q: !llvm.ptr) {
  %0 = llvm.load %p : !llvm.ptr -> vector<8xi1>
  llvm.store %0, %q : vector<8xi1>, !llvm.ptr
  llvm.return
}

// -----

// A masked load of i1 data takes its pass-through value as bytes; the mask stays i1.
// CHECK-LABEL: llvm.func @masked_mask
// CHECK: %[[P:.*]] = llvm.zext %{{.*}} : vector<4xi1> to vector<4xi8>
// CHECK: %[[B:.*]] = llvm.intr.masked.load %{{.*}}, %{{.*}}, %[[P]] {alignment = 1 : i32} : (!llvm.ptr, vector<4xi1>, vector<4xi8>) -> vector<4xi8>
// CHECK: llvm.trunc %[[B]] : vector<4xi8> to vector<4xi1>
llvm.func @masked_mask(%p: !llvm.ptr, %mask: vector<4xi1>, %pass: vector<4xi1>) -> vector<4xi1> {
  %0 = llvm.intr.masked.load %p, %mask, %pass {alignment = 1 : i32} : (!llvm.ptr, vector<4xi1>, vector<4xi1>) -> vector<4xi1>
  llvm.return %0 : vector<4xi1>
}

// -----

// Scalar i1 accesses and vectors of other types are left as they are.
// CHECK-LABEL: llvm.func @scalar_bool
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i1
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xf32>, !llvm.ptr
// CHECK-NOT: llvm.zext
llvm.func @scalar_bool(%p: !llvm.ptr, %q: !llvm.ptr, %v: vector<4xf32>) -> i1 {
  %0 = llvm.load %p : !llvm.ptr -> i1
  llvm.store %v, %q : vector<4xf32>, !llvm.ptr
  llvm.return %0 : i1
}
