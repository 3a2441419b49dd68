// Upstream and npu_mlir passes mix in one pipeline, with options, in the order given.
// RUN: npu-opt %s --pass-pipeline='builtin.module(canonicalize, ascend-raise-linalg, cse, ascend-fuse{max-ops=8}, canonicalize)' | FileCheck %s
// The same as per-pass flags.
// RUN: npu-opt %s --canonicalize --ascend-raise-linalg --cse --ascend-fuse=max-ops=8 --canonicalize | FileCheck %s
// Reading stdin and writing -o.
// RUN: npu-opt --ascend-raise-linalg -o %t < %s && FileCheck %s --check-prefix=RAISED < %t
// Bad pipelines and options fail before reading the input, with an ERR code.
// RUN: not npu-opt %s --pass-pipeline='builtin.module(ascend-fuse{max-ops=many})' 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: not npu-opt %s --ascend-fuse=fuel=3 2>&1 | FileCheck %s --check-prefix=NOOPT
// RUN: not npu-opt %s --pass-pipeline='builtin.module(ascend-fuse' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not npu-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not npu-opt %s --canonicalize --pass-pipeline='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=BOTH

// CHECK: "ascend.kernel"
// CHECK: "ascend.unary"(%{{.*}}) {kind = "exp"}
// CHECK: fusion = "elementwise"
// CHECK-LABEL: func.func @exp
// CHECK: "ascend.launch"
// RAISED: "ascend.unary"(%{{.*}}) {kind = "exp"}
// RAISED-NOT: ascend.kernel
// BADOPT: npu-opt: error: ERR03003 GRAPH option max-ops='many' of pass ascend-fuse is not a int
// NOOPT: npu-opt: error: ERR03003 GRAPH pass ascend-fuse has no option 'fuel' (options: max-ops, epilogue)
// SYNTAX: npu-opt: error: ERR03001 GRAPH unbalanced brackets in pipeline
// UNKNOWN: npu-opt: error: {{.*}}no-such-pass
// BOTH: npu-opt: error: ERR03001 GRAPH give passes either with --pass-pipeline or as flags, not both
#map = affine_map<(d0) -> (d0)>
func.func @exp(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
