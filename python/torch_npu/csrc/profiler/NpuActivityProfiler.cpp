// The Kineto plug-in that puts npu stream tasks into torch.profiler.
//
// torch registers it with Kineto (REGISTER_PRIVATEUSE1_PROFILER); Kineto opens a session
// when the trace asks for device activities (ProfilerActivity.PrivateUse1, i.e. NPU) and
// forwards each host op's correlation id to it, which the session hands to the runtime:
// every task the op queues carries that id. At the end the runtime's records become
// Kineto activities, the way CUPTI's do for CUDA:
//   - on the queuing thread, an `aclrt*` runtime event at the enqueue instant, linked to
//     the host op and starting a flow (the arrow to the device lane);
//   - on the device lane "NPU d / Stream s", the kernel (its compiled symbol), memcpy,
//     memset, event record/wait, host function or collective (hcom_allReduce_, ...), linked
//     to the host op and ending the flow. Every device and stream seen gets its label.
// The link makes torch give each host op its device time (key_averages' NPU columns).

// The wheel is built with Kineto; the plug-in header is guarded by this macro.
#ifndef USE_KINETO
#define USE_KINETO
#endif
// Kineto's activity header formats metadata with fmt inline; libtorch does not export
// fmt's compiled part, so this file uses fmt header-only.
#define FMT_HEADER_ONLY

#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#include <unistd.h>

#include <libkineto.h>
#include <output_base.h>

#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "npurt/acl_rt.h"
#include "npurt/profiling.h"
#include "torch_npu/csrc/profiler/NpuProfilerRecords.h"

namespace torch_npu::profiler {
namespace {

using libkineto::ActivityType;

// How long stop() waits for queued tasks before giving up on them (a stream blocked on an
// event nobody records would otherwise hang the profiler).
constexpr int64_t kFlushTimeoutMs = 60000;

const char* runtimeCallName(const npurtTaskRecord& r) {
  switch (r.kind) {
    case NPURT_TASK_KERNEL: return "aclrtLaunchKernel";
    case NPURT_TASK_MEMCPY: return std::strcmp(r.name, "aclrtMemcpy") == 0 ? "aclrtMemcpy" : "aclrtMemcpyAsync";
    case NPURT_TASK_MEMSET: return "aclrtMemsetAsync";
    case NPURT_TASK_EVENT_RECORD: return "aclrtRecordEvent";
    case NPURT_TASK_EVENT_WAIT: return "aclrtStreamWaitEvent";
    case NPURT_TASK_HOST_FUNC: return "aclrtLaunchHostFunc";
    case NPURT_TASK_COLLECTIVE: return "HcclCollective";
  }
  return "aclrt";
}

// The "Task Type" of CANN's task records, as torch_npu's kernel_details.csv shows it.
const char* taskTypeName(npurtTaskKind kind) {
  switch (kind) {
    case NPURT_TASK_KERNEL: return "AI_CORE";
    case NPURT_TASK_MEMCPY: return "MEMCPY_ASYNC";
    case NPURT_TASK_MEMSET: return "MEMSET_ASYNC";
    case NPURT_TASK_EVENT_RECORD: return "EVENT_RECORD";
    case NPURT_TASK_EVENT_WAIT: return "EVENT_WAIT";
    case NPURT_TASK_HOST_FUNC: return "HOST_FUNC";
    case NPURT_TASK_COLLECTIVE: return "HCCL";
  }
  return "UNKNOWN";
}

ActivityType deviceActivityType(npurtTaskKind kind) {
  switch (kind) {
    case NPURT_TASK_MEMCPY: return ActivityType::GPU_MEMCPY;
    case NPURT_TASK_MEMSET: return ActivityType::GPU_MEMSET;
    case NPURT_TASK_EVENT_RECORD:
    case NPURT_TASK_EVENT_WAIT: return ActivityType::CUDA_SYNC;
    default: return ActivityType::CONCURRENT_KERNEL;
  }
}

class NpuSession final : public libkineto::IActivityProfilerSession {
 public:
  explicit NpuSession(std::set<ActivityType> activities) : activities_(std::move(activities)) {}

