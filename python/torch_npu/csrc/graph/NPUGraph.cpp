#include "torch_npu/csrc/graph/NPUGraph.h"

#include <atomic>
#include <mutex>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuGenerator.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

// {capture id, 0} ids of graphs' own pools and {0, n} ids of shared / user pools never collide.
std::atomic<uint64_t> nextCaptureId{1};
std::atomic<uint64_t> nextUserPoolId{1};

std::string graphErr(ErrCode code) { return errCode(SubModule::GRAPH, code); }

npurt::MempoolId toRuntime(c10::MempoolId_t id) { return {id.first, id.second}; }

// Runtime failures of a capture carry the runtime's message (it says what to change).
[[noreturn]] void raiseRuntime(const char* what, const std::string& message) {
  TORCH_CHECK(false, what, ": ", message, "\n", graphErr(ErrCode::ACL));
}

}  // namespace

c10::MempoolId_t graphPoolHandle() { return {0, nextUserPoolId.fetch_add(1)}; }

c10::MempoolId_t newUserPoolId() { return graphPoolHandle(); }

bool isCurrentStreamCapturing() {
  c10::DeviceIndex device = currentDevice();
  if (!hasPrimaryContext(device)) return false;
  aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  NPU_CHECK_ACL(aclmdlRICaptureGetInfo(nativeStream(getCurrentStream(device)), &status, nullptr));
  return status != ACL_MODEL_RI_CAPTURE_STATUS_NONE;
}

aclmdlRICaptureMode captureModeFromName(const std::string& name) {
  if (name == "global") return ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
  if (name == "thread_local") return ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
  if (name == "relaxed") return ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
  TORCH_CHECK_VALUE(false, "Unknown capture_error_mode '", name, "': expected 'global', 'thread_local' or 'relaxed'\n",
                    graphErr(ErrCode::VALUE));
}

NPUGraph::NPUGraph(const at::GraphImplArgs& args) : keepGraph_(args.keep_graph) {}

NPUGraph::~NPUGraph() {
  try {
    reset();
  } catch (const std::exception&) {
    // A destructor cannot raise; the runtime keeps the message.
  }
}

