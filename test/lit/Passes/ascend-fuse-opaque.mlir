// RUN: npu-opt %s --split-input-file --ascend-fuse | FileCheck %s
// RUN: npu-opt %s --split-input-file --ascend-fuse --ascend-verify-host | FileCheck %s --check-prefix=HOST

// Upstream ops raising leaves alone go into `opaque` kernels, so the host function computes
// nothing (ascend-verify-host passes). A value+index reduction reads two fills: the three ops are
// one group, outlined once, its kernel yielding both results (one run of types each); the
// constants and tensor.empty ops it reads are cloned in.
// CHECK-LABEL: "ascend.kernel"
// CHECK: ^bb0(%[[X:.*]]: tensor<16x32xf32>):
// CHECK-DAG: arith.constant 0xFF800000 : f32
// CHECK-DAG: tensor.empty() : tensor<16xi64>
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: "ascend.yield"(%[[R]]#0, %[[R]]#1) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xf32>, tensor<16xi64>) -> ()
// CHECK: fusion = "opaque", sym_name = "max_dim_opaque_0"
// CHECK-NOT: "ascend.kernel"
// CHECK-LABEL: func.func @max_dim
// CHECK: %[[L:.*]]:2 = "ascend.launch"(%arg0) {callee = @max_dim_opaque_0, {{.*}}resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16x32xf32>) -> (tensor<16xf32>, tensor<16xi64>)
// CHECK-NEXT: return %[[L]]#0, %[[L]]#1
// CHECK-NOT: linalg
// HOST-LABEL: func.func @max_dim
// HOST-NOT: linalg
// HOST: return
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @max_dim(%arg0: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<16xi64>) {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<16xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<16xi64>) -> tensor<16xi64>
  %2 = tensor.empty() : tensor<16xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<16xf32>) -> tensor<16xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<16x32xf32>) outs(%3, %1 : tensor<16xf32>, tensor<16xi64>) {
  ^bb0(%in: f32, %out: f32, %out_0: i64):
    %5 = linalg.index 1 : index
    %6 = arith.index_cast %5 : index to i64
    %7 = arith.maximumf %in, %out : f32
    %8 = arith.cmpf ogt, %in, %out : f32
    %9 = arith.select %8, %6, %out_0 : i64
    linalg.yield %7, %9 : f32, i64
  } -> (tensor<16xf32>, tensor<16xi64>)
  return %4#0, %4#1 : tensor<16xf32>, tensor<16xi64>
}

// -----

// A gather's body reads its source through tensor.extract, captured from the host: the source
// becomes a kernel argument (the kernel stays isolated from above), the index constant is cloned.
// CHECK-LABEL: "ascend.kernel"
// CHECK: ^bb0(%[[I:.*]]: tensor<4x3xi64>, %[[SRC:.*]]: tensor<4x8xf32>):
// CHECK: arith.constant 8 : index
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<4x3xi64>)
// CHECK: tensor.extract %[[SRC]]
// CHECK: fusion = "opaque"
// CHECK-LABEL: func.func @gather
// CHECK: "ascend.launch"(%arg1, %arg0)
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @gather(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %c8 = arith.constant 8 : index
  %0 = tensor.empty() : tensor<4x3xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<4x3xi64>) outs(%0 : tensor<4x3xf32>) {
  ^bb0(%in: i64, %out: f32):
    %2 = linalg.index 0 : index
    %3 = arith.index_cast %in : i64 to index
    %4 = arith.cmpi slt, %3, %c8 : index
    cf.assert %4, "index must be smaller than dim size"
    %extracted = tensor.extract %arg0[%2, %3] : tensor<4x8xf32>
    linalg.yield %extracted : f32
  } -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// tensor.concat is a kernel; a result that is an argument, or a view of one, gets a copy
