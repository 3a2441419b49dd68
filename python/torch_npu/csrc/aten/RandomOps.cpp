// Random ops driven by the NPU generator. The CPU fallback would silently draw from
// the CPU generator (and reject an NPU one), so these are native: each op reserves a
// range of the NPU generator's philox counter, derives the key of its own random
// stream from (seed, offset), and fills device memory on the stream's worker with a
// CPU generator seeded by that key. Results depend only on the NPU seed and the
// sequence of random ops, never on torch's CPU generator state.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/multinomial.h>
#include <ATen/ops/normal.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/randperm.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <functional>
#include <mutex>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuGenerator.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

// `inputs` are CPU aliases of the NPU tensors the op reads (or CPU tensors as given).
using Fill = std::function<void(at::Tensor& out, std::vector<at::Tensor>& inputs, at::Generator& cpuGenerator)>;

at::Generator streamGenerator(const std::optional<at::Generator>& gen, c10::DeviceIndex device, uint64_t draws) {
  auto* npuGen = at::get_generator_or_default<NpuGeneratorImpl>(gen, getDefaultNpuGenerator(device));
  std::lock_guard<std::mutex> lock(npuGen->mutex_);
  return at::make_generator<at::CPUGeneratorImpl>(npuGen->reserveStreamKey(draws));
}

// Runs `fill` on a CPU alias of `out` as a task on the current stream, after the
// work already queued there (which produced `inputs`).
void fillOnStream(const at::Tensor& out, const std::optional<at::Generator>& gen, Fill fill,
                  const std::vector<at::Tensor>& inputs = {}) {
  // An NPU generator makes the dispatcher pick these kernels even for CPU tensors.
  TORCH_CHECK(out.device().type() == c10::DeviceType::PrivateUse1, "an NPU generator cannot fill a tensor on ",
              out.device(), ": pass a generator of that device, or create the tensor with device='npu'\n",
              ptaErr(ErrCode::PARAM));
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(out.device());
  c10::DeviceIndex device = out.device().index();
  c10::Stream stream = getCurrentStream(device);
  at::Generator cpuGen = streamGenerator(gen, device, static_cast<uint64_t>(out.numel()));
  at::Tensor alias = cpuAlias(out);
  std::vector<at::Tensor> inputAliases;
  for (const at::Tensor& input : inputs) {
    bool onNpu = input.device().type() == c10::DeviceType::PrivateUse1;
    if (onNpu) npuAllocator()->recordStream(input.storage().data_ptr(), stream);
    inputAliases.push_back(onNpu ? cpuAlias(input) : input);
  }
  launchHostTask(stream, [alias, cpuGen, fill = std::move(fill), inputAliases]() mutable {
    fill(alias, inputAliases, cpuGen);
  });
}

at::Tensor& uniform(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [from, to](at::Tensor& out, auto&, at::Generator& g) { out.uniform_(from, to, g); });
  return self;
}

at::Tensor& normal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std, "\n", ptaErr(ErrCode::VALUE));
  fillOnStream(self, gen, [mean, std](at::Tensor& out, auto&, at::Generator& g) { out.normal_(mean, std, g); });
  return self;
}

at::Tensor& random(at::Tensor& self, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [](at::Tensor& out, auto&, at::Generator& g) { out.random_(g); });
  return self;
}

at::Tensor& randomTo(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [to](at::Tensor& out, auto&, at::Generator& g) { out.random_(to, g); });
  return self;
}

at::Tensor& randomFrom(at::Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [from, to](at::Tensor& out, auto&, at::Generator& g) { out.random_(from, to, g); });
  return self;
}

at::Tensor& bernoulliFloat(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "bernoulli_ expects p to be in [0, 1], but got p=", p, "\n",
              ptaErr(ErrCode::VALUE));
  fillOnStream(self, gen, [p](at::Tensor& out, auto&, at::Generator& g) { out.bernoulli_(p, g); });
  return self;
}

at::Tensor& bernoulliTensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [](at::Tensor& out, auto& in, at::Generator& g) { out.bernoulli_(in[0], g); }, {p});
  return self;
}

at::Tensor& exponential(at::Tensor& self, double lambda, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [lambda](at::Tensor& out, auto&, at::Generator& g) { out.exponential_(lambda, g); });
  return self;
}

