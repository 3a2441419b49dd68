// z = LeakyRelu(x + y, 0.1): an AscendC kernel with its ACL host program, in one file, written
// as for CANN (the README's worked example for npu-ascendc).
#include "acl/acl.h"
#include "kernel_operator.h"

#include <cmath>
#include <cstdio>
#include <vector>

using namespace AscendC;

constexpr int32_t TOTAL = 8 * 2048;                // elements
constexpr int32_t BLOCKS = 8;                      // cores of the launch
constexpr int32_t PER_BLOCK = TOTAL / BLOCKS;      // elements per core
constexpr int32_t TILE = 256;                      // elements per tile
constexpr int32_t TILES = PER_BLOCK / TILE;
constexpr int32_t BUFFER_NUM = 2;                  // double buffering

class KernelLeakyAdd {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    xGm.SetGlobalBuffer((__gm__ float*)x + PER_BLOCK * GetBlockIdx(), PER_BLOCK);
    yGm.SetGlobalBuffer((__gm__ float*)y + PER_BLOCK * GetBlockIdx(), PER_BLOCK);
    zGm.SetGlobalBuffer((__gm__ float*)z + PER_BLOCK * GetBlockIdx(), PER_BLOCK);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE * sizeof(float));
    pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE * sizeof(float));
    pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (int32_t i = 0; i < TILES; ++i) {
      CopyIn(i);
      Compute();
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(int32_t i) {
    LocalTensor<float> x = inQueueX.AllocTensor<float>();
    LocalTensor<float> y = inQueueY.AllocTensor<float>();
    DataCopy(x, xGm[i * TILE], TILE);
    DataCopy(y, yGm[i * TILE], TILE);
    inQueueX.EnQue(x);
    inQueueY.EnQue(y);
  }
  __aicore__ inline void Compute() {
    LocalTensor<float> x = inQueueX.DeQue<float>();
    LocalTensor<float> y = inQueueY.DeQue<float>();
    LocalTensor<float> z = outQueueZ.AllocTensor<float>();
    Add(z, x, y, TILE);
    LeakyRelu(z, z, 0.1f, TILE);
    outQueueZ.EnQue(z);
    inQueueX.FreeTensor(x);
    inQueueY.FreeTensor(y);
  }
  __aicore__ inline void CopyOut(int32_t i) {
    LocalTensor<float> z = outQueueZ.DeQue<float>();
    DataCopy(zGm[i * TILE], z, TILE);
    outQueueZ.FreeTensor(z);
  }

  TPipe pipe;
  TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
  GlobalTensor<float> xGm, yGm, zGm;
};

extern "C" __global__ __aicore__ void leaky_add(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  KernelLeakyAdd op;
  op.Init(x, y, z);
  op.Process();
}

#define CHECK_ACL(expr)                                                       \
  do {                                                                        \
    aclError rc_ = (expr);                                                    \
    if (rc_ != ACL_SUCCESS) {                                                 \
      std::fprintf(stderr, "%s failed: %d %s\n", #expr, rc_, aclGetRecentErrMsg()); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main() {
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));

  const size_t bytes = TOTAL * sizeof(float);
  float *xHost, *yHost, *zHost;
  CHECK_ACL(aclrtMallocHost((void**)&xHost, bytes));
  CHECK_ACL(aclrtMallocHost((void**)&yHost, bytes));
  CHECK_ACL(aclrtMallocHost((void**)&zHost, bytes));
  for (int32_t i = 0; i < TOTAL; ++i) {
    xHost[i] = std::sin(0.01f * i);
    yHost[i] = std::cos(0.007f * i) - 0.5f;
  }
  uint8_t *xDev, *yDev, *zDev;
  CHECK_ACL(aclrtMalloc((void**)&xDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc((void**)&yDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc((void**)&zDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMemcpy(xDev, bytes, xHost, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(yDev, bytes, yHost, bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  leaky_add<<<BLOCKS, nullptr, stream>>>(xDev, yDev, zDev);
  CHECK_ACL(aclrtSynchronizeStream(stream));

  CHECK_ACL(aclrtMemcpy(zHost, bytes, zDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  int32_t wrong = 0;
  for (int32_t i = 0; i < TOTAL; ++i) {
    float s = xHost[i] + yHost[i], want = s >= 0.0f ? s : 0.1f * s;
    if (std::fabs(zHost[i] - want) > 1e-6f) ++wrong;
  }
  std::printf("leaky_add: %d of %d elements wrong\n", wrong, TOTAL);
  CHECK_ACL(aclrtFree(xDev));
  CHECK_ACL(aclrtFree(yDev));
  CHECK_ACL(aclrtFree(zDev));
  CHECK_ACL(aclrtFreeHost(xHost));
  CHECK_ACL(aclrtFreeHost(yHost));
  CHECK_ACL(aclrtFreeHost(zHost));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return wrong == 0 ? 0 : 2;
}
