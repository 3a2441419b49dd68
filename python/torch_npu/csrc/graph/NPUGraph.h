// NPUGraph: torch.cuda.CUDAGraph's semantics on the runtime's stream capture (npurt/acl_mdl.h).
//
// capture_begin routes the capture stream's allocations to a private memory pool (the
// graph's own, or one shared through `pool`) and starts recording; launches made until
// capture_end are recorded, not run. replay re-submits them on the current stream; kernel
// arguments point at the same memory, which the pool keeps while the graph lives. Random
// ops draw from registered generators through placeholders filled in at each replay, so
// every replay draws new numbers, exactly as the same ops run eagerly would.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/GraphImplInterface.h>
#include <c10/core/Stream.h>

#include <string>
#include <utility>
#include <vector>

#include "npurt/acl_mdl.h"
#include "npurt/caching_allocator.h"

namespace torch_npu {

struct NpuGeneratorImpl;

// torch.npu.graph_pool_handle(): a fresh {0, n} id a capture's pool= argument may share.
c10::MempoolId_t graphPoolHandle();
// A fresh {0, n} id for a user-created pool (torch.npu.MemPool); shares the counter above.
c10::MempoolId_t newUserPoolId();
// Whether the current stream of the current device is capturing (false before the device is used).
bool isCurrentStreamCapturing();
// "global", "thread_local", "relaxed" (torch.cuda's capture_error_mode names).
aclmdlRICaptureMode captureModeFromName(const std::string& name);

class NPUGraph final : public at::GraphImplInterface {
 public:
  explicit NPUGraph(const at::GraphImplArgs& args = {});
  ~NPUGraph() override;
  NPUGraph(const NPUGraph&) = delete;
  NPUGraph& operator=(const NPUGraph&) = delete;

  void capture_begin(c10::MempoolId_t pool = {0, 0},
                     at::GraphCaptureMode captureMode = at::GraphCaptureMode::Default) override;
  void captureBegin(c10::MempoolId_t pool, aclmdlRICaptureMode mode);
  void capture_end() override;
  // A captured graph is executable at once: capture_end instantiates it unless keep_graph, and then
  // instantiate may be called again, as often as the user likes (torch.cuda's checks and messages).
  void instantiate() override;
  void replay() override;
  void reset() override;
  c10::MempoolId_t pool() const override;
  void enable_debug_mode() override { debug_ = true; }
  void debug_dump(const std::string& path) override;

  // Draws of `generator` inside the capture become graph-safe (the device's default
  // generator is registered by capture_begin itself).
  void registerGeneratorState(const at::Generator& generator);
  // Tasks the graph replays.
  size_t taskCount() const;

 private:
  void beginGeneratorCapture(NpuGeneratorImpl* gen, size_t index);
  void finishGeneratorCaptures();
  void releaseCaptureResources();

  aclmdlRI graph_ = nullptr;
  bool capturing_ = false;
  bool poolRetained_ = false;
  bool debug_ = false;
  bool keepGraph_ = false;
  bool instantiated_ = false;
  c10::DeviceIndex device_ = -1;
  c10::StreamId streamId_ = 0;
  aclrtStream captureStream_ = nullptr;
  c10::MempoolId_t mempoolId_{0, 0};
  struct GeneratorUse {
    at::Generator generator;  // as registered
    at::Generator state;      // a generator sharing the state it had then (graphsafe_get_state)
    uint64_t increment = 0;  // Philox counters one replay takes
  };
  std::vector<GeneratorUse> generators_;
};

}  // namespace torch_npu
