// RUN: npu-opt %s --split-input-file --sim-lower-tile-ops | FileCheck %s

// An elementwise tile program (ascend-lower-tiles' output, as a function): UB buffers become
// allocas without memory space, block_num the function's block_dim, block_idx a call the sim binds
// to the body's block index; flags go. The vector op reads its input tile from and writes its
// result tile to global memory (the host's UB is the same memory): copy_in / copy_out go.
// CHECK-LABEL: func.func @elementwise_program_in_upstream_ops
// CHECK: memref.alloca() : memref<512xf32>
// CHECK: %[[BID:.*]] = call @npu_sim_block_idx() : () -> index
// CHECK: %[[BNUM:.*]] = arith.constant 32 : index
// CHECK: arith.subi %[[BNUM]], %c1
// CHECK: scf.for
// CHECK:   %[[IN:.*]] = memref.subview %{{.*}}[%{{.*}}] [%{{.*}}] [1] : memref<16384xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK:   %[[OUT:.*]] = memref.subview %alloc[%{{.*}}] [%{{.*}}] [1] : memref<16384xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK:   call @npu_sim_tile_op_0(%[[IN]], %cst, %[[OUT]])
// CHECK-NOT: call
// CHECK-NOT: ascend.
// CHECK: func.func private @npu_sim_block_idx() -> index
// CHECK: func.func private @npu_sim_tile_op_0(%arg0: memref<?xf32, strided<[1], offset: ?>>, %arg1: f32, %arg2: memref<?xf32, strided<[1], offset: ?>>)
// CHECK: linalg.generic
// CHECK: arith.mulf %in, %arg1 : f32
func.func @elementwise_program_in_upstream_ops(%arg0: tensor<16384xf32>) -> tensor<16384xf32> attributes {npu.block_dim = 32 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %cst = arith.constant 2.0 : f32
  %0 = bufferization.to_buffer %arg0 : tensor<16384xf32> to memref<16384xf32>
  %in = "ascend.alloc"() {bytes = 2048 : i64, depth = 2 : i64, space = #ascend.memspace<"ub">} : () -> memref<512xf32, #ascend.memspace<"ub">>
  %o = "ascend.alloc"() {bytes = 2048 : i64, depth = 2 : i64, space = #ascend.memspace<"ub">} : () -> memref<512xf32, #ascend.memspace<"ub">>
  %out = memref.alloc() : memref<16384xf32>
  %bid = "ascend.block_idx"() : () -> index
  %bnum = "ascend.block_num"() : () -> index
  %last = arith.subi %bnum, %c1 : index
  %is_last = arith.cmpi eq, %bid, %last : index
  %start = arith.muli %bid, %c512 : index
  scf.for %i = %c0 to %c512 step %c512 {
    %n = arith.subi %c512, %i : index
    %off = arith.addi %start, %i : index
    %ub_in = memref.subview %in[0] [%n] [1] : memref<512xf32, #ascend.memspace<"ub">> to memref<?xf32, strided<[1]>, #ascend.memspace<"ub">>
    %ub_out = memref.subview %o[0] [%n] [1] : memref<512xf32, #ascend.memspace<"ub">> to memref<?xf32, strided<[1]>, #ascend.memspace<"ub">>
    %gm_in = memref.subview %0[%off] [%n] [1] : memref<16384xf32> to memref<?xf32, strided<[1], offset: ?>>
    "ascend.copy_in"(%gm_in, %ub_in) : (memref<?xf32, strided<[1], offset: ?>>, memref<?xf32, strided<[1]>, #ascend.memspace<"ub">>) -> ()
    "ascend.set_flag"() {dst_pipe = "V", event_id = 0 : i64, src_pipe = "MTE2"} : () -> ()
    "ascend.wait_flag"() {dst_pipe = "V", event_id = 0 : i64, src_pipe = "MTE2"} : () -> ()
    "ascend.vbinary"(%ub_in, %cst, %ub_out) {kind = "mul"} : (memref<?xf32, strided<[1]>, #ascend.memspace<"ub">>, f32, memref<?xf32, strided<[1]>, #ascend.memspace<"ub">>) -> ()
    %gm_out = memref.subview %out[%off] [%n] [1] : memref<16384xf32> to memref<?xf32, strided<[1], offset: ?>>
    "ascend.copy_out"(%ub_out, %gm_out) : (memref<?xf32, strided<[1]>, #ascend.memspace<"ub">>, memref<?xf32, strided<[1], offset: ?>>) -> ()
  }
  %r = bufferization.to_tensor %out restrict : memref<16384xf32> to tensor<16384xf32>
  return %r : tensor<16384xf32>
}

// -----

// A UB tile another copy reads too (copied in and straight out) keeps its copies: linalg.copy
// (one helper for both: same body, same signature).
// CHECK-LABEL: func.func @copy_through_ub_stays
// CHECK: %[[UB:.*]] = memref.alloca() : memref<64xf32>
// CHECK: call @npu_sim_tile_op_0(%arg0, %[[UB]])
// CHECK: call @npu_sim_tile_op_0(%[[UB]], %arg1)
// CHECK: func.func private @npu_sim_tile_op_0(%arg0: memref<64xf32>, %arg1: memref<64xf32>)
// CHECK-NEXT: linalg.copy ins(%arg0 : memref<64xf32>) outs(%arg1 : memref<64xf32>)
func.func @copy_through_ub_stays(%gm_in: memref<64xf32>, %gm_out: memref<64xf32>) {
  %ub = "ascend.alloc"() {bytes = 256 : i64, depth = 1 : i64, space = #ascend.memspace<"ub">} : () -> memref<64xf32, #ascend.memspace<"ub">>
  "ascend.copy_in"(%gm_in, %ub) : (memref<64xf32>, memref<64xf32, #ascend.memspace<"ub">>) -> ()
  "ascend.copy_out"(%ub, %gm_out) : (memref<64xf32, #ascend.memspace<"ub">>, memref<64xf32>) -> ()
  return
}

// -----

// A row reduction fills its identity first and reduces the UB tile along dim 1.
// CHECK-LABEL: func.func @row_reduction_fills_identity
// CHECK: call @npu_sim_tile_op_0(
// CHECK: func.func private @npu_sim_tile_op_0(%arg0: memref<4x304xf32>, %arg1: memref<4xf32>)
// CHECK: %[[ID:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[ID]] : f32) outs(%arg1 : memref<4xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
func.func @row_reduction_fills_identity() {
  %src = "ascend.alloc"() {bytes = 4864 : i64, depth = 1 : i64, space = #ascend.memspace<"ub">} : () -> memref<4x304xf32, #ascend.memspace<"ub">>
  %dst = "ascend.alloc"() {bytes = 32 : i64, depth = 1 : i64, space = #ascend.memspace<"ub">} : () -> memref<4xf32, #ascend.memspace<"ub">>
  "ascend.vreduce"(%src, %dst) {kind = "max", dims = array<i64: 1>} : (memref<4x304xf32, #ascend.memspace<"ub">>, memref<4xf32, #ascend.memspace<"ub">>) -> ()
  return
}

// -----

// mmad {init = 1} zero-fills L0C before accumulating; a transposing load_l0 is a linalg.transpose.
// CHECK-LABEL: func.func @cube_tile_ops
// CHECK: call @npu_sim_tile_op_0(
// CHECK: call @npu_sim_tile_op_1(
// CHECK: func.func private @npu_sim_tile_op_0(%arg0: memref<32x16xf16>, %arg1: memref<16x32xf16>)
// CHECK-NEXT: linalg.transpose ins(%arg0 : memref<32x16xf16>) outs(%arg1 : memref<16x32xf16>) permutation = [1, 0]
// CHECK: func.func private @npu_sim_tile_op_1(%arg0: memref<16x32xf16>, %arg1: memref<32x16xf16>, %arg2: memref<16x16xf32>)
// CHECK: linalg.fill
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : memref<16x32xf16>, memref<32x16xf16>) outs(%arg2 : memref<16x16xf32>)
func.func @cube_tile_ops() {
  %a1 = "ascend.alloc"() {bytes = 1024 : i64, depth = 1 : i64, space = #ascend.memspace<"l1">} : () -> memref<32x16xf16, #ascend.memspace<"l1">>
  %a0 = "ascend.alloc"() {bytes = 1024 : i64, depth = 1 : i64, space = #ascend.memspace<"l0a">} : () -> memref<16x32xf16, #ascend.memspace<"l0a">>
  %b0 = "ascend.alloc"() {bytes = 1024 : i64, depth = 1 : i64, space = #ascend.memspace<"l0b">} : () -> memref<32x16xf16, #ascend.memspace<"l0b">>
  %c0 = "ascend.alloc"() {bytes = 1024 : i64, depth = 1 : i64, space = #ascend.memspace<"l0c">} : () -> memref<16x16xf32, #ascend.memspace<"l0c">>
  "ascend.load_l0"(%a1, %a0) {transpose = 1 : i64} : (memref<32x16xf16, #ascend.memspace<"l1">>, memref<16x32xf16, #ascend.memspace<"l0a">>) -> ()
  "ascend.mmad"(%a0, %b0, %c0) {init = 1 : i64} : (memref<16x32xf16, #ascend.memspace<"l0a">>, memref<32x16xf16, #ascend.memspace<"l0b">>, memref<16x16xf32, #ascend.memspace<"l0c">>) -> ()
  return
}

// -----

// A vbroadcast only elementwise ops read is folded into them: the add reads the row vector through
// a broadcasting map (d0), and the [4, 64] copy is never written.
// CHECK: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @broadcast_folds_into_its_readers
// CHECK: call @npu_sim_tile_op_0(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<4x64xf32>, memref<4xf32>, memref<4x64xf32>) -> ()
// CHECK-NOT: call
// CHECK: func.func private @npu_sim_tile_op_0
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ROW]], #{{.*}}]
// CHECK: arith.addf
func.func @broadcast_folds_into_its_readers() {
  %x = "ascend.alloc"() {bytes = 1024 : i64, depth = 1 : i64, space = #ascend.memspace<"ub">} : () -> memref<4x64xf32, #ascend.memspace<"ub">>
  %row = "ascend.alloc"() {bytes = 32 : i64, depth = 1 : i64, space = #ascend.memspace<"ub">} : () -> memref<4xf32, #ascend.memspace<"ub">>
  %b = "ascend.alloc"() {bytes = 1024 : i64, depth = 1 : i64, space = #ascend.memspace<"ub">} : () -> memref<4x64xf32, #ascend.memspace<"ub">>
  %y = "ascend.alloc"() {bytes = 1024 : i64, depth = 1 : i64, space = #ascend.memspace<"ub">} : () -> memref<4x64xf32, #ascend.memspace<"ub">>
  "ascend.vbroadcast"(%row, %b) {dims = array<i64: 1>} : (memref<4xf32, #ascend.memspace<"ub">>, memref<4x64xf32, #ascend.memspace<"ub">>) -> ()
  "ascend.vbinary"(%x, %b, %y) {kind = "add"} : (memref<4x64xf32, #ascend.memspace<"ub">>, memref<4x64xf32, #ascend.memspace<"ub">>, memref<4x64xf32, #ascend.memspace<"ub">>) -> ()
  return
}