// kernel of its own (a launch list writes every result into its own buffer).
// CHECK-LABEL: "ascend.kernel"
// CHECK: tensor.concat dim(0)
// CHECK: fusion = "opaque"
// CHECK-LABEL: "ascend.kernel"
// CHECK: linalg.copy
// CHECK: fusion = "opaque"
// CHECK-LABEL: func.func @concat_and_alias
// CHECK: %[[C:.*]] = "ascend.launch"(%arg0, %arg1)
// CHECK: %[[V:.*]] = tensor.collapse_shape %arg0
// CHECK: %[[A:.*]] = "ascend.launch"(%[[V]])
// CHECK: return %[[C]], %[[A]]
func.func @concat_and_alias(%arg0: tensor<4x8xf32>, %arg1: tensor<3x8xf32>) -> (tensor<7x8xf32>, tensor<32xf32>) {
  %concat = tensor.concat dim(0) %arg0, %arg1 : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<7x8xf32>
  %v = tensor.collapse_shape %arg0 [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %concat, %v : tensor<7x8xf32>, tensor<32xf32>
}

// -----

// A generic that only checks (no results: torch-mlir's index-bounds cf.asserts) joins the next
// opaque group, so its checks run inside a kernel that has an output.
// CHECK-LABEL: "ascend.kernel"
// CHECK: cf.assert
// CHECK: tensor.extract
// CHECK: "ascend.yield"
// CHECK-LABEL: func.func @checked_gather
// CHECK-COUNT-1: "ascend.launch"
// CHECK-NOT: linalg
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @checked_gather(%arg0: tensor<4x8xf32>, %arg1: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : i64
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<4x3xi64>) {
  ^bb0(%in: i64):
    %ok = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ok, "index must be larger or equal to 0"
    linalg.yield
  }
  %0 = tensor.empty() : tensor<4x3xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<4x3xi64>) outs(%0 : tensor<4x3xf32>) {
  ^bb0(%in: i64, %out: f32):
    %2 = linalg.index 0 : index
    %3 = arith.index_cast %in : i64 to index
    %extracted = tensor.extract %arg0[%2, %3] : tensor<4x8xf32>
    linalg.yield %extracted : f32
  } -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// A reshaped tensor.empty read by an opaque op is cloned with its reshape (a launch list has no
