// RUN: npu-opt %s --sim-insert-windows --split-input-file | FileCheck %s

// A stride-2 insert (slice_scatter with a step): the vectorizer wrote it as if the stride were 1.
// It becomes a select over the unit-stride window it writes, reading the source through floordiv.
// CHECK: #[[READ:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
// CHECK-LABEL: func.func @strided
// CHECK: %[[W:.*]] = tensor.extract_slice %arg1[0, 1] [4, 5] [1, 1] : tensor<4x7xf32> to tensor<4x5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[READ]], #{{.*}}]
// CHECK-SAME: ins(%arg0 : tensor<4x3xf32>) outs(%[[W]] : tensor<4x5xf32>)
// CHECK: linalg.index 1
// CHECK: arith.remui
// CHECK: arith.select
// CHECK: tensor.insert_slice %{{.*}} into %arg1[0, 1] [4, 5] [1, 1] : tensor<4x5xf32> into tensor<4x7xf32>
func.func @strided(%src: tensor<4x3xf32>, %dst: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %r = tensor.insert_slice %src into %dst[0, 1] [4, 3] [1, 2] : tensor<4x3xf32> into tensor<4x7xf32>
  return %r : tensor<4x7xf32>
}

// -----

// A column (innermost size 1 where the destination's is not): the vectorizer wrote it along a row.
// Its window is widened to two columns, ending at the destination's last one; the source is read
// through a constant 0 and selected at the column's position in the window.
// CHECK: #[[COLUMN:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @last_column
// CHECK: %[[W:.*]] = tensor.extract_slice %arg1[0, 5] [4, 2] [1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[COLUMN]], #{{.*}}]{{.*}}outs(%[[W]]
// CHECK: %[[I:.*]] = linalg.index 1
// CHECK: arith.cmpi eq, %[[I]], %c1
// CHECK: tensor.insert_slice %{{.*}} into %arg1[0, 5] [4, 2] [1, 1]
func.func @last_column(%src: tensor<4x1xf32>, %dst: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %r = tensor.insert_slice %src into %dst[0, 6] [4, 1] [1, 1] : tensor<4x1xf32> into tensor<4x7xf32>
  return %r : tensor<4x7xf32>
}

// -----

// Inserts the vectorizer writes right are left as they are.
// CHECK-LABEL: func.func @block
// CHECK-NOT: linalg.generic
// CHECK: tensor.insert_slice %arg0 into %arg1[1, 2] [2, 3] [1, 1]
func.func @block(%src: tensor<2x3xf32>, %dst: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %r = tensor.insert_slice %src into %dst[1, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x7xf32>
  return %r : tensor<4x7xf32>
}
