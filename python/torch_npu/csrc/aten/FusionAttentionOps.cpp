// npu_fusion_attention and npu_fusion_attention_grad with torch_npu's schemas: arguments checked at
// the boundary, then the flash kernels (FlashAttention.h: blocked online softmax, O(S) memory) for
// every call: causal (sparse_mode 2 / 3) or masked, a pre/next_tockens band narrowing the mask, with
// or without pse (the flash bias, scale * pse, and its gradient), with or without dropout (the keep
// mask drawn per block pair in the step kernels from torch_npu's Philox draws at (seed, offset), so
// the backward, given the seed and offset the forward returned, redraws the same mask).
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/aten/FlashAttention.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::native {
namespace {

constexpr int64_t kNoBand = std::numeric_limits<int32_t>::max();
constexpr int64_t kStatColumns = 8;  // softmax_max / softmax_sum are [B, N, S1, 8]
// torch_npu's causal sparse modes: the band's diagonal aligned top-left / bottom-right (atten_mask,
// the compressed 2048 x 2048 triangle torch_npu asks for, carries nothing more and is not read).
constexpr int64_t kLeftUpCausal = 2, kRightDownCausal = 3;

using Dims = std::array<int64_t, 4>;  // B, N, S, D of one input

struct Geometry {
  Dims q, k;  // query's and key/value's [B, N, S, D]
  Dims scores() const { return {q[0], q[1], q[2], k[2]}; }
  int64_t numels() const { return q[0] * q[1] * q[2] * k[2]; }
};

void notSupported(const char* op, bool unsupported, const std::string& what) {
  TORCH_CHECK(!unsupported, op, ": ", what, " is not supported by the simulated NPU's fused attention\n",
              opsErr(ErrCode::NOT_SUPPORT));
}

Dims bnsd(const char* op, const char* name, const at::Tensor& t, const std::string& layout, int64_t headDim) {
  int64_t rank = layout.size() == 3 ? 3 : 4;
  TORCH_CHECK(t.dim() == rank, op, ": ", name, " has ", t.dim(), " dimensions; layout ", layout, " needs ", rank,
              "\n", opsErr(ErrCode::PARAM));
  if (layout == "BNSD") return {t.size(0), t.size(1), t.size(2), t.size(3)};
  if (layout == "BSND") return {t.size(0), t.size(2), t.size(1), t.size(3)};
  int64_t hidden = t.size(2);
  TORCH_CHECK(headDim > 0 && hidden % headDim == 0, op, ": ", name, " has hidden size ", hidden,
              ", not a multiple of the head size ", headDim, " (query's hidden size / head_num)\n",
              opsErr(ErrCode::PARAM));
  if (layout == "BSH") return {t.size(0), hidden / headDim, t.size(1), headDim};
  return {t.size(1), hidden / headDim, t.size(0), headDim};  // SBH
}

Geometry checkInputs(const char* op, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                     int64_t headNum, const std::string& layout) {
  notSupported(op, layout == "TND", "input_layout TND (variable-length sequences)");
  TORCH_CHECK(layout == "BSH" || layout == "SBH" || layout == "BSND" || layout == "BNSD", op, ": input_layout '",
              layout, "' is unknown; use BSH, SBH, BSND or BNSD\n", opsErr(ErrCode::PARAM));
  checkNpuFloating(op, "query", query);
  checkNpuFloating(op, "key", key);
  checkNpuFloating(op, "value", value);
  checkSameDtype(op, "key", key, "query", query);
  checkSameDtype(op, "value", value, "query", query);
  TORCH_CHECK(headNum > 0, op, ": head_num is ", headNum, "; pass the number of query heads (> 0)\n",
              opsErr(ErrCode::PARAM));
  int64_t headDim = layout.size() == 3 ? (query.dim() == 3 ? query.size(2) / headNum : 0) : query.size(-1);
  Geometry g{bnsd(op, "query", query, layout, headDim), bnsd(op, "key", key, layout, headDim)};
  TORCH_CHECK(g.q[1] == headNum, op, ": query has ", g.q[1], " heads of size ", g.q[3], " but head_num is ", headNum,
              "\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(g.k[3] == g.q[3], op, ": key has head size ", g.k[3], ", query ", g.q[3], "; they must match\n",
              opsErr(ErrCode::PARAM));
  TORCH_CHECK(g.k[0] == g.q[0], op, ": key has batch ", g.k[0], ", query ", g.q[0], "\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(g.k[1] > 0 && headNum % g.k[1] == 0, op, ": key/value have ", g.k[1], " heads, which must divide ",
              "head_num ", headNum, " (grouped-query attention)\n", opsErr(ErrCode::PARAM));
  checkSameShape(op, "value", value, "key", key.sizes());
  return g;
}

// Every dimension of `t` is that of `full` or 1 (a broadcastable [.., S1, S2] operand).
void checkBroadcast(const char* op, const char* name, const at::Tensor& t, const Dims& full, bool allow2d) {
  TORCH_CHECK(t.dim() == 4 || (allow2d && t.dim() == 2), op, ": ", name, " has ", t.dim(), " dimensions; expected ",
              allow2d ? "[S1, S2] or " : "", "[B or 1, N or 1, S1, S2]\n", opsErr(ErrCode::PARAM));
  for (int64_t i = 0; i < t.dim(); ++i) {
    int64_t want = full[4 - t.dim() + i];
    TORCH_CHECK(t.size(i) == want || t.size(i) == 1, op, ": ", name, " has shape ", t.sizes(),
                ", which does not broadcast to the attention scores [B, N, S1, S2] = ", c10::IntArrayRef(full), "\n",
                opsErr(ErrCode::PARAM));
  }
}

void checkOptions(const char* op, const Geometry& g, const at::Tensor& query, const std::optional<at::Tensor>& pse,
                  const std::optional<at::Tensor>& paddingMask, const std::optional<at::Tensor>& attenMask,
                  double keepProb, int64_t preTokens, int64_t nextTokens, int64_t innerPrecise,
                  const at::OptionalIntArrayRef& prefix, const at::OptionalIntArrayRef& seqQ,
                  const at::OptionalIntArrayRef& seqKv, int64_t sparseMode) {
  notSupported(op, paddingMask.has_value() && paddingMask->defined(), "padding_mask (also unsupported in torch_npu)");
  notSupported(op, sparseMode != 0 && sparseMode != kLeftUpCausal && sparseMode != kRightDownCausal,
               "sparse_mode " + std::to_string(sparseMode) + " (0 with an atten_mask, 2 or 3 for causal)");
  notSupported(op, prefix.has_value() || seqQ.has_value() || seqKv.has_value(),
               "prefix / actual_seq_qlen / actual_seq_kvlen (variable-length sequences)");
  notSupported(op, innerPrecise != 0 && innerPrecise != 1,
               "inner_precise " + std::to_string(innerPrecise) + " (0 or 1; both compute in float32 here)");
  TORCH_CHECK(keepProb >= 0.0 && keepProb <= 1.0, op, ": keep_prob is ", keepProb, "; expected a value in [0, 1]\n",
              opsErr(ErrCode::VALUE));
  if (pse.has_value() && pse->defined()) {
    checkNpuFloating(op, "pse", *pse);
    checkSameDtype(op, "pse", *pse, "query", query);
    checkBroadcast(op, "pse", *pse, g.scores(), false);
  }
  if (attenMask.has_value() && attenMask->defined()) {
    const at::Tensor& m = *attenMask;
    TORCH_CHECK(m.device() == query.device(), op, ": atten_mask is on ", m.device(), ", query on ", query.device(),
                "; move it with .to(query.device)\n", opsErr(ErrCode::PARAM));
    TORCH_CHECK(m.scalar_type() == at::kBool || m.scalar_type() == at::kByte, op, ": atten_mask has dtype ",
                m.scalar_type(), "; expected bool or uint8 (True / 1 = masked out)\n", opsErr(ErrCode::TYPE));
    // sparse_mode 2 / 3 take torch_npu's compressed [2048, 2048] triangle, whatever S1 and S2 are.
    if (sparseMode == 0) checkBroadcast(op, "atten_mask", m, g.scores(), true);
  }
}

struct Band {
  int64_t pre = kNoBand, next = kNoBand;
};

// sparse_mode 0: the pre/next_tockens band narrows atten_mask and is ignored without one. A band
// covering every (query, key) pair is passed as "no band", so such values share one kernel.
Band kernelBand(const Geometry& g, const std::optional<at::Tensor>& mask, int64_t preTokens, int64_t nextTokens) {
  bool covers = preTokens >= g.q[2] - 1 && nextTokens >= g.k[2] - 1;
  if (!mask.has_value() || !mask->defined() || covers) return {};
  return {preTokens, nextTokens};
}

// The simulated device has no uint8 kernels: a uint8 mask is read as int8 (the kernel tests != 0).
std::optional<at::Tensor> kernelMask(const std::optional<at::Tensor>& mask) {
  if (!mask.has_value() || !mask->defined()) return std::nullopt;
  return mask->scalar_type() == at::kByte ? mask->view(at::kChar) : *mask;
}

// Dropout's generator state, advanced past the B * N * S1 * S2 draws the step kernels make (none
// for keep_prob 0 or 1, as torch_npu).
std::pair<int64_t, int64_t> reserveDropout(const Geometry& g, const at::Tensor& query, double keepProb) {
  if (keepProb >= 1.0 || keepProb <= 0.0) return {0, 0};
  return flash::reserveDropout(query.device().index(), g.numels());
}

// [B, N, S, D] view of an input in `layout` (heads of size headDim), and back (contiguous).
at::Tensor toBnsd(const at::Tensor& x, const std::string& layout, int64_t headDim) {
  if (layout == "BSH") return x.view({x.size(0), x.size(1), -1, headDim}).transpose(1, 2);
  if (layout == "SBH") return x.view({x.size(0), x.size(1), -1, headDim}).permute({1, 2, 0, 3});
  if (layout == "BSND") return x.transpose(1, 2);
  return x;
}

at::Tensor fromBnsd(const at::Tensor& x, const std::string& layout) {
  int64_t b = x.size(0), n = x.size(1), s = x.size(2), d = x.size(3);
  if (layout == "BSH") return x.transpose(1, 2).contiguous().view({b, s, n * d});
  if (layout == "SBH") return x.permute({2, 0, 1, 3}).contiguous().view({s, b, n * d});
  if (layout == "BSND") return x.transpose(1, 2).contiguous();
  return x.contiguous();
}

bool given(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

flash::FlashProblem flashProblem(const Geometry& g, const at::Tensor& query, const at::Tensor& key,
                                 const at::Tensor& value, const std::string& layout,
                                 const std::optional<at::Tensor>& pse, const std::optional<at::Tensor>& attenMask,
                                 int64_t sparseMode, double scale, const Band& band, double keepProb,
                                 std::pair<int64_t, int64_t> drop) {
  flash::FlashProblem p{toBnsd(query, layout, g.q[3]), toBnsd(key, layout, g.q[3]), toBnsd(value, layout, g.q[3])};
  // scores = scale * (q k^T + pse): the flash bias is added to the scaled scores.
  if (given(pse)) p.bias = pse->to(at::kFloat).mul(scale);
  if (sparseMode == kLeftUpCausal) {
    p.causalShift = 0;
  } else if (sparseMode == kRightDownCausal) {
    p.causalShift = g.k[2] - g.q[2];
  } else if (attenMask.has_value() && attenMask->defined()) {
    at::Tensor m = *kernelMask(attenMask);
    if (m.scalar_type() != at::kBool) m = m.ne(0);
    p.mask = m.dim() == 2 ? m.unsqueeze(0).unsqueeze(0) : m;
    if (band.pre != kNoBand || band.next != kNoBand) {
      p.causalShift = band.next;
      p.bandBelow = band.pre;
    }
  }
  p.scale = scale;
  if (keepProb < 1.0) {
    // keep_prob 0 draws nothing: every uniform is >= 0, so the mask keeps none.
    p.dropout = true;
    p.keepProb = keepProb;
    std::tie(p.dropSeed, p.dropOffset) = drop;
  }
  return p;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, int64_t, int64_t, int64_t> npuFusionAttention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t headNum,
    c10::string_view inputLayout, const std::optional<at::Tensor>& pse, const std::optional<at::Tensor>& paddingMask,
    const std::optional<at::Tensor>& attenMask, double scale, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t innerPrecise, at::OptionalIntArrayRef prefix, at::OptionalIntArrayRef seqQ, at::OptionalIntArrayRef seqKv,
    int64_t sparseMode, bool /*genMaskParallel*/, bool /*sync*/) {
  const char* op = "npu_fusion_attention";
  std::string layout(inputLayout);
  Geometry g = checkInputs(op, query, key, value, headNum, layout);
  checkOptions(op, g, query, pse, paddingMask, attenMask, keepProb, preTokens, nextTokens, innerPrecise, prefix, seqQ,
               seqKv, sparseMode);
  // sparse_mode 2 / 3 take their band from the mode; sparse_mode 0's band narrows atten_mask.
  Band band = sparseMode != 0 ? Band{} : kernelBand(g, attenMask, preTokens, nextTokens);
  auto [seed, offset] = reserveDropout(g, query, keepProb);
  flash::FlashForward f = flash::forward(
      flashProblem(g, query, key, value, layout, pse, attenMask, sparseMode, scale, band, keepProb, {seed, offset}));
  // softmax_out is not produced (torch_npu returns it empty too).
  return {fromBnsd(f.out, layout), f.softmaxMax, f.softmaxSum, at::empty({0}, query.options()), seed, offset,
          g.numels()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> npuFusionAttentionGrad(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, const at::Tensor& dy, int64_t headNum,
    c10::string_view inputLayout, const std::optional<at::Tensor>& pse, const std::optional<at::Tensor>& paddingMask,
    const std::optional<at::Tensor>& attenMask, const std::optional<at::Tensor>& softmaxMax,
    const std::optional<at::Tensor>& softmaxSum, const std::optional<at::Tensor>& /*softmaxIn*/,
    const std::optional<at::Tensor>& attentionIn, double scale, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t innerPrecise, int64_t seed, int64_t offset, int64_t numels,
    at::OptionalIntArrayRef prefix, at::OptionalIntArrayRef seqQ, at::OptionalIntArrayRef seqKv, int64_t sparseMode,
    bool /*genMaskParallel*/, bool /*sync*/) {
  const char* op = "npu_fusion_attention_grad";
  std::string layout(inputLayout);
  Geometry g = checkInputs(op, query, key, value, headNum, layout);
  checkOptions(op, g, query, pse, paddingMask, attenMask, keepProb, preTokens, nextTokens, innerPrecise, prefix, seqQ,
               seqKv, sparseMode);
  checkNpuFloating(op, "dy", dy);
  checkSameDtype(op, "dy", dy, "query", query);
  checkSameShape(op, "dy", dy, "query", query.sizes());
  Dims s = g.scores();
  Dims stat{s[0], s[1], s[2], kStatColumns};
  for (auto [name, t] : {std::pair{"softmax_max", &softmaxMax}, std::pair{"softmax_sum", &softmaxSum}}) {
    TORCH_CHECK(t->has_value() && (*t)->defined(), op, ": ", name, " is missing; pass the ", name,
                " npu_fusion_attention returned (the backward recomputes the softmax from it)\n",
                opsErr(ErrCode::PARAM));
    TORCH_CHECK((*t)->scalar_type() == at::kFloat, op, ": ", name, " has dtype ", (*t)->scalar_type(),
                "; expected float32 as npu_fusion_attention returns it\n", opsErr(ErrCode::TYPE));
    checkSameShape(op, name, **t, "[B, N, S1, 8]", stat);
  }
  if (keepProb < 1.0 && keepProb > 0.0) {
    TORCH_CHECK(numels == g.numels(), op, ": numels is ", numels, " but these inputs have ", g.numels(),
                " attention scores; pass the seed, offset and numels npu_fusion_attention returned\n",
                opsErr(ErrCode::VALUE));
  }
  Band band = sparseMode != 0 ? Band{} : kernelBand(g, attenMask, preTokens, nextTokens);
  flash::FlashProblem p =
      flashProblem(g, query, key, value, layout, pse, attenMask, sparseMode, scale, band, keepProb, {seed, offset});
  p.biasGrad = given(pse);
  at::Tensor out;  // without attention_in the flash backward recomputes it
  if (attentionIn.has_value() && attentionIn->defined()) {
    checkSameShape(op, "attention_in", *attentionIn, "query", query.sizes());
    out = toBnsd(*attentionIn, layout, g.q[3]);
  }
  flash::FlashGrads d = flash::backward(p, out, toBnsd(dy, layout, g.q[3]), *softmaxMax, *softmaxSum);
  // d(scale * pse) = scale * d(bias), in pse's shape and dtype.
  at::Tensor dpse = given(pse) ? d.dbias.mul(scale).to(pse->scalar_type()) : at::empty({0}, query.options());
  return {fromBnsd(d.dq, layout), fromBnsd(d.dk, layout), fromBnsd(d.dv, layout), dpse};
}

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {
  m.impl("npu_fusion_attention", &npuFusionAttention);
  m.impl("npu_fusion_attention_grad", &npuFusionAttentionGrad);
}

}  // namespace
}  // namespace torch_npu::native
