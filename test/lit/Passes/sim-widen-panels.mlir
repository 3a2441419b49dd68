// RUN: npu-opt %s --split-input-file --sim-widen-panels | FileCheck %s

// A half-precision contraction whose body only widens its operands reads f32 panels, each
// widened once by an elementwise op of its own, not in every register tile's K step.
// CHECK-LABEL: func.func @f16_contraction_reads_f32_panels
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<64x32xf16>) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<32x48xf16>) outs(%{{.*}} : tensor<32x48xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<64x32xf32>, tensor<32x48xf32>)
// CHECK-NOT: arith.extf
// CHECK: return
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @f16_contraction_reads_f32_panels(%x: tensor<64x32xf16>, %y: tensor<32x48xf16>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<64x32xf16>, tensor<32x48xf16>) outs(%acc : tensor<64x48xf32>) {
  ^bb0(%p: f16, %q: f16, %o: f32):
    %pw = arith.extf %p : f16 to f32
    %qw = arith.extf %q : f16 to f32
    %m = arith.mulf %pw, %qw : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}


// -----

// A transposed operand (nn.Linear's weight.t()) whose lanes are strided is copied row-major once,
// read in its memory order; the contraction reads the copy.
// CHECK-LABEL: func.func @transposed_operand_packed
// CHECK: %[[T:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<32x48xf32, strided<[1, 32]>> to memref<48x32xf32, strided<[32, 1]>>
// CHECK: %[[S:.*]] = bufferization.to_tensor %[[T]] restrict
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<48x32xf32>) outs(%{{.*}} : tensor<32x48xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[P]] : tensor<64x32xf32>, tensor<32x48xf32>)


func.func @transposed_operand_packed(%x: tensor<64x32xf32>, %w: memref<48x32xf32>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %t = memref.transpose %w (i, j) -> (j, i) : memref<48x32xf32> to memref<32x48xf32, strided<[1, 32]>>
  %y = bufferization.to_tensor %t restrict : memref<32x48xf32, strided<[1, 32]>> to tensor<32x48xf32>
  %e = tensor.empty() : tensor<64x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<64x32xf32>, tensor<32x48xf32>) outs(%acc : tensor<64x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

// A contraction of f32 operands read in place is left alone.
// CHECK-LABEL: func.func @f32_row_major_untouched
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @f32_row_major_untouched(%x: tensor<8x4xf32>, %y: tensor<4x8xf32>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<8x4xf32>, tensor<4x8xf32>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
