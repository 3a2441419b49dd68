// RUN: npu-opt %s --split-input-file --verify-diagnostics --ascend-tile | FileCheck %s

// A long elementwise chain splits over all 48 vector cores; inputs and outputs are
// double-buffered: (3 queues x 2 + 2 temporaries) x 4 bytes = 32 bytes per element -> 6144-element tiles.
// CHECK-LABEL: func.func private @elementwise_splits_over_48_vector_cores
// CHECK: block_dim = 48 : i64
// CHECK-SAME: tiling = {align_elems = 8 : i64, block_dim = 48 : i64, block_elems = 21848 : i64, buffer_num = 2 : i64, kind = "elementwise", last_block_elems = 21720 : i64, last_tail_tile_elems = 3288 : i64, last_tile_num = 4 : i64, tail_tile_elems = 3416 : i64, tile_elems = 6144 : i64, tile_num = 4 : i64, total = 1048576 : i64}
func.func private @elementwise_splits_over_48_vector_cores()
"ascend.kernel"() ({
^bb0(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>):
  %c = arith.constant 2.0 : f32
  %0 = "ascend.binary"(%a, %b) {kind = "add"} : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1 = "ascend.unary"(%0) {kind = "exp"} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %2 = "ascend.binary"(%1, %c) {kind = "mul"} : (tensor<1024x1024xf32>, f32) -> tensor<1024x1024xf32>
  "ascend.yield"(%2) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1024x1024xf32>) -> ()
}) {sym_name = "chain", function_type = (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// 3003 elements: the last block ends on an element count that is not 32-byte aligned (the tail tile).
// CHECK-LABEL: func.func private @unaligned_total_leaves_a_tail_tile
// CHECK: tiling = {align_elems = 8 : i64, block_dim = 5 : i64, block_elems = 608 : i64, buffer_num = 2 : i64, kind = "elementwise", last_block_elems = 571 : i64, last_tail_tile_elems = 571 : i64, last_tile_num = 1 : i64
func.func private @unaligned_total_leaves_a_tail_tile()
"ascend.kernel"() ({
^bb0(%a: tensor<1001x3xf32>):
  %0 = "ascend.unary"(%a) {kind = "relu"} : (tensor<1001x3xf32>) -> tensor<1001x3xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1001x3xf32>) -> ()
}) {sym_name = "tail", function_type = (tensor<1001x3xf32>) -> tensor<1001x3xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// Too little work to split: one block, one tile - never more blocks than work.
// CHECK-LABEL: func.func private @small_kernel_stays_on_one_core
// CHECK: block_dim = 1 : i64
// CHECK-SAME: tiling = {align_elems = 16 : i64, block_dim = 1 : i64, block_elems = 64 : i64
func.func private @small_kernel_stays_on_one_core()
"ascend.kernel"() ({
^bb0(%a: tensor<64xf16>):
  %0 = "ascend.unary"(%a) {kind = "abs"} : (tensor<64xf16>) -> tensor<64xf16>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf16>) -> ()
}) {sym_name = "small", function_type = (tensor<64xf16>) -> tensor<64xf16>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// A last-dim reduction keeps whole rows in UB at a 32-byte aligned pitch (300 -> 304).
// CHECK-LABEL: func.func private @row_reduction_tiles_whole_rows
// CHECK: tiling = {align_elems = 8 : i64, block_dim = 26 : i64, block_rows = 3 : i64, buffer_num = 2 : i64, cols = 300 : i64, cols_aligned = 304 : i64, kind = "row"
func.func private @row_reduction_tiles_whole_rows()
"ascend.kernel"() ({
^bb0(%a: tensor<77x300xf32>):
  %0 = "ascend.reduce"(%a) {kind = "sum", dims = array<i64: 1>, keepdim = false} : (tensor<77x300xf32>) -> tensor<77xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<77xf32>) -> ()
}) {sym_name = "rowsum", function_type = (tensor<77x300xf32>) -> tensor<77xf32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()

// -----

// fp16 matmul: L0A/L0B tiles of 128x128 fp16 double-buffered fill 64 KiB each, L0C 128x128 fp32;
// 1024x1024 output gives 64 tiles over the 24 cube cores.
// CHECK-LABEL: func.func private @matmul_l0_tiles_fit_fractals
// CHECK: tiling = {base_k = 128 : i64, base_m = 128 : i64, base_n = 128 : i64, batch = 1 : i64, block_dim = 24 : i64, buffer_num = 2 : i64, k = 512 : i64, k_tiles = 4 : i64, kind = "matmul", m = 1024 : i64, n = 1024 : i64, tail_k = 128 : i64, tail_m = 128 : i64, tail_n = 128 : i64, tiles_m = 8 : i64, tiles_n = 8 : i64}
func.func private @matmul_l0_tiles_fit_fractals()
"ascend.kernel"() ({
^bb0(%a: tensor<1024x512xf16>, %b: tensor<512x1024xf16>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<1024x512xf16>, tensor<512x1024xf16>) -> tensor<1024x1024xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1024x1024xf32>) -> ()
}) {sym_name = "mm", function_type = (tensor<1024x512xf16>, tensor<512x1024xf16>) -> tensor<1024x1024xf32>, core_type = "aic", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// A small unaligned matmul: tiles shrink (to 32x32 at least) until the cores have work; tails are recorded.
// CHECK-LABEL: func.func private @unaligned_matmul_records_tails
// CHECK: tiling = {base_k = 64 : i64, base_m = 32 : i64, base_n = 32 : i64, batch = 1 : i64, block_dim = 12 : i64, buffer_num = 2 : i64, k = 70 : i64, k_tiles = 2 : i64, kind = "matmul", m = 100 : i64, n = 90 : i64, tail_k = 6 : i64, tail_m = 4 : i64, tail_n = 26 : i64, tiles_m = 4 : i64, tiles_n = 3 : i64}
func.func private @unaligned_matmul_records_tails()
"ascend.kernel"() ({
^bb0(%a: tensor<100x70xf32>, %b: tensor<70x90xf32>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<100x70xf32>, tensor<70x90xf32>) -> tensor<100x90xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<100x90xf32>) -> ()
}) {sym_name = "mm_tail", function_type = (tensor<100x70xf32>, tensor<70x90xf32>) -> tensor<100x90xf32>, core_type = "aic", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// A transpose has no vector tiling: the kernel is left opaque (one block), never rejected.
// CHECK-LABEL: func.func private @transpose_is_not_tiled
// CHECK: tiling = {block_dim = 1 : i64, buffer_num = 2 : i64, kind = "opaque", reason = "ascend.transpose has no vector tiling"}
func.func private @transpose_is_not_tiled()
"ascend.kernel"() ({
^bb0(%a: tensor<8x4xf32>):
  %0 = "ascend.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> ()
}) {sym_name = "tr", function_type = (tensor<8x4xf32>) -> tensor<4x8xf32>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {}} : () -> ()

// -----

// One row of 100000 fp32 (double-buffered in and out) cannot fit 192 KiB of UB: the row is split
// across UB tiles (a two-level reduction), 16376 columns each (2 x 4 B input + 4 B ReduceMax
// scratch per column, 8-aligned), 7 tiles, the last of 1744.
// CHECK-LABEL: func.func private @wide_row_splits_across_ub_tiles
// CHECK: block_dim = 4 : i64, block_rows = 1 : i64, buffer_num = 2 : i64, col_tile = 16376 : i64, col_tiles = 7 : i64, cols = 100000 : i64
// CHECK-SAME: tail_col_tile = 1744 : i64
// CHECK-SAME: tile_rows = 1 : i64
func.func private @wide_row_splits_across_ub_tiles()
"ascend.kernel"() ({
^bb0(%a: tensor<4x100000xf32>):
  %0 = "ascend.reduce"(%a) {kind = "max", dims = array<i64: 1>, keepdim = false} : (tensor<4x100000xf32>) -> tensor<4xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
}) {sym_name = "too_wide", function_type = (tensor<4x100000xf32>) -> tensor<4xf32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()

// -----

// A scalar parameter (0-d f64 argument, read with tensor.extract and narrowed in the kernel)
// takes no UB buffer: the kernel tiles as elementwise over its two f32 queues,
// (2 queues x 2) x 4 bytes = 16 bytes per element.
// CHECK-LABEL: func.func private @scalar_parameter_has_no_buffer
// CHECK: tiling = {align_elems = 8 : i64, block_dim = 4 : i64, block_elems = 512 : i64, buffer_num = 2 : i64, kind = "elementwise"
func.func private @scalar_parameter_has_no_buffer()
"ascend.kernel"() ({
^bb0(%a: tensor<32x64xf32>, %alpha: tensor<f64>):
  %s = tensor.extract %alpha[] : tensor<f64>
  %f = arith.truncf %s : f64 to f32
  %0 = "ascend.binary"(%a, %f) {kind = "mul"} : (tensor<32x64xf32>, f32) -> tensor<32x64xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<32x64xf32>) -> ()
}) {sym_name = "scaled", function_type = (tensor<32x64xf32>, tensor<f64>) -> tensor<32x64xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()
