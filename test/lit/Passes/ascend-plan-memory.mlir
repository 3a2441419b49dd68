// RUN: npu-opt %s --split-input-file --verify-diagnostics --ascend-plan-memory | FileCheck %s

// Four chained ops with three temporaries: %0 dies when %2 is defined, so %2 reuses its slot;
// queues (double-buffered) own their bytes, temporaries need two slots, not three.
// CHECK-LABEL: func.func private @temporaries_share_slots_by_liveness
// CHECK: memory_plan = {ub = {in0 = array<i64: 0, 8192>, out0 = array<i64: 8192, 8192>, slot0 = array<i64: 16384, 4096>, slot1 = array<i64: 20480, 4096>}}
// CHECK-NOT: slot2
func.func private @temporaries_share_slots_by_liveness()
"ascend.kernel"() ({
^bb0(%a: tensor<4096xf32>):
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<4096xf32>) -> tensor<4096xf32>
  %1 = "ascend.unary"(%0) {kind = "abs"} : (tensor<4096xf32>) -> tensor<4096xf32>
  %2 = "ascend.unary"(%1) {kind = "sqrt"} : (tensor<4096xf32>) -> tensor<4096xf32>
  %3 = "ascend.unary"(%2) {kind = "relu"} : (tensor<4096xf32>) -> tensor<4096xf32>
  "ascend.yield"(%3) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4096xf32>) -> ()
}) {sym_name = "chain4", function_type = (tensor<4096xf32>) -> tensor<4096xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 4, tiling = {kind = "elementwise", tile_elems = 1024 : i64, align_elems = 8 : i64, buffer_num = 2 : i64, block_dim = 4 : i64}} : () -> ()

// -----

// Cube buffers: A/B tiles in L1 and L0A/L0B double-buffered (K padded to 16), the fp32 accumulator in L0C.
// CHECK-LABEL: func.func private @matmul_buffers_per_space
// CHECK: memory_plan = {l0a = {a2 = array<i64: 0, 16384>}, l0b = {b2 = array<i64: 0, 16384>}, l0c = {c1 = array<i64: 0, 16384>}, l1 = {a1 = array<i64: 0, 16384>, b1 = array<i64: 16384, 16384>}}
func.func private @matmul_buffers_per_space()
"ascend.kernel"() ({
^bb0(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>):
  %0 = "ascend.matmul"(%a, %b) {acc_type = f32, transpose_a = false, transpose_b = false} : (tensor<128x64xf16>, tensor<64x128xf16>) -> tensor<128x128xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128x128xf32>) -> ()
}) {sym_name = "mm", function_type = (tensor<128x64xf16>, tensor<64x128xf16>) -> tensor<128x128xf32>, core_type = "aic", fusion = "single", block_dim = 4, tiling = {kind = "matmul", base_m = 64 : i64, base_n = 64 : i64, base_k = 64 : i64, buffer_num = 2 : i64}} : () -> ()

// -----

// An opaque kernel has no local buffers to place.
// CHECK-LABEL: func.func private @opaque_kernel_gets_an_empty_plan
// CHECK: memory_plan = {}
func.func private @opaque_kernel_gets_an_empty_plan()
"ascend.kernel"() ({
^bb0(%a: tensor<8x4xf32>):
  %0 = "ascend.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4x8xf32>) -> ()
}) {sym_name = "tr", function_type = (tensor<8x4xf32>) -> tensor<4x8xf32>, core_type = "aiv", fusion = "single", block_dim = 1, tiling = {kind = "opaque", block_dim = 1 : i64, buffer_num = 2 : i64, reason = "ascend.transpose has no vector tiling"}} : () -> ()

// -----

// A forced tile of 20000 fp32 elements x (2 + 2) queue buffers overflows the 192 KiB UB.
// expected-error@+1 {{kernel @too_big does not fit Ascend910B1: needs 320000 bytes of UB (in0 160000 B, out0 160000 B) but the core has 196608}}
"ascend.kernel"() ({
^bb0(%a: tensor<40000xf32>):
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<40000xf32>) -> tensor<40000xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<40000xf32>) -> ()
}) {sym_name = "too_big", function_type = (tensor<40000xf32>) -> tensor<40000xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 2, tiling = {kind = "elementwise", tile_elems = 20000 : i64, align_elems = 8 : i64, buffer_num = 2 : i64, block_dim = 2 : i64}} : () -> ()

// -----

// Planning needs the tiling: a kernel that skipped ascend-tile is an error, not a guess.
// expected-error@+1 {{kernel @untiled has no tiling record; run ascend-tile first}}
"ascend.kernel"() ({
^bb0(%a: tensor<16xf32>):
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<16xf32>) -> tensor<16xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xf32>) -> ()
}) {sym_name = "untiled", function_type = (tensor<16xf32>) -> tensor<16xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()
