// The NPU random generator: counter based, like CUDA's philox generator. Its whole
// state is (seed, offset); each random op reserves a range of the counter, so a
// run is reproducible from the seed alone and independent of the CPU generator.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <optional>
#include <utility>

#include "npurt/acl_rt.h"

namespace torch_npu {

// Graph-safe capture of a generator state (torch's register_generator_state): while an NPUGraph
// captures on `stream` with the state registered, reservePhilox there hands out placeholders for
// (seed, offset) that the graph fills in at each replay (npurt/acl_mdl.h npurtCaptureParam), and the
// draws add up to `increment`, what each replay advances the offset by.
struct NpuGraphCapture {
  aclrtStream stream = nullptr;
  uint32_t seedSlot = 0;
  uint32_t offsetSlot = 0;
  uint64_t increment = 0;
};

// What a generator draws from. Generators share one through graphsafe_get_state /
// graphsafe_set_state (torch.cuda's graph-safe states: a graph keeps the state it was captured with).
struct NpuGeneratorState : public c10::intrusive_ptr_target {
  explicit NpuGeneratorState(uint64_t seed) : seed(seed) {}
  uint64_t seed;
  uint64_t offset = 0;
  std::optional<NpuGraphCapture> graphCapture;
};

struct NpuGeneratorImpl : public c10::GeneratorImpl {
  using GraphCapture = NpuGraphCapture;

  explicit NpuGeneratorImpl(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  // A 16-byte CPU uint8 tensor: seed then offset, native byte order.
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  void set_state(const c10::TensorImpl& state) override;
  // A generator sharing this one's state object (draws from either advance both), and the switch
  // of this generator onto another's state object.
  c10::intrusive_ptr<c10::GeneratorImpl> graphsafe_get_state() const override;
  void graphsafe_set_state(const c10::intrusive_ptr<c10::GeneratorImpl>& state) override;

  // Reserves `count` Philox counters (rounded up to a multiple of 4, the generator's offset unit)
  // and returns the (seed, offset) the op's draws start from: element i of the op uses counter
  // offset + i (npu_mlir/frontend/references/philox.py). Callers hold mutex_.
  std::pair<uint64_t, uint64_t> reservePhilox(uint64_t count);

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // The capture this generator's state is registered with, if any. Guarded by mutex_.
  std::optional<GraphCapture>& graphCapture() { return state_->graphCapture; }

 private:
  NpuGeneratorImpl* clone_impl() const override;

  c10::intrusive_ptr<NpuGeneratorState> state_;
};

// The per-device default generator (index -1: current device); torch.manual_seed seeds it.
const at::Generator& getDefaultNpuGenerator(c10::DeviceIndex device = -1);
at::Generator createNpuGenerator(c10::DeviceIndex device = -1);

}  // namespace torch_npu