  void start() override {
    takeTaskRecords();  // left over from an earlier trace: not ours
    npurtProfilerEnable(1);
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    npurtProfilerEnable(0);
    if (npurtProfilerFlush(kFlushTimeoutMs) != ACL_SUCCESS) errors_.emplace_back(aclGetRecentErrMsg());
    records_ = takeTaskRecords();
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, [](int32_t) -> const libkineto::ITraceActivity* { return nullptr; }, 0, 0);
  }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linkedOp,
                    int64_t startTime, int64_t /*endTime*/) override {
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(0, 0, "NPU", "");
    buffer_->gpuOpCount = 0;
    int64_t flowId = 0;
    for (const npurtTaskRecord& r : records_) {
      if (!wanted(r)) continue;
      const libkineto::ITraceActivity* op =
          r.correlationId != 0 ? linkedOp(static_cast<int32_t>(r.correlationId)) : nullptr;
      ++flowId;
      if (activities_.count(ActivityType::PRIVATEUSE1_RUNTIME)) logRuntimeCall(logger, r, op, flowId);
      logDeviceTask(logger, r, op, flowId);
      streams_.emplace(r.deviceId, r.streamIndex);
    }
    records_.clear();
    laneLogger_ = &logger;
    laneTime_ = startTime;
  }

  // Kineto labels pids 0-15 "GPU n" when it finalizes a trace, then logs the one DeviceInfo a
  // plug-in may return, so that label wins; the other devices' labels are logged here, at that
  // moment, through the logger processTrace wrote to (Kineto finalizes into the same logger).
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    if (streams_.empty()) return nullptr;
    std::set<int32_t> devices;
    for (const auto& lane : streams_) devices.insert(lane.first);
    if (laneLogger_ != nullptr) {
      for (auto it = std::next(devices.begin()); it != devices.end(); ++it) {
        laneLogger_->handleDeviceInfo(deviceInfo(*it), laneTime_);
      }
      laneLogger_ = nullptr;
    }
    return std::make_unique<libkineto::DeviceInfo>(deviceInfo(*devices.begin()));
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> infos;
    for (const auto& [device, stream] : streams_) {
      infos.push_back({static_cast<int64_t>(stream), static_cast<int64_t>(stream), device,
                       "Stream " + std::to_string(stream)});
    }
    return infos;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

  void pushCorrelationId(uint64_t id) override { npurtProfilerPushCorrelationId(id); }
  void popCorrelationId() override { npurtProfilerPopCorrelationId(); }

  std::string getDeviceProperties() override {
    uint32_t count = 0;
    if (aclrtGetDeviceCount(&count) != ACL_SUCCESS || count == 0) return "";
    aclrtDeviceProp prop{};
    if (aclrtGetDeviceProperties(0, &prop) != ACL_SUCCESS) return "";
    return "{\"id\": 0, \"name\": \"" + std::string(prop.name) + "\", \"totalGlobalMem\": " +
           std::to_string(prop.totalGlobalMem) + ", \"cubeCoreNum\": " + std::to_string(prop.cubeCoreNum) +
           ", \"vectorCoreNum\": " + std::to_string(prop.vectorCoreNum) +
           ", \"l2CacheSize\": " + std::to_string(prop.l2CacheSize) + "}";
  }

 private:
  // Below the CPU process in trace viewers, as Kineto does for GPUs.
  static constexpr int64_t kDeviceSortBase = 0x1000000;

  static libkineto::DeviceInfo deviceInfo(int32_t device) {
    return {device, device + kDeviceSortBase, deviceName(device), "NPU " + std::to_string(device)};
  }

  static std::string deviceName(int32_t device) {
    aclrtDeviceProp prop{};
    return aclrtGetDeviceProperties(device, &prop) == ACL_SUCCESS ? std::string(prop.name) : "NPU";
  }

  bool wanted(const npurtTaskRecord& r) const {
    return activities_.count(deviceActivityType(r.kind)) != 0 ||
           (deviceActivityType(r.kind) == ActivityType::CUDA_SYNC && activities_.count(ActivityType::CONCURRENT_KERNEL));
  }

  libkineto::GenericTraceActivity& emplace(ActivityType type, const std::string& name) {
    buffer_->emplace_activity(buffer_->span, type, name);
    return libkineto::CpuTraceBuffer::toRef(buffer_->activities.back());
  }

