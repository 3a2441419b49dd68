// Flash attention on the simulated NPU: the host loop over (query block, key/value block) pairs,
// each pair one compiled step kernel (npu::_npu_flash_attention_*_step; references in
// compiler/npu_mlir/frontend/references/flash_attention.py). The running softmax state and the
// gradients are carried from step to step, so no S1 x S2 matrix is ever allocated: memory is
// O(S * D) plus one block pair's scores (dropout's keep mask too: drawn per block pair). Used by npu_fusion_attention (FusionAttentionOps.cpp) and
// by F.scaled_dot_product_attention on npu (the overrideable SDPA backend, FlashAttention.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

namespace torch_npu::native::flash {

// "No causal band" for FlashProblem::causalShift (int32 max, torch_npu's no-band value).
constexpr int64_t kNoCausal = std::numeric_limits<int32_t>::max();

// One attention problem in BNSD views (any strides): query [B, N, S1, D], key/value [B, Nkv, S2, D]
// with N a multiple of Nkv (grouped-query attention).
struct FlashProblem {
  at::Tensor query, key, value;
  std::optional<at::Tensor> mask;  // bool, True = excluded, broadcastable to [B, N, S1, S2] (4-D)
  std::optional<at::Tensor> bias;  // floating, added to the scaled scores, broadcastable (4-D)
  // Causal band: key j is excluded for query i when j > i + causalShift (0: top-left aligned,
  // S2 - S1: bottom-right); kNoCausal: none.
  int64_t causalShift = kNoCausal;
  // The band's other side (torch_npu's pre_tockens): key j is excluded for query i when
  // i - j > bandBelow; kNoCausal: none. Every block pair is visited when it is set (see band()).
  int64_t bandBelow = kNoCausal;
  // Dropout: each score kept where its Philox uniform (seed, offset + its [B, N, S1, S2] linear index:
  // the draws torch_npu's fused kernel makes) is below keepProb; drawn in the step kernels.
  bool dropout = false;
  int64_t dropSeed = 0, dropOffset = 0;
  double keepProb = 1.0;
  double scale = 1.0;
  bool biasGrad = false;  // backward: also the bias's gradient (SDPA's float attn_mask requiring grad)
};

struct FlashForward {
  at::Tensor out;                     // [B, N, S1, D] contiguous, the query's dtype
  at::Tensor softmaxMax, softmaxSum;  // [B, N, S1, 8] float32 (torch_npu's layout)
};

struct FlashGrads {
  at::Tensor dq, dk, dv;  // BNSD contiguous, the inputs' dtypes
  at::Tensor dbias;       // the bias's (4-D, broadcast) shape, float32; undefined unless biasGrad
};

FlashForward forward(const FlashProblem& p);

// Dropout's generator state: (seed, offset) of the default generator of npu `device`, advanced past
// `draws` Philox draws (one per attention score, B * N * S1 * S2); the kernels take the uint64 seed
// and offset bit-cast to int64.
std::pair<int64_t, int64_t> reserveDropout(c10::DeviceIndex device, int64_t draws);

// out: the forward's output (recomputed when undefined); softmaxMax / softmaxSum: [B, N, S1, k]
// float32, column 0 read (k = 8 from npu_fusion_attention, 1 from SDPA's logsumexp with sum 1).
FlashGrads backward(const FlashProblem& p, const at::Tensor& out, const at::Tensor& dout,
                    const at::Tensor& softmaxMax, const at::Tensor& softmaxSum);

}  // namespace torch_npu::native::flash