at::Tensor& geometric(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [p](at::Tensor& out, auto&, at::Generator& g) { out.geometric_(p, g); });
  return self;
}

at::Tensor& logNormal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [mean, std](at::Tensor& out, auto&, at::Generator& g) { out.log_normal_(mean, std, g); });
  return self;
}

at::Tensor& cauchy(at::Tensor& self, double median, double sigma, std::optional<at::Generator> gen) {
  fillOnStream(self, gen, [median, sigma](at::Tensor& out, auto&, at::Generator& g) { out.cauchy_(median, sigma, g); });
  return self;
}

at::Tensor normalTensorFloat(const at::Tensor& mean, double std, std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  fillOnStream(out, gen, [std](at::Tensor& o, auto& in, at::Generator& g) { at::normal_out(o, in[0], std, g); },
               {mean});
  return out;
}

at::Tensor normalFloatTensor(double mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(std, at::MemoryFormat::Contiguous);
  fillOnStream(out, gen, [mean](at::Tensor& o, auto& in, at::Generator& g) { at::normal_out(o, mean, in[0], g); },
               {std});
  return out;
}

at::Tensor normalTensorTensor(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  at::Tensor out = at::empty(at::infer_size(mean.sizes(), std.sizes()), mean.options());
  fillOnStream(out, gen, [](at::Tensor& o, auto& in, at::Generator& g) { at::normal_out(o, in[0], in[1], g); },
               {mean, std});
  return out;
}

at::Tensor multinomial(const at::Tensor& self, int64_t samples, bool replacement, std::optional<at::Generator> gen) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "multinomial expects a 1-D or 2-D probability tensor, got ",
              self.dim(), " dimensions\n", ptaErr(ErrCode::PARAM));
  std::vector<int64_t> shape = self.dim() == 1 ? std::vector<int64_t>{samples}
                                               : std::vector<int64_t>{self.size(0), samples};
  at::Tensor out = at::empty(shape, self.options().dtype(at::kLong));
  fillOnStream(
      out, gen,
      [samples, replacement](at::Tensor& o, auto& in, at::Generator& g) {
        at::multinomial_out(o, in[0], samples, replacement, g);
      },
      {self});
  return out;
}

at::Tensor& randpermOut(int64_t n, std::optional<at::Generator> gen, at::Tensor& out) {
  if (out.numel() != n) out.resize_({n});
  fillOnStream(out, gen, [n](at::Tensor& o, auto&, at::Generator& g) { at::randperm_out(o, n, g); });
  return out;
}

// Training dropout as CPU kernels compute it, with the mask from the NPU generator.
std::tuple<at::Tensor, at::Tensor> nativeDropout(const at::Tensor& input, double p, std::optional<bool> train) {
  if (input.numel() == 0 || !train.value_or(true) || p == 0.0) {
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  double keep = 1.0 - p;
  at::Tensor mask = at::empty_like(input, input.options().dtype(at::kBool), at::MemoryFormat::Contiguous);
  bernoulliFloat(mask, keep, std::nullopt);
  at::Tensor output = input.mul(mask).mul_(keep == 0.0 ? 0.0 : 1.0 / keep);
  return {output, mask};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", TORCH_FN(uniform));
  m.impl("normal_", TORCH_FN(normal));
  m.impl("random_", TORCH_FN(random));
  m.impl("random_.to", TORCH_FN(randomTo));
  m.impl("random_.from", TORCH_FN(randomFrom));
  m.impl("bernoulli_.float", TORCH_FN(bernoulliFloat));
  m.impl("bernoulli_.Tensor", TORCH_FN(bernoulliTensor));
  m.impl("exponential_", TORCH_FN(exponential));
  m.impl("geometric_", TORCH_FN(geometric));
  m.impl("log_normal_", TORCH_FN(logNormal));
  m.impl("cauchy_", TORCH_FN(cauchy));
  m.impl("normal.Tensor_float", TORCH_FN(normalTensorFloat));
  m.impl("normal.float_Tensor", TORCH_FN(normalFloatTensor));
  m.impl("normal.Tensor_Tensor", TORCH_FN(normalTensorTensor));
  m.impl("multinomial", TORCH_FN(multinomial));
  m.impl("randperm.generator_out", TORCH_FN(randpermOut));
  m.impl("native_dropout", TORCH_FN(nativeDropout));
}

}  // namespace
}  // namespace torch_npu