void NPUGraph::capture_begin(c10::MempoolId_t pool, at::GraphCaptureMode captureMode) {
  switch (captureMode) {
    case at::GraphCaptureMode::ThreadLocal: return captureBegin(pool, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL);
    case at::GraphCaptureMode::Relaxed: return captureBegin(pool, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    default: return captureBegin(pool, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);  // torch.cuda's default
  }
}

void NPUGraph::captureBegin(c10::MempoolId_t pool, aclmdlRICaptureMode mode) {
  TORCH_CHECK(graph_ == nullptr && !capturing_,
              "This NPUGraph instance already owns a captured graph. To capture a new graph, create a new instance "
              "or call reset() first.\n",
              graphErr(ErrCode::NOT_SUPPORT));
  TORCH_CHECK_VALUE(pool.first == 0 || pool.second == 0, "pool must be a graph_pool_handle(), another graph's pool() "
                    "or a MemPool's id, got (", pool.first, ", ", pool.second, ")\n", graphErr(ErrCode::VALUE));
  c10::DeviceIndex device = currentDevice();
  c10::Stream stream = getCurrentStream(device);
  TORCH_CHECK(stream != getDefaultStream(device),
              "NPU graphs must be captured on a non-default stream. (However, after capture, it's ok to replay them "
              "on the default stream.)\n",
              graphErr(ErrCode::NOT_SUPPORT));
  markInitialized(device);
  device_ = device;
  streamId_ = stream.id();
  captureStream_ = nativeStream(stream);
  mempoolId_ = pool.first != 0 || pool.second != 0 ? pool : c10::MempoolId_t{nextCaptureId.fetch_add(1), 0};

  // torch.cuda registers the default generator with every capture.
  const at::Generator& fallback = getDefaultNpuGenerator(device);
  bool registered = false;
  for (const GeneratorUse& use : generators_) registered = registered || use.generator == fallback;
  if (!registered) {
    generators_.push_back(GeneratorUse{fallback, at::Generator(fallback.get<NpuGeneratorImpl>()->graphsafe_get_state())});
  }
  size_t begun = 0;
  try {
    for (; begun < generators_.size(); ++begun) {
      beginGeneratorCapture(generators_[begun].state.get<NpuGeneratorImpl>(), begun);
    }
  } catch (...) {
    generators_.resize(begun);  // those before the failing one are captured: undo them
    finishGeneratorCaptures();
    throw;
  }

  aclError status = npurt::cacheBeginAllocateToPool(device_, toRuntime(mempoolId_), captureStream_);
  if (status != ACL_SUCCESS) {
    std::string message = aclGetRecentErrMsg();
    finishGeneratorCaptures();
    raiseRuntime("NPUGraph.capture_begin", message);
  }
  poolRetained_ = true;
  status = aclmdlRICaptureBegin(captureStream_, mode);
  if (status != ACL_SUCCESS) {
    std::string message = aclGetRecentErrMsg();
    releaseCaptureResources();
    raiseRuntime("NPUGraph.capture_begin", message);
  }
  capturing_ = true;
}

void NPUGraph::beginGeneratorCapture(NpuGeneratorImpl* gen, size_t index) {
  std::lock_guard<std::mutex> lock(gen->mutex_);
  TORCH_CHECK(!gen->graphCapture(), "An NPU generator can be registered with one capturing graph at a time: another "
              "NPUGraph is capturing with this generator\n", graphErr(ErrCode::NOT_SUPPORT));
  NpuGeneratorImpl::GraphCapture capture;
  capture.stream = captureStream_;
  capture.seedSlot = static_cast<uint32_t>(2 * index);
  capture.offsetSlot = static_cast<uint32_t>(2 * index + 1);
  gen->graphCapture() = capture;
}

void NPUGraph::finishGeneratorCaptures() {
  for (GeneratorUse& use : generators_) {
    auto* gen = use.state.get<NpuGeneratorImpl>();
    std::lock_guard<std::mutex> lock(gen->mutex_);
    if (gen->graphCapture() && gen->graphCapture()->stream == captureStream_) {
      use.increment = gen->graphCapture()->increment;
      gen->graphCapture().reset();
    }
  }
}

void NPUGraph::releaseCaptureResources() {
  (void)npurt::cacheEndAllocateToPool(device_, toRuntime(mempoolId_));
  finishGeneratorCaptures();
  if (poolRetained_) {
    poolRetained_ = false;
    (void)npurt::cacheReleasePool(device_, toRuntime(mempoolId_));
  }
}

void NPUGraph::capture_end() {
  TORCH_CHECK(capturing_, "Called NPUGraph.capture_end() without a preceding capture_begin()\n",
              graphErr(ErrCode::NOT_SUPPORT));
  TORCH_CHECK(getCurrentStream(device_).id() == streamId_, "Capture must end on the same stream it began on.\n",
              graphErr(ErrCode::NOT_SUPPORT));
  aclmdlRI graph = nullptr;
  aclError status = aclmdlRICaptureEnd(captureStream_, &graph);
  std::string message = status == ACL_SUCCESS ? std::string() : aclGetRecentErrMsg();
  capturing_ = false;
  (void)npurt::cacheEndAllocateToPool(device_, toRuntime(mempoolId_));
  finishGeneratorCaptures();
  if (status != ACL_SUCCESS) {
    // No graph will use the pool: what was allocated in it returns to it and is freed with it.
    releaseCaptureResources();
    raiseRuntime("NPUGraph.capture_end", message);
  }
  graph_ = graph;
  instantiated_ = !keepGraph_;
  if (taskCount() == 0) {
    TORCH_WARN("The NPU Graph is empty. This usually means that the graph was attempted to be captured on wrong "
               "device or stream.");
  }
}

void NPUGraph::instantiate() {
  TORCH_CHECK(graph_ != nullptr, "capture_end() must have been called before calling instantiate\n",
              graphErr(ErrCode::NOT_SUPPORT));
  TORCH_CHECK(!instantiated_ || keepGraph_,
              "instantiate() is intended to be called by the user only when keep_graph=true\n",
              graphErr(ErrCode::NOT_SUPPORT));
  instantiated_ = true;
}

void NPUGraph::replay() {
  TORCH_CHECK(graph_ != nullptr, "Called NPUGraph.replay() without a preceding successful capture.\n",
              graphErr(ErrCode::NOT_SUPPORT));
  instantiated_ = true;  // keep_graph: the first replay instantiates, as torch.cuda's does
  checkNotForkedChild();
  for (size_t i = 0; i < generators_.size(); ++i) {
    GeneratorUse& use = generators_[i];
    if (use.increment == 0) continue;
    auto* gen = use.state.get<NpuGeneratorImpl>();
    uint64_t seed = 0, offset = 0;
    {
      // Each replay takes the next `increment` counters, as the captured ops run eagerly would.
      std::lock_guard<std::mutex> lock(gen->mutex_);
      seed = gen->current_seed();
      offset = gen->get_offset();
      gen->set_offset(offset + use.increment);
    }
    NPU_CHECK_ACL(npurtGraphSetParam(graph_, static_cast<uint32_t>(2 * i), seed));
    NPU_CHECK_ACL(npurtGraphSetParam(graph_, static_cast<uint32_t>(2 * i + 1), offset));
  }
  aclError status = aclmdlRIExecuteAsync(graph_, nativeStream(getCurrentStream(device_)));
  if (status != ACL_SUCCESS) raiseRuntime("NPUGraph.replay", aclGetRecentErrMsg());
}

void NPUGraph::reset() {
  if (capturing_) {
    // Abandons the capture (an error inside `with torch.npu.graph(...)`).
    aclmdlRI graph = nullptr;
    if (aclmdlRICaptureEnd(captureStream_, &graph) == ACL_SUCCESS) (void)aclmdlRIDestroy(graph);
    capturing_ = false;
    releaseCaptureResources();
  }
  if (graph_ != nullptr) {
    (void)aclmdlRIDestroy(graph_);
    graph_ = nullptr;
  }
  instantiated_ = false;
  if (poolRetained_) {
    poolRetained_ = false;
    NPU_CHECK_ACL(npurt::cacheReleasePool(device_, toRuntime(mempoolId_)));
  }
  for (GeneratorUse& use : generators_) use.increment = 0;
}

c10::MempoolId_t NPUGraph::pool() const {
  TORCH_CHECK(graph_ != nullptr || capturing_, "Called NPUGraph.pool() without a preceding successful capture.\n",
              graphErr(ErrCode::NOT_SUPPORT));
  return mempoolId_;
}

void NPUGraph::debug_dump(const std::string& path) {
  if (!debug_) {
    TORCH_WARN("NPU Graphs debug not enabled, set with [graph].enable_debug_mode()");
    return;
  }
  TORCH_CHECK(graph_ != nullptr, "Called NPUGraph.debug_dump() without a preceding successful capture.\n",
              graphErr(ErrCode::NOT_SUPPORT));
  NPU_CHECK_ACL(npurtGraphDump(graph_, path.c_str()));
}

void NPUGraph::registerGeneratorState(const at::Generator& generator) {
  auto* gen = at::check_generator<NpuGeneratorImpl>(generator);
  for (const GeneratorUse& use : generators_) {
    if (use.generator == generator) return;
  }
  // The graph keeps the state the generator has now (torch.cuda's graph-safe states): a later
  // graphsafe_set_state on the generator does not move what replays draw from.
  generators_.push_back(GeneratorUse{generator, at::Generator(gen->graphsafe_get_state())});
  if (capturing_) beginGeneratorCapture(gen, generators_.size() - 1);
}

size_t NPUGraph::taskCount() const {
  if (graph_ == nullptr) return 0;
  size_t count = 0;
  NPU_CHECK_ACL(npurtGraphTaskCount(graph_, &count));
  return count;
}

}  // namespace torch_npu

namespace at {
// torch.accelerator.Graph on npu (the registry key is the backend's upper-case name).
REGISTER_GRAPH_IMPL(NPU, torch_npu::NPUGraph);
}  // namespace at
