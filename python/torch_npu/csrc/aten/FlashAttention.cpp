// Flash attention's host loop (see FlashAttention.h) and F.scaled_dot_product_attention on npu.
//
// Blocks: query rows and key/value rows in blocks of kBlock. A step kernel sees one query block
// with its `group` heads per key/value head stacked as rows ([B * Nkv, group * Bq, D]), one
// key/value block, and the running state; blocks above a causal diagonal are skipped. Operand
// blocks are made contiguous (and transposed where a step's matmul wants K^T, Q^T, dO^T) once per
// call by copies, O(S * D) bytes in all.
//
// SDPA: torch 2.13 asks the PrivateUse1 _fused_sdp_choice_stub which backend to use; we answer
// `overrideable` and implement _scaled_dot_product_fused_attention_overrideable and its backward,
// whose autograd formula torch already has. Dropout is the flash kernels' (the Philox keep mask
// npu_fusion_attention draws, at the (seed, offset) the forward returns for the backward).
#include "torch_npu/csrc/aten/FlashAttention.h"

#include <ATen/native/transformers/attention.h>
#include <ATen/native/transformers/sdp_utils_cpp.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <cmath>
#include <mutex>
#include <string>
#include <algorithm>
#include <vector>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/core/NpuGenerator.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::native::flash {
namespace {

// Rows per block: a step's scores are [B * N, kBlock, kBlock] float32 (8 MiB at N = 8), and a
// 2048-long sequence is 4 x 4 steps.
constexpr int64_t kBlock = 512;

struct Span {
  int64_t start, len;
};

std::vector<Span> spans(int64_t total) {
  std::vector<Span> out;
  for (int64_t s = 0; s < total; s += kBlock) out.push_back({s, std::min(kBlock, total - s)});
  return out;
}

struct Dims {
  int64_t b, n, nkv, group, s1, s2, d;
  int64_t g() const { return b * nkv; }
};

Dims dims(const FlashProblem& p) {
  const at::Tensor& q = p.query;
  int64_t nkv = p.key.size(1);
  return {q.size(0), q.size(1), nkv, q.size(1) / nkv, q.size(2), p.key.size(2), q.size(3)};
}

// Rows of one block of a [B, H, S, D] tensor (H = heads * group), heads stacked: [B * heads, group * len, D].
at::Tensor rows(const at::Tensor& x, Span s, int64_t group) {
  at::Tensor blk = x.narrow(2, s.start, s.len).contiguous();
  return blk.view({x.size(0) * (x.size(1) / group), group * s.len, x.size(3)});
}

// The same block transposed: [B * heads, D, group * len].
at::Tensor rowsT(const at::Tensor& x, Span s, int64_t group) {
  int64_t heads = x.size(1) / group;
  return x.narrow(2, s.start, s.len)
      .view({x.size(0), heads, group, s.len, x.size(3)})
      .permute({0, 1, 4, 2, 3})
      .contiguous()
      .view({x.size(0) * heads, x.size(3), group * s.len});
}

// Column 0 of a [B, N, S1, k] softmax statistic for one query block, as a [B * Nkv, 1, group * len] row.
at::Tensor statRow(const at::Tensor& stat, Span s, const Dims& d) {
  return stat.select(3, 0).narrow(2, s.start, s.len).contiguous().view({d.g(), 1, d.group * s.len});
}

// One block pair of a [Bm, Nm, S1, S2]-broadcastable mask or bias: [1 or B * Nkv, group * Bq, C],
// or its transpose [1 or B * Nkv, C, group * Bq].
std::optional<at::Tensor> pairBlock(const std::optional<at::Tensor>& t, Span q, Span k, const Dims& d,
                                    bool transposed) {
  if (!t.has_value()) return std::nullopt;
  at::Tensor full = t->expand({t->size(0), t->size(1), d.s1, d.s2});
  at::Tensor blk = full.narrow(2, q.start, q.len).narrow(3, k.start, k.len);
  bool shared = t->size(0) == 1 && t->size(1) == 1;
  int64_t batch = shared ? 1 : d.b, heads = shared ? 1 : d.nkv;
  at::Tensor five = shared ? blk.expand({1, d.group, q.len, k.len}).reshape({1, 1, d.group, q.len, k.len})
                           : blk.expand({d.b, d.n, q.len, k.len}).contiguous().view({d.b, d.nkv, d.group, q.len, k.len});
  if (!transposed) return five.contiguous().view({batch * heads, d.group * q.len, k.len});
  return five.permute({0, 1, 4, 2, 3}).contiguous().view({batch * heads, k.len, d.group * q.len});
}

// The band of a block pair: whether any of it is visible, and the step's `diagonal` / `diagonal_low`.
struct Band {
  bool visible = true;
  int64_t diagonal = kNoCausal, below = kNoCausal;
};

Band band(const FlashProblem& p, Span q, Span k) {
  Band b;
  if (p.bandBelow != kNoCausal) {
    // A pre/next_tockens band comes with an atten_mask, which may exclude every key of a row inside
    // the band: such a row gets uniform weights over all S2 keys (as the fused kernel gives it), so
    // no pair is skipped; a side that covers the whole pair is dropped.
    if (k.start + k.len - 1 > q.start + p.causalShift) b.diagonal = q.start - k.start + p.causalShift;
    if (q.start + q.len - 1 > k.start + p.bandBelow) b.below = k.start - q.start + p.bandBelow;
    return b;
  }
  if (p.causalShift == kNoCausal) return b;
  if (k.start > q.start + q.len - 1 + p.causalShift) return {false, kNoCausal, kNoCausal};
  if (k.start + k.len - 1 <= q.start + p.causalShift) return b;
  b.diagonal = q.start - k.start + p.causalShift;
  return b;
}

// A step's band and dropout arguments for the block pair (q, k).
eager::OpCommand& stepOptions(eager::OpCommand& cmd, const FlashProblem& p, const Dims& d, Span q, Span k) {
  Band bd = band(p, q, k);
  cmd.Attr("diagonal", bd.diagonal).Attr("scale", p.scale).Attr("diagonal_low", bd.below).Attr("dropout", p.dropout);
  if (p.dropout) {
    // The pair's first score is element (q.start, k.start) of head 0: offset + q.start * S2 + k.start.
    cmd.Attr("drop_seed", p.dropSeed)
        .Attr("drop_offset", p.dropOffset + q.start * d.s2 + k.start)
        .Attr("keep_prob", p.keepProb)
        .Attr("seq_q", d.s1)
        .Attr("seq_kv", d.s2);
  }
  return cmd;
}

// Key/value blocks each query block reads (all of them when a causal band leaves a row no key:
// those rows then get uniform weights, as the fused reference gives a fully masked row).
std::vector<size_t> visibleKeys(const FlashProblem& p, Span q, const std::vector<Span>& ks) {
  std::vector<size_t> out;
  for (size_t j = 0; j < ks.size(); ++j)
    if (band(p, q, ks[j]).visible) out.push_back(j);
  if (out.empty() || (p.causalShift != kNoCausal && q.start + p.causalShift < 0)) {
    out.clear();
    for (size_t j = 0; j < ks.size(); ++j) out.push_back(j);
  }
  return out;
}

}  // namespace