// buffer for an empty).
// CHECK-LABEL: "ascend.kernel"
// CHECK: ^bb0(%{{.*}}: tensor<4x8xf32>):
// CHECK: tensor.empty() : tensor<32xf32>
// CHECK: tensor.expand_shape
// CHECK: linalg.copy
// CHECK-LABEL: func.func @empty_view
// CHECK: "ascend.launch"(%arg0)
func.func @empty_view(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<32xf32>
  %v = tensor.expand_shape %e [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  %0 = linalg.copy ins(%arg0 : tensor<4x8xf32>) outs(%v : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// max_pool2d_with_indices: the index generic's region reads the padded input, another member's
// result. That read is inside the group: the pad is no kernel output, and one kernel computes
// the pooled values and their indices (no kernel reads a launch the host defines later).
// CHECK-LABEL: "ascend.kernel"
// CHECK: tensor.pad
// CHECK: linalg.pooling_nchw_max
// CHECK: tensor.extract %padded
// CHECK: "ascend.yield"(%{{.*}}, %{{.*}}) {{.*}}: (tensor<1x1x1x3xf32>, tensor<1x1x1x3xi64>) -> ()
// CHECK-NOT: "ascend.kernel"
// CHECK-LABEL: func.func @max_pool_with_indices
// CHECK-COUNT-1: "ascend.launch"(%arg0) {callee
// CHECK-NOT: ascend.launch
// CHECK: return
#map = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
func.func @max_pool_with_indices(%arg0: tensor<1x1x3x6xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x1x3xi64>) {
  %cst = arith.constant 0xFF800000 : f32
  %c2 = arith.constant 2 : index
  %c-1_i64 = arith.constant -1 : i64
  %c0 = arith.constant 0 : index
  %padded = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 2, 2] {
  ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
    tensor.yield %cst : f32
  } : tensor<1x1x3x6xf32> to tensor<1x1x5x8xf32>
  %0 = tensor.empty() : tensor<1x1x1x3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  %2 = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %2 : tensor<1x1x5x8xf32>, tensor<3x3xf32>) outs(%1 : tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  %4 = tensor.empty() : tensor<1x1x1x3xi64>
  %5 = linalg.fill ins(%c-1_i64 : i64) outs(%4 : tensor<1x1x1x3xi64>) -> tensor<1x1x1x3xi64>
  %6 = tensor.empty() : tensor<3x3xi64>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%3, %6 : tensor<1x1x1x3xf32>, tensor<3x3xi64>) outs(%5 : tensor<1x1x1x3xi64>) {
  ^bb0(%in: f32, %in_0: i64, %out: i64):
    %8 = linalg.index 4 : index
    %9 = linalg.index 3 : index
    %10 = linalg.index 5 : index
    %11 = arith.muli %9, %c2 : index
    %12 = arith.addi %11, %10 : index
    %extracted = tensor.extract %padded[%c0, %c0, %8, %12] : tensor<1x1x5x8xf32>
    %13 = arith.cmpf oeq, %extracted, %in : f32
    %14 = arith.index_cast %12 : index to i64
    %15 = arith.select %13, %14, %out : i64
    %16 = arith.cmpi eq, %out, %c-1_i64 : i64
    %17 = arith.select %16, %15, %out : i64
    linalg.yield %17 : i64
  } -> tensor<1x1x1x3xi64>
  return %3, %7 : tensor<1x1x1x3xf32>, tensor<1x1x1x3xi64>
}

// -----

// A result torch-mlir folded to a splat constant is written by a fill kernel: no kernel would
// otherwise write the host's constant into the result's buffer.
// CHECK-LABEL: "ascend.kernel"
// CHECK: %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: linalg.fill ins(%[[C]] : f32)
// CHECK: fusion = "opaque", sym_name = "constant_result_opaque_0"
// CHECK-LABEL: func.func @constant_result
// CHECK: %[[R:.*]] = "ascend.launch"() {callee = @constant_result_opaque_0
// CHECK: return %[[R]]
func.func @constant_result() -> tensor<3x5xf32> {
  %c = arith.constant dense<2.5> : tensor<3x5xf32>
  return %c : tensor<3x5xf32>
}

// -----

// A returned constant (torch-mlir folded the result at compile time): a splat gets a fill kernel,
// any other constant a copy kernel with the constant cloned in; the host function only launches.
// CHECK-LABEL: "ascend.kernel"
// CHECK: arith.constant 1.500000e+00 : f32
// CHECK: linalg.fill
// CHECK: fusion = "opaque"
// CHECK-LABEL: "ascend.kernel"
// CHECK: arith.constant dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK: linalg.copy
// CHECK: fusion = "opaque"
// CHECK-LABEL: func.func @constant_results
// CHECK: %[[S:.*]] = "ascend.launch"()
// CHECK: %[[C:.*]] = "ascend.launch"()
// CHECK: return %[[S]], %[[C]]
// HOST-LABEL: func.func @constant_results
func.func @constant_results() -> (tensor<4xf32>, tensor<2xf32>) {
  %s = arith.constant dense<1.5> : tensor<4xf32>
  %c = arith.constant dense<[1.0, 2.5]> : tensor<2xf32>
  return %s, %c : tensor<4xf32>, tensor<2xf32>
}

// -----

// An opaque kernel yields its results grouped by type (f32, f32, i64: two runs, where program
// order would give three), so a group with few result types never runs out of yield groups; the
// launch's results go back to their users in the host's order.
// CHECK-LABEL: "ascend.kernel"
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: %[[C:.*]] = linalg.copy
// CHECK: "ascend.yield"(%[[R]]#0, %[[C]], %[[R]]#1) {operandSegmentSizes = array<i32: 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}
// CHECK-LABEL: func.func @results_grouped_by_type
// CHECK: %[[L:.*]]:3 = "ascend.launch"(%arg0)
// CHECK-NEXT: return %[[L]]#0, %[[L]]#2, %[[L]]#1
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @results_grouped_by_type(%arg0: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<16xi64>, tensor<16xf32>) {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<16xi64>
  %1 = linalg.fill ins(%c0_i64 : i64) outs(%0 : tensor<16xi64>) -> tensor<16xi64>
  %2 = tensor.empty() : tensor<16xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<16xf32>) -> tensor<16xf32>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<16x32xf32>) outs(%3, %1 : tensor<16xf32>, tensor<16xi64>) {
  ^bb0(%in: f32, %out: f32, %out_0: i64):
    %5 = linalg.index 1 : index
    %6 = arith.index_cast %5 : index to i64
    %7 = arith.maximumf %in, %out : f32
    %8 = arith.cmpf ogt, %in, %out : f32
    %9 = arith.select %8, %6, %out_0 : i64
    linalg.yield %7, %9 : f32, i64
  } -> (tensor<16xf32>, tensor<16xi64>)
  %e = tensor.empty() : tensor<16xf32>
  %c = linalg.copy ins(%4#0 : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %4#0, %4#1, %c : tensor<16xf32>, tensor<16xi64>, tensor<16xf32>
}

