// Random ops driven by the NPU generator, as compiled kernels. Each op reserves a range of the
// generator's Philox counter (seed, offset) under its mutex, then runs one of the
// npu::_npu_philox_* custom ops through OpCommand on the current stream: Philox4x32-10 and the
// distribution's transform fused into one kernel (npu_mlir/frontend/references/philox.py), with seed and offset
// as kernel parameters, so neither a new seed nor a later draw recompiles. Results depend only on
// the NPU seed and the sequence of random ops, never on torch's CPU generator.
// randperm and multinomial need a sort / search the compiler has no lowering for: their Philox
// draws are compiled, the permutation / sampling from those draws runs in a task on the stream.
#include <ATen/ExpandUtils.h>
#include <ATen/ops/argsort.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/where.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/core/NpuGenerator.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu {
namespace {

using eager::OpCommand;

void checkNpu(const at::Tensor& t) {
  // An NPU generator makes the dispatcher pick these kernels even for CPU tensors.
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "an NPU generator cannot fill a tensor on ",
              t.device(), ": pass a generator of that device, or create the tensor with device='npu'\n",
              ptaErr(ErrCode::PARAM));
}

// A Philox op over `like`: its counters are reserved from the generator when the command is made.
OpCommand philoxCommand(const char* op, const at::Tensor& like, const std::optional<at::Generator>& gen) {
  auto* npuGen = at::get_generator_or_default<NpuGeneratorImpl>(gen, getDefaultNpuGenerator(like.device().index()));
  std::pair<uint64_t, uint64_t> start;
  {
    std::lock_guard<std::mutex> lock(npuGen->mutex_);
    start = npuGen->reservePhilox(static_cast<uint64_t>(like.numel()));
  }
  // The kernel takes int64 parameters: the uint64 seed and offset pass bit-cast.
  return std::move(OpCommand()
                       .Name(op)
                       .Input(like)
                       .Attr("seed", static_cast<int64_t>(start.first))
                       .Attr("offset", static_cast<int64_t>(start.second)));
}

// Runs `command` (whose op fills a fresh tensor like `self`) and writes its result into self.
at::Tensor& fillFrom(at::Tensor& self, OpCommand command) {
  self.copy_(command.Run().at(0));
  return self;
}

// A number as a kernel parameter in a Tensor slot.
at::Tensor wrappedNumber(double value) {
  at::Tensor t = at::scalar_tensor(value, at::TensorOptions().dtype(at::kDouble));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

at::Tensor& uniform(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(from <= to, "uniform_ expects from <= to, but got from=", from, " > to=", to, "\n",
              ptaErr(ErrCode::VALUE));
  if (self.numel() == 0) return self;
  return fillFrom(self, philoxCommand("npu::_npu_philox_uniform", self, gen).Attr("low", from).Attr("high", to));
}

at::Tensor& normal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std, "\n", ptaErr(ErrCode::VALUE));
  if (self.numel() == 0) return self;
  return fillFrom(self, philoxCommand("npu::_npu_philox_normal", self, gen).Attr("mean", mean).Attr("std", std));
}

at::Tensor& logNormal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std, "\n", ptaErr(ErrCode::VALUE));
  if (self.numel() == 0) return self;
  return fillFrom(self, philoxCommand("npu::_npu_philox_log_normal", self, gen).Attr("mean", mean).Attr("std", std));
}

at::Tensor normalTensors(const at::Tensor& like, const at::Tensor& mean, const at::Tensor& std,
                         std::optional<at::Generator> gen) {
  checkNpu(like);
  if (like.numel() == 0) return at::empty_like(like, at::MemoryFormat::Contiguous);
  return philoxCommand("npu::_npu_philox_normal.Tensor", like, gen).Input(mean).Input(std).Run().at(0);
}

at::Tensor normalTensorFloat(const at::Tensor& mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std, "\n", ptaErr(ErrCode::VALUE));
  return normalTensors(mean, mean, wrappedNumber(std), gen);
}