FlashForward forward(const FlashProblem& p) {
  Dims d = dims(p);
  std::vector<Span> qs = spans(d.s1), ks = spans(d.s2);
  std::vector<at::Tensor> keyT, value;
  for (Span k : ks) {
    keyT.push_back(rowsT(p.key, k, 1));
    value.push_back(rows(p.value, k, 1));
  }
  FlashForward r;
  bool single = qs.size() == 1;
  if (!single) {
    r.out = at::empty({d.b, d.n, d.s1, d.d}, p.query.options());
    r.softmaxMax = at::empty({d.b, d.n, d.s1, 8}, p.query.options().dtype(at::kFloat));
    r.softmaxSum = at::empty_like(r.softmaxMax);
  }
  for (Span q : qs) {
    at::Tensor query = rows(p.query, q, d.group);
    std::vector<size_t> keys = visibleKeys(p, q, ks);
    std::optional<at::Tensor> rowMax, rowSum, acc;
    std::vector<at::Tensor> step;
    for (size_t idx = 0; idx < keys.size(); ++idx) {
      size_t j = keys[idx];
      step = stepOptions(eager::OpCommand()
                             .Name("npu::_npu_flash_attention_forward_step")
                             .Input(query)
                             .Input(keyT[j])
                             .Input(value[j])
                             .Attr("atten_mask", pairBlock(p.mask, q, ks[j], d, false))
                             .Attr("bias", pairBlock(p.bias, q, ks[j], d, false))
                             .Attr("row_max", rowMax)
                             .Attr("row_sum", rowSum)
                             .Attr("acc", acc)
                             .Attr("group", d.group)
                             .Attr("last", idx + 1 == keys.size()),
                         p, d, q, ks[j])
                 .Run();
      rowMax = step[0];
      rowSum = step[1];
      acc = step[2];
    }
    if (single) {
      r.out = step[0].view({d.b, d.n, d.s1, d.d});
      r.softmaxMax = step[1].view({d.b, d.n, d.s1, 8});
      r.softmaxSum = step[2].view({d.b, d.n, d.s1, 8});
      continue;
    }
    auto place = [&](at::Tensor& full, const at::Tensor& blk) {
      int64_t cols = full.size(3);
      full.view({d.b, d.nkv, d.group, d.s1, cols}).narrow(3, q.start, q.len).copy_(
          blk.view({d.b, d.nkv, d.group, q.len, cols}));
    };
    place(r.out, step[0]);
    place(r.softmaxMax, step[1]);
    place(r.softmaxSum, step[2]);
  }
  return r;
}

