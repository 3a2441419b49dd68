// The `kernel<<<blockDim, l2ctrl, stream>>>(args...)` launch of an AscendC host program, on the
// simulated runtime: npu-ascendc rewrites each such launch into npu_ascendc::Launch, which
// queues the whole launch on `stream` as one runtime task (aclrtLaunchKernel) that runs every
// core of it at once through the CPU twin (so SyncAll and mix 1:2 groups work), in stream order.
#pragma once

#include <functional>

#include "kernel_operator.h"
#include "npurt/acl_compat.h"
#include "npurt/acl_rt.h"

namespace npu_ascendc {

struct Job {
  std::function<void()> body;
  uint32_t blockDim;
  AscendC::KernelMode mode;
};

inline int32_t RunJob(const void* args, uint32_t, uint32_t) {
  Job* job = *static_cast<Job* const*>(args);
  AscendC::RunBlocks(job->blockDim, job->body, job->mode);
  delete job;
  return 0;
}

inline void Launch(AscendC::KernelMode mode, const char* name, uint32_t blockDim, void* l2ctrl, void* stream,
                   std::function<void()> body) {
  (void)l2ctrl;
  Job* job = new Job{std::move(body), blockDim, mode};
  aclError rc = aclrtLaunchKernel(RunJob, 1, &job, sizeof job, name, static_cast<aclrtStream>(stream));
  if (rc != ACL_SUCCESS) {
    delete job;
    std::fprintf(stderr, "npu-ascendc: launch of %s failed: %d %s\n", name, rc, aclGetRecentErrMsg());
    std::abort();
  }
}

}  // namespace npu_ascendc