at::Tensor normalFloatTensor(double mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  return normalTensors(std, wrappedNumber(mean), std, gen);
}

at::Tensor normalTensorTensor(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  at::Tensor like = at::empty(at::infer_size(mean.sizes(), std.sizes()), mean.options());
  return normalTensors(like, mean, std, gen);
}

// out= forms: the draw, then resized into `out` as out= ops do.
at::Tensor& intoOut(const at::Tensor& result, at::Tensor& out) {
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

at::Tensor& normalTensorFloatOut(const at::Tensor& mean, double std, std::optional<at::Generator> gen,
                                 at::Tensor& out) {
  return intoOut(normalTensorFloat(mean, std, gen), out);
}

at::Tensor& normalFloatTensorOut(double mean, const at::Tensor& std, std::optional<at::Generator> gen,
                                 at::Tensor& out) {
  return intoOut(normalFloatTensor(mean, std, gen), out);
}

at::Tensor& normalTensorTensorOut(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen,
                                  at::Tensor& out) {
  return intoOut(normalTensorTensor(mean, std, gen), out);
}

at::Tensor& bernoulliFloat(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "bernoulli_ expects p to be in [0, 1], but got p=", p, "\n",
              ptaErr(ErrCode::VALUE));
  if (self.numel() == 0) return self;
  return fillFrom(self, philoxCommand("npu::_npu_philox_bernoulli", self, gen).Attr("p", p));
}

at::Tensor& bernoulliTensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> gen) {
  checkNpu(self);
  if (self.numel() == 0) return self;
  at::Tensor probabilities = p.device() == self.device() ? p : p.to(self.device());
  return fillFrom(self, philoxCommand("npu::_npu_philox_bernoulli.Tensor", self, gen).Input(probabilities));
}

at::Tensor& exponential(at::Tensor& self, double lambda, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(lambda > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambda, "\n",
              ptaErr(ErrCode::VALUE));
  if (self.numel() == 0) return self;
  return fillFrom(self, philoxCommand("npu::_npu_philox_exponential", self, gen).Attr("lambd", lambda));
}

at::Tensor& geometric(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(p > 0.0 && p < 1.0, "geometric_ expects p to be in (0, 1), but got p=", p, "\n",
              ptaErr(ErrCode::VALUE));
  if (self.numel() == 0) return self;
  return fillFrom(self, philoxCommand("npu::_npu_philox_geometric", self, gen).Attr("p", p));
}

at::Tensor& cauchy(at::Tensor& self, double median, double sigma, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma, "\n", ptaErr(ErrCode::VALUE));
  if (self.numel() == 0) return self;
  return fillFrom(self,
                  philoxCommand("npu::_npu_philox_cauchy", self, gen).Attr("median", median).Attr("sigma", sigma));
}

// Integers in [low, low + span); span 0 stands for every non-negative int64 (2^63 values).
at::Tensor& randomRange(at::Tensor& self, int64_t low, uint64_t span, std::optional<at::Generator> gen) {
  checkNpu(self);
  if (self.numel() == 0) return self;
  int64_t spanParam = span > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? 0 : static_cast<int64_t>(span);
  return fillFrom(self, philoxCommand("npu::_npu_philox_random", self, gen).Attr("low", low).Attr("span", spanParam));
}

// One past the largest value random_() draws for self's dtype (as torch's CPU and CUDA kernels do):
// every integer a floating dtype represents exactly, the whole range of an integer dtype.
uint64_t defaultRandomEnd(const at::Tensor& self) {
  switch (self.scalar_type()) {
    case at::kFloat: return (uint64_t{1} << 24) + 1;
    case at::kDouble: return (uint64_t{1} << 53) + 1;
    case at::kHalf: return (uint64_t{1} << 11) + 1;
    case at::kBFloat16: return (uint64_t{1} << 8) + 1;
    case at::kBool: return 2;
    case at::kByte: return uint64_t{1} << 8;
    case at::kChar: return uint64_t{1} << 7;
    case at::kShort: return uint64_t{1} << 15;
    case at::kInt: return uint64_t{1} << 31;
    case at::kLong: return uint64_t{1} << 63;
    default:
      TORCH_CHECK(false, "random_ does not support dtype ", self.scalar_type(), " on NPU\n", ptaErr(ErrCode::TYPE));
  }
}