std::pair<int64_t, int64_t> reserveDropout(c10::DeviceIndex device, int64_t draws) {
  auto* gen = getDefaultNpuGenerator(device).get<NpuGeneratorImpl>();
  std::lock_guard<std::mutex> lock(gen->mutex_);
  auto [seed, offset] = gen->reservePhilox(static_cast<uint64_t>(draws));
  return {static_cast<int64_t>(seed), static_cast<int64_t>(offset)};
}

FlashGrads backward(const FlashProblem& p, const at::Tensor& out, const at::Tensor& dout,
                    const at::Tensor& softmaxMax, const at::Tensor& softmaxSum) {
  Dims d = dims(p);
  at::Tensor o = out.defined() ? out : forward(p).out;
  std::vector<Span> qs = spans(d.s1), ks = spans(d.s2);
  struct QueryBlock {
    at::Tensor q, qT, dout, doutT, rowMax, rowSum, delta;
    std::optional<at::Tensor> dqT;
  };
  std::vector<QueryBlock> blocks;
  for (Span q : qs) {
    QueryBlock b{rows(p.query, q, d.group), rowsT(p.query, q, d.group), rows(dout, q, d.group),
                 rowsT(dout, q, d.group), statRow(softmaxMax, q, d), statRow(softmaxSum, q, d), {}, {}};
    b.delta = eager::OpCommand()
                  .Name("npu::_npu_flash_attention_backward_prep")
                  .Input(b.dout)
                  .Input(rows(o, q, d.group))
                  .Run()[0];
    blocks.push_back(std::move(b));
  }
  FlashGrads g{at::zeros_like(p.query, at::MemoryFormat::Contiguous),
               at::zeros({d.b, d.nkv, d.s2, d.d}, p.key.options()),
               at::zeros({d.b, d.nkv, d.s2, d.d}, p.value.options()), {}};
  if (p.biasGrad && p.bias.has_value()) g.dbias = at::zeros(p.bias->sizes(), p.bias->options().dtype(at::kFloat));
  // One block pair's bias gradient, from its own step kernel (dS^T [B * Nkv, C, group * Bq]), summed
  // over the bias's broadcast dimensions and added to its slice of g.dbias.
  auto addBiasGrad = [&](Span q, Span k, const at::Tensor& key, const at::Tensor& value, const QueryBlock& b) {
    at::Tensor dsT = stepOptions(eager::OpCommand()
                                     .Name("npu::_npu_flash_attention_bias_grad_step")
                                     .Input(key)
                                     .Input(value)
                                     .Input(b.qT)
                                     .Input(b.doutT)
                                     .Input(b.rowMax)
                                     .Input(b.rowSum)
                                     .Input(b.delta)
                                     .Attr("atten_mask", pairBlock(p.mask, q, k, d, true))
                                     .Attr("bias", pairBlock(p.bias, q, k, d, true))
                                     .Attr("group", d.group),
                                 p, d, q, k)
                         .Run()[0];
    at::Tensor ds = dsT.view({d.b, d.nkv, k.len, d.group, q.len}).permute({0, 1, 3, 4, 2}).reshape({d.b, d.n, q.len, k.len});
    std::vector<int64_t> broadcast;
    for (int64_t i = 0; i < 4; ++i)
      if (g.dbias.size(i) == 1 && ds.size(i) != 1) broadcast.push_back(i);
    if (!broadcast.empty()) ds = ds.sum(broadcast, /*keepdim=*/true);
    at::Tensor slot = g.dbias;
    if (slot.size(2) != 1) slot = slot.narrow(2, q.start, q.len);
    if (slot.size(3) != 1) slot = slot.narrow(3, k.start, k.len);
    slot.add_(ds);
  };
  for (Span k : ks) {
    at::Tensor key = rows(p.key, k, 1), keyT = rowsT(p.key, k, 1), value = rows(p.value, k, 1);
    std::optional<at::Tensor> dk, dv;
    for (size_t i = 0; i < qs.size(); ++i) {
      std::vector<size_t> keys = visibleKeys(p, qs[i], ks);
      if (std::find_if(keys.begin(), keys.end(), [&](size_t j) { return ks[j].start == k.start; }) == keys.end())
        continue;
      QueryBlock& b = blocks[i];
      std::vector<at::Tensor> r = stepOptions(eager::OpCommand()
                                                  .Name("npu::_npu_flash_attention_backward_step")
                                                  .Input(key)
                                                  .Input(keyT)
                                                  .Input(value)
                                                  .Input(b.q)
                                                  .Input(b.qT)
                                                  .Input(b.dout)
                                                  .Input(b.doutT)
                                                  .Input(b.rowMax)
                                                  .Input(b.rowSum)
                                                  .Input(b.delta)
                                                  .Attr("atten_mask", pairBlock(p.mask, qs[i], k, d, true))
                                                  .Attr("bias", pairBlock(p.bias, qs[i], k, d, true))
                                                  .Attr("grad_key", dk)
                                                  .Attr("grad_value", dv)
                                                  .Attr("grad_query_t", b.dqT)
                                                  .Attr("group", d.group),
                                              p, d, qs[i], k)
                                      .Run();
      dk = r[0];
      dv = r[1];
      b.dqT = r[2];
      if (g.dbias.defined()) addBiasGrad(qs[i], k, key, value, b);
    }
    if (dk.has_value()) {
      g.dk.narrow(2, k.start, k.len).copy_(dk->view({d.b, d.nkv, k.len, d.d}));
      g.dv.narrow(2, k.start, k.len).copy_(dv->view({d.b, d.nkv, k.len, d.d}));
    }
  }
  for (size_t i = 0; i < qs.size(); ++i) {
    if (!blocks[i].dqT.has_value()) continue;
    Span q = qs[i];
    g.dq.view({d.b, d.nkv, d.group, d.s1, d.d}).narrow(3, q.start, q.len).copy_(
        blocks[i].dqT->view({d.b, d.nkv, d.d, d.group, q.len}).permute({0, 1, 3, 4, 2}));
  }
  return g;
}

