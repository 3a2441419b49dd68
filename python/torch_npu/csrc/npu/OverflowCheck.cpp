#include "torch_npu/csrc/npu/OverflowCheck.h"

#include <ATen/ops/all.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/nan_to_num.h>
#include <c10/core/ScalarType.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {

// Set at device initialization from torch_npu's environment (npu/overflow.py).
std::atomic<bool> overflowCheckOn{false};

namespace {

constexpr int kMaxDevices = 64;
std::atomic<bool> overflowed[kMaxDevices];
std::atomic<bool> saturating{false};

std::atomic<bool>& flagOf(c10::DeviceIndex device) {
  c10::DeviceIndex index = resolveDevice(device);
  TORCH_CHECK(index >= 0 && index < kMaxDevices, "device index ", static_cast<int>(index), " out of range\n",
              ptaErr(ErrCode::VALUE));
  return overflowed[index];
}

// Whether any of `n` values has every exponent bit set (inf or nan), `exponent` being that mask.
// Branch-free within a block so the loop vectorizes; a hit ends the scan at the block's end.
template <typename Bits>
bool anyExponentSaturated(const Bits* bits, int64_t n, Bits exponent) {
  constexpr int64_t kBlock = 4096;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    int64_t end = std::min(n, begin + kBlock);
    bool seen = false;
    for (int64_t i = begin; i < end; ++i) seen |= (bits[i] & exponent) == exponent;
    if (seen) return true;
  }
  return false;
}

// A raw pass over the bytes where the layout allows (it costs about a read of the result;
// at::isfinite(...).all() cost 5-15 us per call in allocations and dispatch), else torch's.
bool holdsNonFinite(const at::Tensor& alias) {
  if (!alias.is_non_overlapping_and_dense()) return !at::isfinite(alias).all().item<bool>();
  const void* data = alias.const_data_ptr();
  int64_t n = alias.numel();
  switch (alias.scalar_type()) {
    case at::kFloat: return anyExponentSaturated(static_cast<const uint32_t*>(data), n, uint32_t{0x7f800000});
    case at::kComplexFloat: return anyExponentSaturated(static_cast<const uint32_t*>(data), 2 * n, uint32_t{0x7f800000});
    case at::kDouble: return anyExponentSaturated(static_cast<const uint64_t*>(data), n, uint64_t{0x7ff0000000000000});
    case at::kHalf: return anyExponentSaturated(static_cast<const uint16_t*>(data), n, uint16_t{0x7c00});
    case at::kBFloat16: return anyExponentSaturated(static_cast<const uint16_t*>(data), n, uint16_t{0x7f80});
    default: return !at::isfinite(alias).all().item<bool>();
  }
}

}  // namespace

void checkResultsForOverflow(const std::vector<at::Tensor>& results, c10::Stream stream) {
  std::vector<at::Tensor> aliases;
  for (const at::Tensor& t : results) {
    if (!t.defined() || !at::isFloatingType(t.scalar_type()) || t.numel() == 0) continue;
    // The scan may run after the caller dropped the result: keep its block from reuse till then.
    npuAllocator()->recordStream(t.storage().data_ptr(), stream);
    aliases.push_back(cpuAlias(t));
  }
  if (aliases.empty()) return;
  launchHostTask(stream, [aliases, device = stream.device_index(), saturate = saturating.load()] {
    for (at::Tensor alias : aliases) {
      if (!holdsNonFinite(alias)) continue;
      overflowed[device].store(true);
      if (!saturate) return;
      alias.nan_to_num_(0.0);  // saturation mode: inf -> the dtype's max (-inf -> its lowest), nan -> 0
    }
  });
}

namespace {

void synchronizeAll(c10::DeviceIndex device) {
  c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->synchronizeDevice(resolveDevice(device));
}

TORCH_NPU_BINDINGS(bindOverflowCheck) {
  // saturation: INF_NAN_MODE_FORCE_DISABLE=1; forceCheck: FORCE_OVERFLOW_CHECK=1 (INF_NAN mode).
  m.def("_npu_set_overflow_mode", [](bool saturation, bool forceCheck) {
    saturating.store(saturation);
    overflowCheckOn.store(saturation || forceCheck);
  });
  m.def("_npu_overflow_check_enabled", [] { return overflowCheckArmed(); });
  m.def("_npu_is_support_inf_nan", [] { return !saturating.load(); });
  // The flag as the device's streams have left it so far: reading (or clearing) waits for them.
  m.def("_npu_get_overflow_flag", [](int device) {
    pybind11::gil_scoped_release noGil;
    synchronizeAll(static_cast<c10::DeviceIndex>(device));
    return flagOf(static_cast<c10::DeviceIndex>(device)).load();
  });
  m.def("_npu_clear_overflow_flag", [](int device) {
    pybind11::gil_scoped_release noGil;
    synchronizeAll(static_cast<c10::DeviceIndex>(device));
    flagOf(static_cast<c10::DeviceIndex>(device)).store(false);
  });
}

}  // namespace
}  // namespace torch_npu
