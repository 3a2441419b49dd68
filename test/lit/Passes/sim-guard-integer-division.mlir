// RUN: npu-opt --split-input-file --pass-pipeline='builtin.module(sim-guard-integer-division)' %s | FileCheck %s

// A signed division gets a divisor that cannot trap (1 where it was 0 or where INT_MIN meets -1) and
// an assert that no divisor was zero.
// CHECK-LABEL: func.func @signed_scalar
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %arg1, %{{.*}} : i32
// CHECK: %[[OK:.*]] = arith.xori %[[ZERO]], %{{.*}} : i1
// CHECK: cf.assert %[[OK]], "integer division by zero (ZeroDivisionError)"
// CHECK: %[[MIN:.*]] = arith.cmpi eq, %arg0, %{{.*}} : i32
// CHECK: %[[NEG:.*]] = arith.cmpi eq, %arg1, %{{.*}} : i32
// CHECK: %[[OVER:.*]] = arith.andi %[[MIN]], %[[NEG]] : i1
// CHECK: %[[BAD:.*]] = arith.ori %[[ZERO]], %[[OVER]] : i1
// CHECK: %[[SAFE:.*]] = arith.select %[[BAD]], %{{.*}}, %arg1 : i32
// CHECK: arith.divsi %arg0, %[[SAFE]] : i32
func.func @signed_scalar(%a: i32, %b: i32) -> i32 {
  %0 = arith.divsi %a, %b : i32
  return %0 : i32
}

// -----

// A vector asserts once over all lanes; unsigned needs no INT_MIN case.
// CHECK-LABEL: func.func @unsigned_vector
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %arg1, %{{.*}} : vector<8xi64>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[ZERO]] : vector<8xi1> into i1
// CHECK: cf.assert
// CHECK-NOT: arith.andi
// CHECK: %[[SAFE:.*]] = arith.select %[[ZERO]], %{{.*}}, %arg1 : vector<8xi1>, vector<8xi64>
// CHECK: arith.remui %arg0, %[[SAFE]] : vector<8xi64>
func.func @unsigned_vector(%a: vector<8xi64>, %b: vector<8xi64>) -> vector<8xi64> {
  %0 = arith.remui %a, %b : vector<8xi64>
  return %0 : vector<8xi64>
}

// -----

// Float division is left alone.
// CHECK-LABEL: func.func @float_untouched
// CHECK-NOT: cf.assert
// CHECK: arith.divf
func.func @float_untouched(%a: f32, %b: f32) -> f32 {
  %0 = arith.divf %a, %b : f32
  return %0 : f32
}

// -----

// Index arithmetic (adaptive pooling's window bounds) is guarded as 64-bit.
// CHECK-LABEL: func.func @index_division
// CHECK: cf.assert
// CHECK: arith.select
// CHECK: arith.floordivsi
func.func @index_division(%a: index, %b: index) -> index {
  %0 = arith.floordivsi %a, %b : index
  return %0 : index
}

// -----

// A vectorized tail step's divisor is a masked load: lanes past the mask are poison, so they are
// checked for nothing and divide by 1 (select, since `and` keeps a poison lane poison).
// CHECK-LABEL: func.func @masked_tail
// CHECK: %[[B:.*]] = vector.maskedload %arg1[%c0], %[[M:.*]], %{{.*}}
// CHECK: %[[Z:.*]] = arith.cmpi eq, %[[B]]
// CHECK: %[[LIVE:.*]] = arith.select %[[M]], %[[Z]], %{{.*}} : vector<8xi1>, vector<8xi1>
// CHECK: vector.reduction <or>, %[[LIVE]]
// CHECK: cf.assert
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[B]]
// CHECK: %[[D:.*]] = arith.select %[[M]], %[[SAFE]], %{{.*}} : vector<8xi1>, vector<8xi64>
// CHECK: arith.remsi %{{.*}}, %[[D]]
func.func @masked_tail(%a: memref<10xi64>, %b: memref<10xi64>, %n: index) -> vector<8xi64> {
  %c0 = arith.constant 0 : index
  %pass = ub.poison : vector<8xi64>
  %m = vector.create_mask %n : vector<8xi1>
  %x = vector.maskedload %a[%c0], %m, %pass : memref<10xi64>, vector<8xi1>, vector<8xi64> into vector<8xi64>
  %y = vector.maskedload %b[%c0], %m, %pass : memref<10xi64>, vector<8xi1>, vector<8xi64> into vector<8xi64>
  %r = arith.remsi %x, %y : vector<8xi64>
  return %r : vector<8xi64>
}
