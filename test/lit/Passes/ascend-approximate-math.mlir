// RUN: npu-opt --split-input-file --pass-pipeline='builtin.module(ascend-approximate-math)' %s | FileCheck %s

// exp: range reduction by floor(x*log2e), degree-7 polynomial, 2^k built from exponent bits in two halves.
// CHECK-LABEL: func.func @exp_vector_becomes_polynomial
// CHECK-NOT: math.exp
// CHECK: math.floor %{{.*}} : vector<16xf32>
// CHECK: math.fma
// CHECK: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: return
func.func @exp_vector_becomes_polynomial(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// log: mantissa/exponent split through the bit pattern; IEEE special cases selected at the end.
// CHECK-LABEL: func.func @log_scalar_f32
// CHECK-NOT: math.log
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf ult
// CHECK: arith.select
// CHECK-NEXT: return
func.func @log_scalar_f32(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// -----

// f16 is widened to f32 around the expansion and narrowed back.
// CHECK-LABEL: func.func @tanh_f16_is_widened
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK-NOT: math.tanh
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
func.func @tanh_f16_is_widened(%x: vector<8xf16>) -> vector<8xf16> {
  %0 = math.tanh %x : vector<8xf16>
  return %0 : vector<8xf16>
}

// -----

// erf: Taylor series near zero, Abramowitz-Stegun (with an inner exp expansion) elsewhere.
// CHECK-LABEL: func.func @erf_scalar
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
// CHECK: math.copysign
// CHECK: arith.cmpf olt
// CHECK: arith.select
func.func @erf_scalar(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// -----

// sin: Cody-Waite reduction by pi/2 in three fma steps, both polynomials, quadrant picked from k's low bits;
// x == 0 returns x itself (keeps -0).
// CHECK-LABEL: func.func @sin_vector_becomes_polynomial
// CHECK-NOT: math.sin
// CHECK: arith.cmpf oeq
// CHECK: math.floor %{{.*}} : vector<16xf32>
// CHECK-COUNT-3: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.andi
// CHECK: arith.cmpi ne
// CHECK: arith.negf
// CHECK: arith.select
// CHECK-NEXT: arith.select
// CHECK-NOT: math.sin
// CHECK: scf.if
func.func @sin_vector_becomes_polynomial(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.sin %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// cos is sin one quadrant further: the quadrant index is incremented before the selects.
// CHECK-LABEL: func.func @cos_scalar_shifts_the_quadrant
// CHECK-NOT: math.cos
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.addi
// CHECK: arith.select
// CHECK: arith.select
// CHECK-NOT: math.cos
// CHECK: scf.if
func.func @cos_scalar_shifts_the_quadrant(%x: f32) -> f32 {
  %0 = math.cos %x : f32
  return %0 : f32
}

// -----

// |x| >= 8192 (beyond the Cody-Waite reduction) takes libm in f64, behind one branch on whether any
// lane needs it; the polynomial's value serves the other lanes.
// CHECK-LABEL: func.func @sin_large_lanes_take_f64_libm
// CHECK: %[[LARGE:.*]] = arith.cmpf oge, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[LARGE]] : vector<16xi1> into i1
// CHECK: scf.if %[[ANY]] -> (vector<16xf32>)
// CHECK: arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// CHECK-NEXT: math.sin %{{.*}} : vector<16xf64>
// CHECK-NEXT: arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK-NEXT: arith.select %[[LARGE]]
// CHECK: } else {
// CHECK-NEXT: scf.yield
func.func @sin_large_lanes_take_f64_libm(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.sin %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// f64 keeps libm precision and ops without an expansion are left alone.
// CHECK-LABEL: func.func @f64_and_other_math_untouched
// CHECK-NEXT: math.exp %{{.*}} : f64
// CHECK-NEXT: math.sin %{{.*}} : f64
// CHECK-NEXT: math.sqrt %{{.*}} : f32
func.func @f64_and_other_math_untouched(%x: f64, %y: f32) -> (f64, f64, f32) {
  %0 = math.exp %x : f64
  %1 = math.sin %x : f64
  %2 = math.sqrt %y : f32
  return %0, %1, %2 : f64, f64, f32
}
