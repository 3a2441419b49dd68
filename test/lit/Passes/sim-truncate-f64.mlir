// RUN: npu-opt %s --split-input-file --sim-truncate-f64 | FileCheck %s

// f64 -> f16 goes through f32: LLVM would call compiler-rt's __truncdfhf2 for the direct step.
// CHECK-LABEL: func.func @f64_to_f16
// CHECK: %[[W:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %[[W]] : f32 to f16
// CHECK-NOT: f64 to f16
func.func @f64_to_f16(%x: f64) -> f16 {
  %0 = arith.truncf %x : f64 to f16
  return %0 : f16
}

// -----

// bf16 likewise (__truncdfbf2), and a vector narrows lane for lane through a vector of f32.
// CHECK-LABEL: func.func @f64_vector_to_bf16
// CHECK: %[[W:.*]] = arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// CHECK: arith.truncf %[[W]] : vector<8xf32> to vector<8xbf16>
func.func @f64_vector_to_bf16(%x: vector<8xf64>) -> vector<8xbf16> {
  %0 = arith.truncf %x : vector<8xf64> to vector<8xbf16>
  return %0 : vector<8xbf16>
}

// -----

// Other narrowings are no compiler-rt call and stay as they are.
// CHECK-LABEL: func.func @f64_to_f32_and_f32_to_f16
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT: return
func.func @f64_to_f32_and_f32_to_f16(%x: f64) -> f16 {
  %0 = arith.truncf %x : f64 to f32
  %1 = arith.truncf %0 : f32 to f16
  return %1 : f16
}