namespace {

const char* kSdpa = "scaled_dot_product_attention";

// SDPA's attn_mask: a bool mask keeps the True positions (the opposite of torch_npu's), a float
// mask is added to the scores. Either is broadcast to 4-D here.
void sdpaMask(FlashProblem& p, const std::optional<at::Tensor>& attnMask) {
  if (!attnMask.has_value() || !attnMask->defined()) return;
  at::Tensor m = *attnMask;
  TORCH_CHECK(m.dim() >= 2 && m.dim() <= 4, kSdpa, ": attn_mask has ", m.dim(),
              " dimensions; expected 2 to 4 (broadcastable to [B, N, L, S])\n", opsErr(ErrCode::PARAM));
  while (m.dim() < 4) m = m.unsqueeze(0);
  for (int64_t i = 0; i < 4; ++i) {
    int64_t want = i == 0 ? p.query.size(0) : i == 1 ? p.query.size(1) : i == 2 ? p.query.size(2) : p.key.size(2);
    TORCH_CHECK(m.size(i) == want || m.size(i) == 1, kSdpa, ": attn_mask has shape ", attnMask->sizes(),
                ", which does not broadcast to [B, N, L, S] = [", p.query.size(0), ", ", p.query.size(1), ", ",
                p.query.size(2), ", ", p.key.size(2), "]\n", opsErr(ErrCode::PARAM));
  }
  if (m.scalar_type() == at::kBool) {
    p.mask = m.logical_not();
  } else {
    TORCH_CHECK(at::isFloatingType(m.scalar_type()), kSdpa, ": attn_mask has dtype ", m.scalar_type(),
                "; expected bool or a floating dtype\n", opsErr(ErrCode::TYPE));
    p.bias = m.to(at::kFloat);
  }
}

FlashProblem sdpaProblem(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                         const std::optional<at::Tensor>& attnMask, bool isCausal, std::optional<double> scale) {
  TORCH_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4, kSdpa,
              ": the npu kernel takes 4-D [B, N, L, E] query, key and value\n", opsErr(ErrCode::PARAM));
  checkSameDtype(kSdpa, "key", key, "query", query);
  checkSameDtype(kSdpa, "value", value, "query", query);
  checkSameShape(kSdpa, "value", value, "key", key.sizes());
  TORCH_CHECK(key.size(0) == query.size(0) && key.size(3) == query.size(3), kSdpa, ": key has shape ", key.sizes(),
              ", query ", query.sizes(), "; batch and head size must match\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(key.size(1) > 0 && query.size(1) % key.size(1) == 0, kSdpa, ": key/value have ", key.size(1),
              " heads, which must divide the query's ", query.size(1), " (enable_gqa)\n", opsErr(ErrCode::PARAM));
  FlashProblem p{query, key, value};
  sdpaMask(p, attnMask);
  if (isCausal) p.causalShift = 0;
  p.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(3)));
  return p;
}

