// RUN: npu-opt %s --ascend-tile | npu-translate --emit-acl | FileCheck %s
// RUN: not npu-translate %S/Inputs/untranslatable.mlir --split-input-file --emit-acl 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: #include "npurt/acl_rt.h"

// Per kernel: the tiling struct shared with the kernel source and a launcher that copies the
// tiling and launches block_dim blocks (<<<>>> on CANN, aclrtLaunchKernel on the simulated runtime).
// CHECK-LABEL: // ---- kernel @scale
// CHECK: struct scale_TilingData {
// CHECK: extern "C" void scale(uint8_t*, uint8_t*, uint8_t* tiling);
// CHECK: AscendC::RunBlock(blockIdx, blockDim, [a] { scale(static_cast<uint8_t*>(a->in0), static_cast<uint8_t*>(a->out0), static_cast<uint8_t*>(a->tiling)); });
// CHECK: extern "C" aclError scale_launch(void* in0, void* out0, void* tilingDev, aclrtStream stream) {
// CHECK:   ACL_CHECK(aclrtMemcpy(tilingDev, sizeof tiling, &tiling, sizeof tiling, ACL_MEMCPY_HOST_TO_DEVICE));
// CHECK:   const uint32_t blockDim = 32;
// CHECK:   return aclrtLaunchKernel(scale_block, blockDim, &args, sizeof args, "scale", stream);
// CHECK:   scale<<<blockDim, nullptr, stream>>>(static_cast<uint8_t*>(in0), static_cast<uint8_t*>(out0), static_cast<uint8_t*>(tilingDev));

// Per host function: device buffers, H2D copies, the launches in order between timing events,
// D2H copy of the result, stream synchronisation, frees.
// CHECK-LABEL: // ---- host function @forward
// CHECK: extern "C" aclError forward_run(const void* const* inputs, void* const* outputs, int32_t deviceId,
// CHECK:   ACL_CHECK(aclrtMalloc(&dev[0], 65536, deviceId));
// CHECK:   ACL_CHECK(aclrtMalloc(&dev[1], 65536, deviceId));
// CHECK:   ACL_CHECK(aclrtMalloc(&tiling[0], sizeof(scale_TilingData), deviceId));
// CHECK:   ACL_CHECK(aclrtMalloc(&dev[2], 65536, deviceId));
// CHECK:   ACL_CHECK(aclrtMemcpyAsync(dev[0], 65536, inputs[0], 65536, ACL_MEMCPY_HOST_TO_DEVICE, stream));
// CHECK:   ACL_CHECK(aclrtRecordEvent(start, stream));
// CHECK:   ACL_CHECK(scale_launch(dev[0], dev[1], tiling[0], stream));
// CHECK:   ACL_CHECK(scale_launch(dev[1], dev[2], tiling[1], stream));
// CHECK:   ACL_CHECK(aclrtRecordEvent(end, stream));
// CHECK:   ACL_CHECK(aclrtMemcpyAsync(outputs[0], 65536, dev[2], 65536, ACL_MEMCPY_DEVICE_TO_HOST, stream));
// CHECK:   ACL_CHECK(aclrtSynchronizeStream(stream));
// CHECK:   for (void* p : dev) if (p != nullptr) aclrtFree(p);
module {
  "ascend.kernel"() ({
  ^bb0(%a: tensor<128x128xf32>):
    %c = arith.constant 3.0 : f32
    %0 = "ascend.binary"(%a, %c) {kind = "mul"} : (tensor<128x128xf32>, f32) -> tensor<128x128xf32>
    "ascend.yield"(%0) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128x128xf32>) -> ()
  }) {sym_name = "scale", function_type = (tensor<128x128xf32>) -> tensor<128x128xf32>, core_type = "aiv", fusion = "elementwise", block_dim = 1, tiling = {}} : () -> ()
  func.func @forward(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
    %0 = "ascend.launch"(%x) {callee = @scale, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128x128xf32>) -> tensor<128x128xf32>
    %1 = "ascend.launch"(%0) {callee = @scale, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<128x128xf32>) -> tensor<128x128xf32>
    return %1 : tensor<128x128xf32>
  }
}

// ERR: untranslatable.mlir:4:1: error: ERR03003 GRAPH kernel has no tiling record; run ascend-tile before emitting
// ERR: untranslatable.mlir:14:1: error: ERR03007 GRAPH kernel @tr has no AscendC lowering (ascend.transpose has no vector tiling; on the scalar unit: element type f8E4M3FN has no scalar-unit AscendC type)
