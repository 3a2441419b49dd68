#include "torch_npu/csrc/core/NpuGenerator.h"

#include <ATen/ops/empty.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/CallOnce.h>

#include <cstring>
#include <deque>
#include <mutex>

#include "torch_npu/csrc/NpuError.h"
#include "npurt/acl_mdl.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

constexpr size_t kStateBytes = 2 * sizeof(uint64_t);

}  // namespace

NpuGeneratorImpl::NpuGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      state_(c10::make_intrusive<NpuGeneratorState>(seed)) {}

void NpuGeneratorImpl::set_current_seed(uint64_t seed) {
  state_->seed = seed;
  state_->offset = 0;
}

uint64_t NpuGeneratorImpl::current_seed() const { return state_->seed; }

uint64_t NpuGeneratorImpl::seed() {
  uint64_t random = c10::detail::getNonDeterministicRandom(true);
  set_current_seed(random);
  return random;
}

void NpuGeneratorImpl::set_offset(uint64_t offset) {
  TORCH_CHECK(offset % 4 == 0, "NPU generator offset must be a multiple of 4, got ", offset, "\n",
              ptaErr(ErrCode::VALUE));
  state_->offset = offset;
}

uint64_t NpuGeneratorImpl::get_offset() const { return state_->offset; }

c10::intrusive_ptr<c10::TensorImpl> NpuGeneratorImpl::get_state() const {
  at::Tensor state = at::empty({static_cast<int64_t>(kStateBytes)}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(state.data_ptr(), &state_->seed, sizeof(uint64_t));
  std::memcpy(static_cast<uint8_t*>(state.data_ptr()) + sizeof(uint64_t), &state_->offset, sizeof(uint64_t));
  return state.getIntrusivePtr();
}

void NpuGeneratorImpl::set_state(const c10::TensorImpl& state) {
  TORCH_CHECK(state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && state.numel() == kStateBytes &&
                  state.device().is_cpu() && state.is_contiguous(),
              "NPU generator state must be a contiguous CPU ByteTensor of ", kStateBytes,
              " bytes (from torch.npu.get_rng_state())\n", ptaErr(ErrCode::VALUE));
  const auto* bytes = static_cast<const uint8_t*>(state.data());
  uint64_t seed = 0, offset = 0;
  std::memcpy(&seed, bytes, sizeof(uint64_t));
  std::memcpy(&offset, bytes + sizeof(uint64_t), sizeof(uint64_t));
  state_->seed = seed;
  set_offset(offset);
}

c10::intrusive_ptr<c10::GeneratorImpl> NpuGeneratorImpl::graphsafe_get_state() const {
  auto shared = c10::make_intrusive<NpuGeneratorImpl>(device().index());
  shared->state_ = state_;
  return shared;
}

void NpuGeneratorImpl::graphsafe_set_state(const c10::intrusive_ptr<c10::GeneratorImpl>& state) {
  auto* other = dynamic_cast<NpuGeneratorImpl*>(state.get());
  TORCH_CHECK(other != nullptr, "graphsafe_set_state expects the state of an NPU generator (from "
              "graphsafe_get_state()), got one of a ", state->device(), " generator\n", ptaErr(ErrCode::TYPE));
  state_ = other->state_;
}

std::pair<uint64_t, uint64_t> NpuGeneratorImpl::reservePhilox(uint64_t count) {
  uint64_t rounded = (count + 3) / 4 * 4;
  aclrtStream stream = nativeStream(getCurrentStream(device().index()));
  aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  NPU_CHECK_ACL(aclmdlRICaptureGetInfo(stream, &status, nullptr));
  if (status == ACL_MODEL_RI_CAPTURE_STATUS_NONE) {
    uint64_t start = state_->offset;
    state_->offset += rounded;
    return {state_->seed, start};
  }
  // A captured draw: replays fill in the seed and offset they run with.
  std::optional<GraphCapture>& graphCapture = state_->graphCapture;
  TORCH_CHECK(graphCapture && graphCapture->stream == stream,
              "Attempt to draw from an NPU generator that is not registered with the NPU graph capturing the "
              "current stream: call graph.register_generator_state(generator) before capture_begin\n",
              errCode(SubModule::GRAPH, ErrCode::NOT_SUPPORT));
  uint64_t seed = 0, offset = 0;
  NPU_CHECK_ACL(npurtCaptureParam(stream, graphCapture->seedSlot, 0, &seed));
  NPU_CHECK_ACL(npurtCaptureParam(stream, graphCapture->offsetSlot, graphCapture->increment, &offset));
  graphCapture->increment += rounded;
  return {seed, offset};
}

NpuGeneratorImpl* NpuGeneratorImpl::clone_impl() const {
  auto* copy = new NpuGeneratorImpl(device().index(), state_->seed);
  copy->state_->offset = state_->offset;
  return copy;
}

const at::Generator& getDefaultNpuGenerator(c10::DeviceIndex device) {
  static c10::once_flag once;
  // A deque: references handed out stay valid.
  static std::deque<at::Generator> defaults;
  c10::call_once(once, [] {
    for (c10::DeviceIndex i = 0; i < deviceCount(); ++i) {
      defaults.push_back(at::make_generator<NpuGeneratorImpl>(i));
    }
  });
  return defaults[resolveDevice(device)];
}

at::Generator createNpuGenerator(c10::DeviceIndex device) {
  return at::make_generator<NpuGeneratorImpl>(resolveDevice(device));
}

}  // namespace torch_npu