int64_t fusedSdpChoice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                       const std::optional<at::Tensor>& attnMask, double dropoutP, bool /*isCausal*/,
                       std::optional<double> /*scale*/, bool /*enableGqa*/) {
  bool fits = query.dim() == 4 && key.dim() == 4 && value.dim() == 4 &&
              at::isFloatingType(query.scalar_type()) && query.scalar_type() != at::kDouble &&
              !query.is_nested() && at::globalContext().userEnabledOverrideableSDP();
  // A traced call (torch.compile's fake and functional tensors carry the Python key) takes the
  // math path: the npu-mlir backend compiles and fuses its ops, while the flash op's host loop
  // cannot be traced into a graph and would split it.
  fits = fits && !query.key_set().has(c10::DispatchKey::Python);
  return static_cast<int64_t>(fits ? sdp::SDPBackend::overrideable : sdp::SDPBackend::math);
}

using OverrideableResult = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt,
                                      at::Tensor, at::Tensor, at::Tensor>;

// Dropout keeps a score where its Philox uniform at (seed, offset + its [B, N, L, S] index) is below
// 1 - dropout_p; dropout_p 1 keeps none and draws nothing.
void sdpaDropout(FlashProblem& p, double dropoutP, int64_t seed, int64_t offset) {
  if (dropoutP <= 0.0) return;
  TORCH_CHECK(dropoutP <= 1.0, kSdpa, ": dropout_p is ", dropoutP, "; expected a probability in [0, 1]\n",
              opsErr(ErrCode::VALUE));
  p.dropout = true;
  p.keepProb = 1.0 - dropoutP;
  p.dropSeed = seed;
  p.dropOffset = offset;
}

