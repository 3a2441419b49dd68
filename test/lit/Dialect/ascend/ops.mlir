// RUN: npu-opt %s | npu-opt | FileCheck %s
// RUN: npu-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// GENERIC: "builtin.module"() ({
// GENERIC: "func.func"() <{function_type = (tensor<4x8xf32>, tensor<4x8xf32>, f32) -> tensor<4x8xf32>, sym_name = "elementwise"}>
// GENERIC: "ascend.unary"(%{{.*}}) {kind = "exp"}

// CHECK-LABEL: func.func @elementwise
// CHECK: "ascend.unary"(%{{.*}}) {kind = "exp"}
// CHECK: "ascend.binary"(%{{.*}}, %{{.*}}) {kind = "add"}
// CHECK: "ascend.binary"(%{{.*}}, %{{.*}}) {kind = "mul"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
// CHECK: "ascend.ternary"(%{{.*}}, %{{.*}}, %{{.*}}) {kind = "clamp"}
// CHECK: "ascend.cast"(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK: "ascend.compare"(%{{.*}}, %{{.*}}) {predicate = "gt"}
// CHECK: "ascend.select"
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf32> {
  %0 = "ascend.unary"(%a) {kind = "exp"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ascend.binary"(%0, %b) {kind = "add"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "ascend.binary"(%1, %s) {kind = "mul"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
  %3 = "ascend.ternary"(%2, %s, %s) {kind = "clamp"} : (tensor<4x8xf32>, f32, f32) -> tensor<4x8xf32>
  %4 = "ascend.cast"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %5 = "ascend.compare"(%3, %b) {predicate = "gt"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %6 = "ascend.select"(%5, %3, %b) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %6 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @shapes
// CHECK: "ascend.broadcast"(%{{.*}}) {dims = array<i64: 0>} : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: "ascend.reduce"(%{{.*}}) {dims = array<i64: 1>, keepdim = true, kind = "sum"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK: "ascend.broadcast"(%{{.*}}) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: "ascend.reduce"(%{{.*}}) {dims = array<i64: 0, 1>, keepdim = false, kind = "mean"} : (tensor<4x8xf32>) -> tensor<f32>
// CHECK: "ascend.transpose"(%{{.*}}) {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
func.func @shapes(%v: tensor<8xf32>) -> (tensor<4x1xf32>, tensor<f32>, tensor<8x4xf32>) {
  %0 = "ascend.broadcast"(%v) {dims = array<i64: 0>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "ascend.reduce"(%0) {kind = "sum", dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %stretched = "ascend.broadcast"(%1) {dims = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = "ascend.reduce"(%0) {kind = "mean", dims = array<i64: 0, 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  %3 = "ascend.transpose"(%0) {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %1, %2, %3 : tensor<4x1xf32>, tensor<f32>, tensor<8x4xf32>
}

// CHECK-LABEL: func.func @cube
// CHECK: "ascend.format_cast"(%{{.*}}) : (tensor<32x64xf16>) -> tensor<32x64xf16, #ascend.format<"FRACTAL_NZ">>
// CHECK: "ascend.matmul"(%{{.*}}, %{{.*}}) {acc_type = f32, transpose_a = false, transpose_b = true}
// CHECK: "ascend.matmul"(%{{.*}}, %{{.*}}, %{{.*}}) {acc_type = f32, transpose_a = false, transpose_b = false}
// CHECK: "ascend.batch_matmul"
// CHECK: "ascend.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
func.func @cube(%a: tensor<32x64xf16>, %b: tensor<16x64xf16>, %c: tensor<64x16xf16>, %bias: tensor<16xf16>,
                %ba: tensor<2x4x8xf32>, %bb: tensor<2x8x3xf32>,
                %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %wb: tensor<4xf32>) {
  %nz = "ascend.format_cast"(%a) : (tensor<32x64xf16>) -> tensor<32x64xf16, #ascend.format<"FRACTAL_NZ">>
  %0 = "ascend.matmul"(%nz, %b) {transpose_a = false, transpose_b = true, acc_type = f32} : (tensor<32x64xf16, #ascend.format<"FRACTAL_NZ">>, tensor<16x64xf16>) -> tensor<32x16xf16>
  %1 = "ascend.matmul"(%a, %c, %bias) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<32x64xf16>, tensor<64x16xf16>, tensor<16xf16>) -> tensor<32x16xf16>
  %2 = "ascend.batch_matmul"(%ba, %bb) {transpose_a = false, transpose_b = false, acc_type = f32} : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  %3 = "ascend.conv2d"(%x, %w, %wb) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return
}

// CHECK: "ascend.kernel"() ({
// CHECK: "ascend.yield"
// CHECK-NEXT: block_dim = 8 : i64, core_type = "aiv", function_type = (tensor<64xf32>) -> tensor<64xf32>, fusion = "elementwise", sym_name = "k0", tiling = {ub_tile = 8 : i64}
"ascend.kernel"() ({
^bb0(%x: tensor<64xf32>):
  %0 = "ascend.unary"(%x) {kind = "relu"} : (tensor<64xf32>) -> tensor<64xf32>
  "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf32>) -> ()
}) {sym_name = "k0", function_type = (tensor<64xf32>) -> tensor<64xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 8, tiling = {ub_tile = 8}} : () -> ()

// CHECK-LABEL: func.func @host
// CHECK: "ascend.launch"(%{{.*}}) {callee = @k0, operandSegmentSizes = array<i32: 1, 0, {{.*}}>} : (tensor<64xf32>) -> tensor<64xf32>
func.func @host(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "ascend.launch"(%x) {callee = @k0, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// CHECK: "ascend.kernel"() ({
// CHECK: "ascend.block_idx"() : () -> index
// CHECK: "ascend.alloc"() {bytes = 1024 : i64, depth = 2 : i64, space = #ascend.memspace<"ub">} : () -> memref<256xf32, #ascend.memspace<"ub">>
// CHECK: "ascend.copy_in"
// CHECK: "ascend.vunary"
// CHECK: "ascend.vbinary"
// CHECK: "ascend.set_flag"() {dst_pipe = "MTE3", event_id = 0 : i64, src_pipe = "V"}
// CHECK: "ascend.wait_flag"
// CHECK: "ascend.copy_out"
// CHECK: "ascend.load_l0"
// CHECK: "ascend.mmad"
// CHECK: "ascend.fixpipe"
// CHECK: "ascend.barrier"() {pipe = "ALL"}
// CHECK: sym_name = "tiles"
"ascend.kernel"() ({
^bb0(%in: memref<1024xf32>, %out: memref<1024xf32>, %a: memref<16x16xf16>, %c: memref<16x16xf32>):
  %i = "ascend.block_idx"() : () -> index
  %n = "ascend.block_num"() : () -> index
  %ub = "ascend.alloc"() {space = #ascend.memspace<"ub">, bytes = 1024, depth = 2} : () -> memref<256xf32, #ascend.memspace<"ub">>
  %ub2 = "ascend.alloc"() {space = #ascend.memspace<"ub">, bytes = 1024, depth = 2} : () -> memref<256xf32, #ascend.memspace<"ub">>
  %tile = memref.subview %in[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
  "ascend.copy_in"(%tile, %ub) : (memref<256xf32, strided<[1]>>, memref<256xf32, #ascend.memspace<"ub">>) -> ()
  "ascend.vunary"(%ub, %ub2) {kind = "exp"} : (memref<256xf32, #ascend.memspace<"ub">>, memref<256xf32, #ascend.memspace<"ub">>) -> ()
  %two = arith.constant 2.0 : f32
  "ascend.vbinary"(%ub2, %two, %ub2) {kind = "mul"} : (memref<256xf32, #ascend.memspace<"ub">>, f32, memref<256xf32, #ascend.memspace<"ub">>) -> ()
  "ascend.set_flag"() {src_pipe = "V", dst_pipe = "MTE3", event_id = 0} : () -> ()
  "ascend.wait_flag"() {src_pipe = "V", dst_pipe = "MTE3", event_id = 0} : () -> ()
  %otile = memref.subview %out[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
  "ascend.copy_out"(%ub2, %otile) : (memref<256xf32, #ascend.memspace<"ub">>, memref<256xf32, strided<[1]>>) -> ()
  %l1 = "ascend.alloc"() {space = #ascend.memspace<"l1">, bytes = 512, depth = 1} : () -> memref<16x16xf16, #ascend.memspace<"l1">>
  %l0a = "ascend.alloc"() {space = #ascend.memspace<"l0a">, bytes = 512, depth = 1} : () -> memref<16x16xf16, #ascend.memspace<"l0a">>
  %l0b = "ascend.alloc"() {space = #ascend.memspace<"l0b">, bytes = 512, depth = 1} : () -> memref<16x16xf16, #ascend.memspace<"l0b">>
  %l0c = "ascend.alloc"() {space = #ascend.memspace<"l0c">, bytes = 1024, depth = 1} : () -> memref<16x16xf32, #ascend.memspace<"l0c">>
  "ascend.copy_in"(%a, %l1) : (memref<16x16xf16>, memref<16x16xf16, #ascend.memspace<"l1">>) -> ()
  "ascend.load_l0"(%l1, %l0a) {transpose = false} : (memref<16x16xf16, #ascend.memspace<"l1">>, memref<16x16xf16, #ascend.memspace<"l0a">>) -> ()
  "ascend.load_l0"(%l1, %l0b) {transpose = true} : (memref<16x16xf16, #ascend.memspace<"l1">>, memref<16x16xf16, #ascend.memspace<"l0b">>) -> ()
  "ascend.mmad"(%l0a, %l0b, %l0c) {init = true} : (memref<16x16xf16, #ascend.memspace<"l0a">>, memref<16x16xf16, #ascend.memspace<"l0b">>, memref<16x16xf32, #ascend.memspace<"l0c">>) -> ()
  "ascend.fixpipe"(%l0c, %c) : (memref<16x16xf32, #ascend.memspace<"l0c">>, memref<16x16xf32>) -> ()
  "ascend.barrier"() {pipe = "ALL"} : () -> ()
  "ascend.yield"() {operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : () -> ()
}) {sym_name = "tiles", function_type = (memref<1024xf32>, memref<1024xf32>, memref<16x16xf16>, memref<16x16xf32>) -> (), core_type = "mix", fusion = "matmul_epilogue", block_dim = 1, tiling = {}} : () -> ()