// -----

// An opaque group of 5 result types (the pads of 5 sizes; one of avg_pool2d_backward's groups
// yields 9) is one kernel: a yield stores up to RESULT_TYPE_RUNS = 16 runs of equal types.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.yield"({{.*}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>}
// CHECK: sym_name = "pads_opaque_0"
// CHECK-NOT: "ascend.kernel"
// CHECK-LABEL: func.func @pads
// CHECK-COUNT-1: "ascend.launch"(%arg0)
// CHECK-NOT: "ascend.launch"
// CHECK-NOT: tensor.pad
func.func @pads(%arg0: tensor<2xf32>) -> (tensor<3xf32>, tensor<4xf32>, tensor<5xf32>, tensor<6xf32>, tensor<7xf32>) {
  %cst = arith.constant 0.0 : f32
  %p0 = tensor.pad %arg0 low[0] high[1] {
  ^bb0(%i0: index):
    tensor.yield %cst : f32
  } : tensor<2xf32> to tensor<3xf32>
  %p1 = tensor.pad %p0 low[0] high[1] {
  ^bb0(%i1: index):
    tensor.yield %cst : f32
  } : tensor<3xf32> to tensor<4xf32>
  %p2 = tensor.pad %p1 low[0] high[1] {
  ^bb0(%i2: index):
    tensor.yield %cst : f32
  } : tensor<4xf32> to tensor<5xf32>
  %p3 = tensor.pad %p2 low[0] high[1] {
  ^bb0(%i3: index):
    tensor.yield %cst : f32
  } : tensor<5xf32> to tensor<6xf32>
  %p4 = tensor.pad %p3 low[0] high[1] {
  ^bb0(%i4: index):
    tensor.yield %cst : f32
  } : tensor<6xf32> to tensor<7xf32>
  return %p0, %p1, %p2, %p3, %p4 : tensor<3xf32>, tensor<4xf32>, tensor<5xf32>, tensor<6xf32>, tensor<7xf32>
}

// -----