at::Tensor& random(at::Tensor& self, std::optional<at::Generator> gen) {
  return randomRange(self, 0, defaultRandomEnd(self), gen);
}

at::Tensor& randomTo(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  TORCH_CHECK(to > 0, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to, "\n",
              ptaErr(ErrCode::VALUE));
  return randomRange(self, 0, static_cast<uint64_t>(to), gen);
}

at::Tensor& randomFrom(at::Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> gen) {
  if (to.has_value()) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to,
                "\n", ptaErr(ErrCode::VALUE));
    return randomRange(self, from, static_cast<uint64_t>(*to) - static_cast<uint64_t>(from), gen);
  }
  uint64_t end = defaultRandomEnd(self);
  TORCH_CHECK(from < 0 || static_cast<uint64_t>(from) < end, "random_ expects 'from' below the largest value of ",
              self.scalar_type(), ", got from=", from, "\n", ptaErr(ErrCode::VALUE));
  return randomRange(self, from, end - static_cast<uint64_t>(from), gen);
}

// Runs `task` on CPU aliases of `tensors` after the stream's pending work (which produced them),
// keeping the NPU tensors alive until it has run.
void onStream(const std::vector<at::Tensor>& tensors, std::function<void(std::vector<at::Tensor>&)> task) {
  std::vector<at::Tensor> aliases;
  for (const at::Tensor& t : tensors) aliases.push_back(cpuAlias(t));
  launchHostTask(getCurrentStream(tensors.front().device().index()),
                 [tensors, aliases, task = std::move(task)]() mutable { task(aliases); });
}

at::Tensor& randpermOut(int64_t n, std::optional<at::Generator> gen, at::Tensor& out) {
  checkNpu(out);
  TORCH_CHECK(n >= 0, "randperm expects n >= 0, got n=", n, "\n", ptaErr(ErrCode::VALUE));
  if (out.numel() != n) out.resize_({n});
  if (n == 0) return out;
  c10::DeviceGuard guard(out.device());
  // Sorting distinct-with-overwhelming-probability 63-bit Philox keys gives a uniform permutation.
  at::Tensor keys = at::empty({n}, out.options().dtype(at::kLong));
  randomRange(keys, 0, 0, gen);
  onStream({keys, out}, [](std::vector<at::Tensor>& a) { a[1].copy_(at::argsort(a[0], /*stable=*/true)); });
  return out;
}

