// RUN: npu-opt %s --split-input-file --verify-diagnostics --ascend-tile --ascend-plan-memory --ascend-lower-tiles | FileCheck %s

// Elementwise: this block's share starts at block_idx * block_elems (the last block takes 571),
// tiles of 608 with a tail of min(remaining, 608); MTE2 -> V -> MTE3 ordered by flags.
// CHECK-LABEL: func.func private @elementwise_chain_becomes_copy_compute_copy
// CHECK: %[[A:.*]] = bufferization.to_buffer %arg0
// CHECK: %[[UB_IN:.*]] = "ascend.alloc"() {bytes = 2432 : i64, depth = 2 : i64, offset = 0 : i64, space = #ascend.memspace<"ub">} : () -> memref<608xf32, #ascend.memspace<"ub">>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1001x3xf32>
// CHECK: %[[BID:.*]] = "ascend.block_idx"() : () -> index
// CHECK: %[[LEN:.*]] = arith.select %{{.*}}, %c571, %c608 : index
// CHECK: %[[START:.*]] = arith.muli %[[BID]], %c608 : index
// CHECK: scf.for %[[I:.*]] = %c0 to %[[LEN]] step %c608 {
// CHECK:   %[[N:.*]] = arith.minsi %{{.*}}, %c608 : index
// CHECK:   %[[OFF:.*]] = arith.addi %[[START]], %[[I]] : index
// CHECK:   "ascend.copy_in"
// CHECK:   "ascend.set_flag"() {dst_pipe = "V", event_id = 0 : i64, src_pipe = "MTE2"}
// CHECK:   "ascend.wait_flag"() {dst_pipe = "V", event_id = 0 : i64, src_pipe = "MTE2"}
// CHECK:   "ascend.vunary"({{.*}}) {kind = "exp"}
// CHECK:   "ascend.vbinary"({{.*}}, %cst, {{.*}}) {kind = "mul"}
// CHECK:   "ascend.set_flag"() {dst_pipe = "MTE3", event_id = 0 : i64, src_pipe = "V"}
// CHECK:   "ascend.copy_out"
// CHECK: }
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict
// CHECK: "ascend.yield"(%[[R]])
func.func private @elementwise_chain_becomes_copy_compute_copy()
"ascend.kernel"() ({
^bb0(%a: tensor<1001x3xf32>):
  %c = arith.constant 2.0 : f32
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<1001x3xf32>) -> tensor<1001x3xf32>
  %1 = "ascend.binary"(%0, %c) {kind = "mul"} : (tensor<1001x3xf32>, f32) -> tensor<1001x3xf32>
  "ascend.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1001x3xf32>) -> ()
}) {sym_name = "chain", function_type = (tensor<1001x3xf32>) -> tensor<1001x3xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// Row reduction: [rows, 300] tiles land in UB at a 304-element pitch and reduce along dim 1.
// CHECK-LABEL: func.func private @row_reduction_reduces_ub_rows
// CHECK: "ascend.alloc"() {{.*}} : () -> memref<3x304xf32, #ascend.memspace<"ub">>
// CHECK: scf.for
// CHECK: %[[SRC:.*]] = memref.subview %{{.*}}[0, 0] [%{{.*}}, 300] [1, 1] : memref<3x304xf32, #ascend.memspace<"ub">> to memref<?x300xf32, strided<[304, 1]>, #ascend.memspace<"ub">>
// CHECK: "ascend.copy_in"({{.*}}) : (memref<?x300xf32, strided<[300, 1], offset: ?>>, memref<?x300xf32, strided<[304, 1]>, #ascend.memspace<"ub">>) -> ()
// CHECK: "ascend.vreduce"(%[[SRC]], %{{.*}}) {dims = array<i64: 1>, kind = "sum"}
func.func private @row_reduction_reduces_ub_rows()
"ascend.kernel"() ({
^bb0(%a: tensor<77x300xf32>):
  %0 = "ascend.reduce"(%a) {kind = "sum", dims = array<i64: 1>, keepdim = false} : (tensor<77x300xf32>) -> tensor<77xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<77xf32>) -> ()
}) {sym_name = "rowsum", function_type = (tensor<77x300xf32>) -> tensor<77xf32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()

// -----

// Matmul: output tiles dealt round-robin from block_idx; the first K step initialises L0C
// (mmad init = 1), the remaining K steps accumulate; fixpipe writes the tile to GM.
// CHECK-LABEL: func.func private @matmul_becomes_l1_l0_mmad_fixpipe
// CHECK-DAG: "ascend.alloc"() {{.*}}space = #ascend.memspace<"l1">} : () -> memref<32x64xf32, #ascend.memspace<"l1">>
// CHECK-DAG: "ascend.alloc"() {{.*}}space = #ascend.memspace<"l0c">} : () -> memref<32x32xf32, #ascend.memspace<"l0c">>
// CHECK: %[[BID:.*]] = "ascend.block_idx"
// CHECK: %[[BNUM:.*]] = "ascend.block_num"
// CHECK: scf.for %{{.*}} = %[[BID]] to %c12 step %[[BNUM]] {
// CHECK:   "ascend.copy_in"
// CHECK:   "ascend.load_l0"({{.*}}) {transpose = 0 : i64}
// CHECK:   "ascend.mmad"({{.*}}) {init = 1 : i64}
// CHECK:   scf.for %{{.*}} = %c1 to %c2 step %c1 {
// CHECK:     "ascend.mmad"({{.*}}) {init = 0 : i64}
// CHECK:   }
// CHECK:   "ascend.set_flag"() {dst_pipe = "FIX", event_id = 0 : i64, src_pipe = "M"}
// CHECK:   "ascend.fixpipe"({{.*}}) : (memref<?x?xf32, strided<[32, 1]>, #ascend.memspace<"l0c">>, memref<?x?xf32, strided<[90, 1], offset: ?>>) -> ()
func.func private @matmul_becomes_l1_l0_mmad_fixpipe()
"ascend.kernel"() ({
^bb0(%a: tensor<100x70xf32>, %b: tensor<70x90xf32>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<100x70xf32>, tensor<70x90xf32>) -> tensor<100x90xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<100x90xf32>) -> ()
}) {sym_name = "mm", function_type = (tensor<100x70xf32>, tensor<70x90xf32>) -> tensor<100x90xf32>, core_type = "aic", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// A matmul with a transposed B loads it into L0B with transpose = 1.
// CHECK-LABEL: func.func private @transposed_operand_loads_with_transpose
// CHECK: "ascend.load_l0"({{.*}}) {transpose = 0 : i64}
// CHECK-NEXT: "ascend.load_l0"({{.*}}) {transpose = 1 : i64}
func.func private @transposed_operand_loads_with_transpose()
"ascend.kernel"() ({
^bb0(%a: tensor<64x32xf16>, %b: tensor<48x32xf16>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = true} : (tensor<64x32xf16>, tensor<48x32xf16>) -> tensor<64x48xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x48xf32>) -> ()
}) {sym_name = "mm_tb", function_type = (tensor<64x32xf16>, tensor<48x32xf16>) -> tensor<64x48xf32>, core_type = "aic", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// Matmul + relu epilogue (mix kernel): fixpipe lands the tile in UB, the vector unit applies
// the epilogue there, copy_out writes it.
// CHECK-LABEL: func.func private @matmul_epilogue_runs_on_ub_tiles
// CHECK: "ascend.fixpipe"({{.*}}) : (memref<?x?xf32, strided<[32, 1]>, #ascend.memspace<"l0c">>, memref<?x?xf32, strided<[32, 1]>, #ascend.memspace<"ub">>) -> ()
// CHECK: "ascend.vunary"({{.*}}) {kind = "relu"}
// CHECK: "ascend.copy_out"
func.func private @matmul_epilogue_runs_on_ub_tiles()
"ascend.kernel"() ({
^bb0(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %1 = "ascend.unary"(%0) {kind = "relu"} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  "ascend.yield"(%1) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x64xf32>) -> ()
}) {sym_name = "mm_relu", function_type = (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>, core_type = "mix", fusion = "matmul_epilogue", block_dim = 1, tiling = {}} : () -> ()

// -----

// The ND -> NZ casts of the operands in the kernel are its copy-in's: the ND arguments are copied in.
// CHECK-LABEL: func.func private @copy_in_casts_read_the_nd_arguments
// CHECK: %[[A:.*]] = bufferization.to_buffer %arg0 : tensor<64x32xf16>
// CHECK-NOT: format_cast
// CHECK: "ascend.copy_in"
// CHECK: "ascend.mmad"
func.func private @copy_in_casts_read_the_nd_arguments()
"ascend.kernel"() ({
^bb0(%a: tensor<64x32xf16>, %b: tensor<48x32xf16>):
  %an = "ascend.format_cast"(%a) : (tensor<64x32xf16>) -> tensor<64x32xf16, #ascend.format<"FRACTAL_NZ">>
  %bn = "ascend.format_cast"(%b) : (tensor<48x32xf16>) -> tensor<48x32xf16, #ascend.format<"FRACTAL_NZ">>
  %0 = "ascend.matmul"(%an, %bn) {acc_type = f32, transpose_a = false, transpose_b = true} : (tensor<64x32xf16, #ascend.format<"FRACTAL_NZ">>, tensor<48x32xf16, #ascend.format<"FRACTAL_NZ">>) -> tensor<64x48xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x48xf32>) -> ()
}) {sym_name = "mm_casts", function_type = (tensor<64x32xf16>, tensor<48x32xf16>) -> tensor<64x48xf32>, core_type = "aic", fusion = "matmul_epilogue", block_dim = 1, tiling = {}} : () -> ()

// -----

// An opaque kernel (no tiling) keeps its tensor body: the sim runs it as it is.
// CHECK-LABEL: func.func private @opaque_kernel_is_left_alone
// CHECK: "ascend.transpose"
// CHECK-NOT: "ascend.alloc"
func.func private @opaque_kernel_is_left_alone()
"ascend.kernel"() ({
^bb0(%a: tensor<8x4xf32>):
  %0 = "ascend.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> ()
}) {sym_name = "tr", function_type = (tensor<8x4xf32>) -> tensor<4x8xf32>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// A cube operand stored in FRACTAL_NZ has no tile-level copy yet: the kernel keeps its tensor body
// (the sim unpacks the operand, the AscendC emitter copies its fractals as stored).
// CHECK-LABEL: func.func private @stored_nz_operand_is_left_alone
// CHECK: "ascend.matmul"
// CHECK-NOT: "ascend.alloc"
func.func private @stored_nz_operand_is_left_alone()
"ascend.kernel"() ({
^bb0(%a: tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">>, %b: tensor<32x32xf16>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">>, tensor<32x32xf16>) -> tensor<32x32xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x32xf32>) -> ()
}) {sym_name = "mm_nz", function_type = (tensor<32x32xf16, #ascend.format<"FRACTAL_NZ">>, tensor<32x32xf16>) -> tensor<32x32xf32>, core_type = "aic", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// A row too long for UB (split across UB tiles by ascend-tile) is a two-level reduction: per row
// the accumulator starts at the identity, each column tile of 16376 (the last one a tail) is copied
// in, reduced into a partial result and folded into it; then the row's result is copied out.
// CHECK-LABEL: func.func private @split_row_is_a_two_level_reduction
// CHECK: %[[ACC:.*]] = "ascend.alloc"() {{.*}}depth = 2 : i64{{.*}} -> memref<8xf32, #ascend.memspace<"ub">>
// CHECK: scf.for %[[R:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK:   %[[ROW:.*]] = arith.addi %{{.*}}, %[[R]] : index
// CHECK:   %[[A:.*]] = memref.subview %[[ACC]][0] [1] [1]
// CHECK:   "ascend.vdup"(%{{.*}}, %[[A]])
// CHECK:   scf.for %[[C:.*]] = %c0 to %c100000 step %c16376 {
// CHECK:     %[[N:.*]] = arith.minsi %{{.*}}, %c16376 : index
// CHECK:     memref.subview %{{.*}}[%[[ROW]], %[[C]]] [1, %[[N]]] [1, 1]
// CHECK:     "ascend.copy_in"
// CHECK:     "ascend.vreduce"({{.*}}) {dims = array<i64: 1>, kind = "max"}
// CHECK:     "ascend.vbinary"(%[[A]], %{{.*}}, %[[A]]) {kind = "max"}
// CHECK:   }
// CHECK:   "ascend.copy_out"(%[[A]], %{{.*}})
// CHECK: col_tiles = 7 : i64
func.func private @split_row_is_a_two_level_reduction()
"ascend.kernel"() ({
^bb0(%a: tensor<4x100000xf32>):
  %0 = "ascend.reduce"(%a) {kind = "max", dims = array<i64: 1>, keepdim = false} : (tensor<4x100000xf32>) -> tensor<4xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
}) {sym_name = "wide", function_type = (tensor<4x100000xf32>) -> tensor<4xf32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()

// -----

// A split row whose reduction is broadcast back over the row (a second pass over the column tiles)
// has no tile-level form yet: the kernel keeps its tensor body.
// CHECK-LABEL: func.func private @split_row_broadcast_back_is_left_alone
// CHECK: "ascend.reduce"
// CHECK-NOT: ascend.copy_in
// CHECK: col_tiles
func.func private @split_row_broadcast_back_is_left_alone()
"ascend.kernel"() ({
^bb0(%a: tensor<4x100000xf32>):
  %0 = "ascend.reduce"(%a) {kind = "max", dims = array<i64: 1>, keepdim = false} : (tensor<4x100000xf32>) -> tensor<4xf32>
  %1 = "ascend.broadcast"(%0) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<4x100000xf32>
  %2 = "ascend.binary"(%a, %1) {kind = "sub"} : (tensor<4x100000xf32>, tensor<4x100000xf32>) -> tensor<4x100000xf32>
  "ascend.yield"(%2) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x100000xf32>) -> ()
}) {sym_name = "wide_sub", function_type = (tensor<4x100000xf32>) -> tensor<4x100000xf32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()