int64_t scores(const at::Tensor& query, const at::Tensor& key) {
  return query.size(0) * query.size(1) * query.size(2) * key.size(2);
}

OverrideableResult sdpaForward(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                               const std::optional<at::Tensor>& attnBias, double dropoutP, bool isCausal,
                               bool /*returnDebugMask*/, std::optional<double> scale) {
  FlashProblem p = sdpaProblem(query, key, value, attnBias, isCausal, scale);
  std::pair<int64_t, int64_t> drop{0, 0};
  if (dropoutP > 0.0 && dropoutP < 1.0) drop = reserveDropout(query.device().index(), scores(query, key));
  sdpaDropout(p, dropoutP, drop.first, drop.second);
  FlashForward f = forward(p);
  // logsumexp [B, N, L] = max + log(sum): the backward reads it as softmax_max with a sum of 1.
  at::Tensor lse = f.softmaxMax.select(3, 0).add(f.softmaxSum.select(3, 0).log());
  at::Tensor none = at::empty({0}, query.options().dtype(at::kLong));
  // The Philox state as CUDA's flash attention returns it: 0-d int64 host tensors.
  at::Tensor seed = at::scalar_tensor(drop.first, at::TensorOptions().dtype(at::kLong));
  at::Tensor offset = at::scalar_tensor(drop.second, at::TensorOptions().dtype(at::kLong));
  return {f.out, lse, none, none, query.size(2), key.size(2), seed, offset, at::empty({0}, query.options())};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> sdpaBackward(
    const at::Tensor& gradOut, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const at::Tensor& attnBias, std::array<bool, 4> gradInputMask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& /*cumSeqQ*/, const at::Tensor& /*cumSeqK*/, c10::SymInt /*maxQ*/,
    c10::SymInt /*maxK*/, double dropoutP, bool isCausal, const at::Tensor& philoxSeed,
    const at::Tensor& philoxOffset, std::optional<double> scale) {
  std::optional<at::Tensor> mask;
  if (attnBias.defined()) mask = attnBias;
  FlashProblem p = sdpaProblem(query, key, value, mask, isCausal, scale);
  if (dropoutP > 0.0 && dropoutP < 1.0) {
    TORCH_CHECK(philoxSeed.numel() == 1 && philoxOffset.numel() == 1, kSdpa,
                ": the backward of a dropout call needs the philox_seed and philox_offset its forward returned\n",
                opsErr(ErrCode::PARAM));
    sdpaDropout(p, dropoutP, philoxSeed.item<int64_t>(), philoxOffset.item<int64_t>());
  } else {
    sdpaDropout(p, dropoutP, 0, 0);
  }
  p.biasGrad = gradInputMask[3] && attnBias.defined() && at::isFloatingType(attnBias.scalar_type());
  at::Tensor rowMax = logsumexp.unsqueeze(3);
  FlashGrads g = backward(p, out, gradOut, rowMax, at::ones_like(rowMax));
  at::Tensor dbias = g.dbias.defined() ? g.dbias.view(attnBias.sizes()).to(attnBias.scalar_type()) : at::Tensor();
  return {g.dq, g.dk, g.dv, dbias};
}

}  // namespace
}  // namespace torch_npu::native::flash

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_npu::native::flash::fusedSdpChoice);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_scaled_dot_product_fused_attention_overrideable", &torch_npu::native::flash::sdpaForward);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", &torch_npu::native::flash::sdpaBackward);
}