at::Tensor multinomial(const at::Tensor& self, int64_t samples, bool replacement, std::optional<at::Generator> gen) {
  checkNpu(self);
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "multinomial expects a 1-D or 2-D probability tensor, got ",
              self.dim(), " dimensions\n", ptaErr(ErrCode::PARAM));
  int64_t categories = self.size(-1);
  TORCH_CHECK(samples > 0, "multinomial expects num_samples > 0, got ", samples, "\n", ptaErr(ErrCode::VALUE));
  TORCH_CHECK(replacement || samples <= categories, "multinomial cannot draw ", samples, " samples from ",
              categories, " categories without replacement: pass replacement=True\n", ptaErr(ErrCode::VALUE));
  c10::DeviceGuard guard(self.device());
  at::Tensor rows = self.dim() == 1 ? self.unsqueeze(0) : self;
  at::Tensor out = at::empty({rows.size(0), samples}, self.options().dtype(at::kLong));
  // With replacement: inverse CDF of one uniform per sample. Without: the `samples` largest
  // p / Exp(1) keys (exponential races), one uniform per category.
  at::Tensor u = at::empty({rows.size(0), replacement ? samples : categories}, self.options().dtype(at::kFloat));
  uniform(u, 0.0, 1.0, gen);
  // Errors found here (the probabilities are only readable once the stream reaches this task) are
  // raised by the next synchronizing call, as a kernel error would be.
  onStream({rows, u, out}, [replacement, samples](std::vector<at::Tensor>& a) {
    at::Tensor p = a[0].to(at::kDouble);
    TORCH_CHECK(p.ge(0).all().item<bool>() && p.isfinite().all().item<bool>() && p.sum(-1).gt(0).all().item<bool>(),
                "multinomial expects finite, non-negative probabilities with a positive sum in every row\n",
                ptaErr(ErrCode::VALUE));
    if (replacement) {
      at::Tensor cdf = p.cumsum(-1);
      cdf = cdf.div(cdf.narrow(-1, cdf.size(-1) - 1, 1));
      at::Tensor picks = at::searchsorted(cdf, a[1].to(at::kDouble), /*out_int32=*/false, /*right=*/true);
      a[2].copy_(picks.clamp_max(cdf.size(-1) - 1));
    } else {
      TORCH_CHECK(p.gt(0).sum(-1).ge(samples).all().item<bool>(), "multinomial without replacement needs at least ",
                  samples, " categories with non-zero probability in every row: pass replacement=True or fewer "
                  "samples\n", ptaErr(ErrCode::VALUE));
      at::Tensor keys = p.div(a[1].to(at::kDouble).neg().add_(1.0).log_().neg_());
      a[2].copy_(std::get<1>(at::topk(keys, samples, -1)));
    }
  });
  return self.dim() == 1 ? out.squeeze(0) : out;
}

// Randomized leaky ReLU: in training each negative element gets its own slope drawn from
// U(lower, upper) (kept in `noise` for the backward); in eval the mean slope.
at::Tensor rreluWithNoise(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower, const at::Scalar& upper,
                          bool training, std::optional<at::Generator> gen) {
  double low = lower.toDouble(), high = upper.toDouble();
  TORCH_CHECK(low <= high, "rrelu expects lower <= upper, got lower=", low, ", upper=", high, "\n",
              ptaErr(ErrCode::VALUE));
  if (!training) return at::leaky_relu(self, (low + high) / 2);
  checkNpu(noise);
  at::Tensor slopes = at::empty_like(self, at::MemoryFormat::Contiguous);
  uniform(slopes, low, high, gen);
  at::Tensor chosen = at::where(self.ge(0), at::ones_like(slopes), slopes);
  intoOut(chosen, noise);
  return self.mul(chosen);
}

// Training dropout: mask and scaled output from one compiled kernel.
std::tuple<at::Tensor, at::Tensor> nativeDropout(const at::Tensor& input, double p, std::optional<bool> train) {
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "dropout probability has to be between 0 and 1, but got ", p, "\n",
              ptaErr(ErrCode::VALUE));
  if (input.numel() == 0 || !train.value_or(true) || p == 0.0) {
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  double keep = 1.0 - p;
  std::vector<at::Tensor> results = philoxCommand("npu::_npu_philox_dropout", input, std::nullopt)
                                        .Attr("keep", keep)
                                        .Attr("scale", keep == 0.0 ? 0.0 : 1.0 / keep)
                                        .Run();
  return {results.at(0), results.at(1)};
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
  m.impl("normal.Tensor_float_out", TORCH_FN(normalTensorFloatOut));
  m.impl("normal.float_Tensor_out", TORCH_FN(normalFloatTensorOut));
  m.impl("normal.Tensor_Tensor_out", TORCH_FN(normalTensorTensorOut));
  m.impl("rrelu_with_noise", TORCH_FN(rreluWithNoise));
  m.impl("multinomial", TORCH_FN(multinomial));
  m.impl("randperm.generator_out", TORCH_FN(randpermOut));
  m.impl("native_dropout", TORCH_FN(nativeDropout));
}

}  // namespace
}  // namespace torch_npu
