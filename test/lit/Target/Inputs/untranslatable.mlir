// Kernels npu-translate must reject with a located error (used by emit-ascendc.mlir and emit-acl.mlir).

// Not tiled: the emitters need the tiling record.
"ascend.kernel"() ({
^bb0(%a: tensor<16xf32>):
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<16xf32>) -> tensor<16xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xf32>) -> ()
}) {sym_name = "untiled", function_type = (tensor<16xf32>) -> tensor<16xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()

// -----

// Opaque (ascend-tile found no vector tiling for it) on an element type not even the scalar unit has
// (a 910B has no fp8).
"ascend.kernel"() ({
^bb0(%a: tensor<8x4xf8E4M3FN>):
  %0 = "ascend.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<8x4xf8E4M3FN>) -> tensor<4x8xf8E4M3FN>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf8E4M3FN>) -> ()
}) {sym_name = "tr", function_type = (tensor<8x4xf8E4M3FN>) -> tensor<4x8xf8E4M3FN>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {kind = "opaque", block_dim = 1 : i64, buffer_num = 2 : i64, reason = "ascend.transpose has no vector tiling"}} : () -> ()

// -----

// A vector kernel on fp8: no vector type, and no scalar-unit type either.
"ascend.kernel"() ({
^bb0(%a: tensor<64xf8E4M3FN>):
  %0 = "ascend.unary"(%a) {kind = "abs"} : (tensor<64xf8E4M3FN>) -> tensor<64xf8E4M3FN>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf8E4M3FN>) -> ()
}) {sym_name = "abs_f8", function_type = (tensor<64xf8E4M3FN>) -> tensor<64xf8E4M3FN>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {kind = "elementwise", block_dim = 1 : i64, buffer_num = 2 : i64, total = 64 : i64, block_elems = 64 : i64, last_block_elems = 64 : i64, tile_elems = 64 : i64, tile_num = 1 : i64, tail_tile_elems = 64 : i64, last_tile_num = 1 : i64, last_tail_tile_elems = 64 : i64, align_elems = 4 : i64}} : () -> ()