// More result types than a yield stores (17 > 16): outlined once per 16 of them, the second
// kernel recomputing the group for its one type.
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.yield"({{.*}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1>}
// CHECK: sym_name = "many_pads_opaque_0"
// CHECK-LABEL: "ascend.kernel"
// CHECK: "ascend.yield"({{.*}}) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<19xf32>) -> ()
// CHECK: sym_name = "many_pads_opaque_1"
// CHECK-LABEL: func.func @many_pads
// CHECK-COUNT-2: "ascend.launch"(%arg0)
// CHECK-NOT: tensor.pad
func.func @many_pads(%arg0: tensor<2xf32>) -> (tensor<3xf32>, tensor<4xf32>, tensor<5xf32>, tensor<6xf32>, tensor<7xf32>, tensor<8xf32>, tensor<9xf32>, tensor<10xf32>, tensor<11xf32>, tensor<12xf32>, tensor<13xf32>, tensor<14xf32>, tensor<15xf32>, tensor<16xf32>, tensor<17xf32>, tensor<18xf32>, tensor<19xf32>) {
  %cst = arith.constant 0.0 : f32
  %p0 = tensor.pad %arg0 low[0] high[1] {
  ^bb0(%i0: index):
    tensor.yield %cst : f32
  } : tensor<2xf32> to tensor<3xf32>
  %p1 = tensor.pad %p0 low[0] high[1] {
  ^bb0(%i1: index):
    tensor.yield %cst : f32
  } : tensor<3xf32> to tensor<4xf32>
  %p2 = tensor.pad %p1 low[0] high[1] {
  ^bb0(%i2: index):
    tensor.yield %cst : f32
  } : tensor<4xf32> to tensor<5xf32>
  %p3 = tensor.pad %p2 low[0] high[1] {
  ^bb0(%i3: index):
    tensor.yield %cst : f32
  } : tensor<5xf32> to tensor<6xf32>
  %p4 = tensor.pad %p3 low[0] high[1] {
  ^bb0(%i4: index):
    tensor.yield %cst : f32
  } : tensor<6xf32> to tensor<7xf32>
  %p5 = tensor.pad %p4 low[0] high[1] {
  ^bb0(%i5: index):
    tensor.yield %cst : f32
  } : tensor<7xf32> to tensor<8xf32>
  %p6 = tensor.pad %p5 low[0] high[1] {
  ^bb0(%i6: index):
    tensor.yield %cst : f32
  } : tensor<8xf32> to tensor<9xf32>
  %p7 = tensor.pad %p6 low[0] high[1] {
  ^bb0(%i7: index):
    tensor.yield %cst : f32
  } : tensor<9xf32> to tensor<10xf32>
  %p8 = tensor.pad %p7 low[0] high[1] {
  ^bb0(%i8: index):
    tensor.yield %cst : f32
  } : tensor<10xf32> to tensor<11xf32>
  %p9 = tensor.pad %p8 low[0] high[1] {
  ^bb0(%i9: index):
    tensor.yield %cst : f32
  } : tensor<11xf32> to tensor<12xf32>
  %p10 = tensor.pad %p9 low[0] high[1] {
  ^bb0(%i10: index):
    tensor.yield %cst : f32
  } : tensor<12xf32> to tensor<13xf32>
  %p11 = tensor.pad %p10 low[0] high[1] {
  ^bb0(%i11: index):
    tensor.yield %cst : f32
  } : tensor<13xf32> to tensor<14xf32>
  %p12 = tensor.pad %p11 low[0] high[1] {
  ^bb0(%i12: index):
    tensor.yield %cst : f32
  } : tensor<14xf32> to tensor<15xf32>
  %p13 = tensor.pad %p12 low[0] high[1] {
  ^bb0(%i13: index):
    tensor.yield %cst : f32
  } : tensor<15xf32> to tensor<16xf32>
  %p14 = tensor.pad %p13 low[0] high[1] {
  ^bb0(%i14: index):
    tensor.yield %cst : f32
  } : tensor<16xf32> to tensor<17xf32>
  %p15 = tensor.pad %p14 low[0] high[1] {
  ^bb0(%i15: index):
    tensor.yield %cst : f32
  } : tensor<17xf32> to tensor<18xf32>
  %p16 = tensor.pad %p15 low[0] high[1] {
  ^bb0(%i16: index):
    tensor.yield %cst : f32
  } : tensor<18xf32> to tensor<19xf32>
  return %p0, %p1, %p2, %p3, %p4, %p5, %p6, %p7, %p8, %p9, %p10, %p11, %p12, %p13, %p14, %p15, %p16 : tensor<3xf32>, tensor<4xf32>, tensor<5xf32>, tensor<6xf32>, tensor<7xf32>, tensor<8xf32>, tensor<9xf32>, tensor<10xf32>, tensor<11xf32>, tensor<12xf32>, tensor<13xf32>, tensor<14xf32>, tensor<15xf32>, tensor<16xf32>, tensor<17xf32>, tensor<18xf32>, tensor<19xf32>
}