  void logRuntimeCall(libkineto::ActivityLogger& logger, const npurtTaskRecord& r,
                      const libkineto::ITraceActivity* op, int64_t flowId) {
    auto& call = emplace(ActivityType::PRIVATEUSE1_RUNTIME, runtimeCallName(r));
    call.startTime = r.enqueueNs;
    call.endTime = r.enqueueNs;
    call.device = r.pid;
    call.resource = static_cast<int64_t>(r.tid);
    call.threadId = static_cast<int32_t>(r.tid);
    call.id = static_cast<int32_t>(r.correlationId);
    call.linked = op;
    call.flow.id = flowId;
    call.flow.type = libkineto::kLinkAsyncCpuGpu;
    call.flow.start = true;
    call.addMetadata("correlation", r.correlationId);
    logger.handleActivity(call);
  }

  void logDeviceTask(libkineto::ActivityLogger& logger, const npurtTaskRecord& r,
                     const libkineto::ITraceActivity* op, int64_t flowId) {
    auto& task = emplace(deviceActivityType(r.kind), taskName(r));
    task.startTime = r.startNs;
    task.endTime = r.endNs;
    task.device = r.deviceId;
    task.resource = r.streamIndex;
    task.id = static_cast<int32_t>(r.correlationId);
    task.linked = op;
    task.flow.id = flowId;
    task.flow.type = libkineto::kLinkAsyncCpuGpu;
    task.flow.start = false;
    task.addMetadata("device", r.deviceId);
    task.addMetadata("stream", r.streamIndex);
    task.addMetadata("correlation", r.correlationId);
    task.addMetadataQuoted("task type", taskTypeName(r.kind));
    if (op != nullptr) task.addMetadataQuoted("op name", op->name());
    if (r.kind == NPURT_TASK_KERNEL) task.addMetadata("block dim", r.blockDim);
    if (r.kind == NPURT_TASK_MEMCPY || r.kind == NPURT_TASK_MEMSET || r.kind == NPURT_TASK_COLLECTIVE) {
      task.addMetadata("bytes", r.bytes);
      double seconds = static_cast<double>(r.endNs - r.startNs) * 1e-9;
      if (seconds > 0) task.addMetadata("memory bandwidth (GB/s)", static_cast<double>(r.bytes) / seconds * 1e-9);
    }
    if (r.status != ACL_SUCCESS) task.addMetadata("error", r.status);
    ++buffer_->gpuOpCount;
    logger.handleActivity(task);
  }

  static std::string taskName(const npurtTaskRecord& r) {
    if (r.kind != NPURT_TASK_MEMCPY) return r.name;
    switch (r.memcpyKind) {
      case ACL_MEMCPY_HOST_TO_DEVICE: return "Memcpy HtoD";
      case ACL_MEMCPY_DEVICE_TO_HOST: return "Memcpy DtoH";
      case ACL_MEMCPY_DEVICE_TO_DEVICE: return "Memcpy DtoD";
      default: return "Memcpy HtoH";
    }
  }

  std::set<ActivityType> activities_;
  std::vector<npurtTaskRecord> records_;
  std::set<std::pair<int32_t, uint32_t>> streams_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
  std::vector<std::string> errors_;
  libkineto::ActivityLogger* laneLogger_ = nullptr;  // valid from processTrace to getDeviceInfo
  int64_t laneTime_ = 0;
};

class NpuActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }

  const std::set<ActivityType>& availableActivities() const override { return activities_; }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& activityTypes,
                                                                 const libkineto::Config& /*config*/) override {
    // ProfilerActivity.CPU alone also asks for PRIVATEUSE1_RUNTIME: no device work, no session.
    std::set<ActivityType> wanted;
    for (ActivityType type : activityTypes) {
      if (activities_.count(type)) wanted.insert(type);
    }
    bool device = wanted.count(ActivityType::CONCURRENT_KERNEL) || wanted.count(ActivityType::GPU_MEMCPY) ||
                  wanted.count(ActivityType::GPU_MEMSET);
    if (!device) return nullptr;
    return std::make_unique<NpuSession>(std::move(wanted));
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t /*ts_ms*/, int64_t /*duration_ms*/,
                                                                 const std::set<ActivityType>& activityTypes,
                                                                 const libkineto::Config& config) override {
    return configure(activityTypes, config);
  }

 private:
  std::string name_{"__npu_profiler__"};
  std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                     ActivityType::GPU_MEMSET, ActivityType::CUDA_SYNC,
                                     ActivityType::PRIVATEUSE1_RUNTIME};
};

}  // namespace
}  // namespace torch_npu::profiler

namespace {
using NpuActivityProfiler = torch_npu::profiler::NpuActivityProfiler;
REGISTER_PRIVATEUSE1_PROFILER(NpuActivityProfiler);
}  // namespace
