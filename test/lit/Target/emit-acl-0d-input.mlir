// RUN: npu-opt %s --ascend-tile | npu-translate --emit-acl | FileCheck %s

// A 0-d tensor the host function reshapes is data (amax of a 0-d tensor), not a by-value
// scalar parameter: it gets a device buffer and an H2D copy, and the reshape aliases it.
// CHECK-LABEL: // ---- host function @amax_0d
// CHECK: ACL_CHECK(aclrtMalloc(&dev[0], 4, deviceId));
// CHECK: ACL_CHECK(aclrtMemcpyAsync(dev[0], 4, inputs[0], 4, ACL_MEMCPY_HOST_TO_DEVICE, stream));
// CHECK: ACL_CHECK(amax_0d_reduction_0_launch(dev[0], dev[1], tiling[0], stream));
// CHECK: ACL_CHECK(aclrtMemcpyAsync(outputs[0], 4, dev[1], 4, ACL_MEMCPY_DEVICE_TO_HOST, stream));
module {
  "ascend.kernel"() ({
  ^bb0(%a: tensor<1xf32>):
    %0 = "ascend.reduce"(%a) {dims = array<i64: 0>, keepdim = false, kind = "max"} : (tensor<1xf32>) -> tensor<f32>
    "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>) -> ()
  }) {sym_name = "amax_0d_reduction_0", function_type = (tensor<1xf32>) -> tensor<f32>, core_type = "aiv", fusion = "reduction", block_dim = 1, tiling = {}} : () -> ()
  func.func @amax_0d(%arg0: tensor<f32>) -> tensor<f32> {
    %e = tensor.expand_shape %arg0 [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %0 = "ascend.launch"(%e) {callee = @amax_0d_reduction_0, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1xf32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}
