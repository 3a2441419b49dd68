// RUN: npu-opt %s --split-input-file --ascend-split-index-checks | FileCheck %s

#map = affine_map<(d0) -> (d0)>
// A checked read of arange(5) is the index itself: the users take an assert-free copy that reads
// no tensor, and the asserts stay behind in the original, whose result is then dead.
// CHECK-LABEL: func.func @arange_read_splits_off_its_checks
// CHECK: linalg.index 0
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%arg0
// CHECK-NOT: cf.assert
// CHECK-NOT: tensor.extract
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}} ins(%arg0
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK-NOT: tensor.extract
// CHECK: return %[[COPY]]
func.func @arange_read_splits_off_its_checks(%index: tensor<2xi64>) -> tensor<2xi64> {
  %c5 = arith.constant 5 : index
  %e5 = tensor.empty() : tensor<5xi64>
  %arange = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%e5 : tensor<5xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<5xi64>
  %e2 = tensor.empty() : tensor<2xi64>
  %checked = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%index : tensor<2xi64>) outs(%e2 : tensor<2xi64>) {
  ^bb0(%in: i64, %o: i64):
    %i = arith.index_cast %in : i64 to index
    %ok = arith.cmpi slt, %i, %c5 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %arange[%i] : tensor<5xi64>
    linalg.yield %v : i64
  } -> tensor<2xi64>
  return %checked : tensor<2xi64>
}

// -----

#map = affine_map<(d0) -> (d0)>
// A gather of data keeps its asserts with the read they guard: the kernel must return before it.
// CHECK-LABEL: func.func @guarded_read_keeps_its_checks
// CHECK: linalg.generic
// CHECK: cf.assert
// CHECK: tensor.extract
// CHECK-NOT: linalg.generic
func.func @guarded_read_keeps_its_checks(%x: tensor<5xf32>, %index: tensor<2xi64>) -> tensor<2xf32> {
  %c5 = arith.constant 5 : index
  %e2 = tensor.empty() : tensor<2xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%index : tensor<2xi64>) outs(%e2 : tensor<2xf32>) {
  ^bb0(%in: i64, %o: f32):
    %i = arith.index_cast %in : i64 to index
    %ok = arith.cmpi slt, %i, %c5 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %x[%i] : tensor<5xf32>
    linalg.yield %v : f32
  } -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
