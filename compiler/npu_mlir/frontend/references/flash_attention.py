"""Flash attention, one (query block, key/value block) step per kernel: online softmax forward and
the recomputing backward, never an S1 x S2 score matrix.

The host loop (python/torch_npu/csrc/aten/FlashAttention.cpp) walks the blocks and carries the
running state from one step's kernel to the next; each step is a compiled custom op whose reference
is here, so its matmuls go through the cube path and its softmax through the vector kernels.

Shapes (G = batch x key/value heads): query rows of one block are R = group x Bq, the `group`
query heads that read one key/value head stacked on top of each other (grouped-query attention
costs no copy of K or V); a key/value block has C columns. Every operand is 3-D so each matmul is
one batch_matmul (a 4-D matmul or a reshape around one does not reach the cube). Everything is
computed in float32; the state is float32.

  forward step   q [G, R, D], k_t [G, D, C], v [G, C, D]; state (row_max, row_sum [G, R, 1],
                 acc [G, R, D]) or None for the first block; the last step returns (out = acc /
                 row_sum in the query's dtype, softmax_max, softmax_sum broadcast to 8 columns as
                 torch_npu stores them).
  backward step  works on transposed scores sT = k q^T [G, C, R], so no step needs a transpose:
                 dV += P^T dO, dK += dS^T Q, dQ^T += K^T dS^T, dS^T = P^T * (dP^T - rowsum(dO * O)).
  bias gradient  only when the bias (SDPA's float attn_mask) requires grad: the pair's dS^T [G, C, R]
                 before the scale (the bias is added to the scaled scores), a separate step so the
                 common backward does not pay for it; the host reduces it over the bias's broadcast
                 dimensions block by block.

Masking: `atten_mask` (bool, True = excluded, torch_npu's convention) is the block's [1 or G, R, C]
slice (forward) or its [1 or G, C, R] transpose (backward); `bias` a float block of the same shape
added to the scaled scores (SDPA's float attn_mask); `diagonal` the causal band: key c of the block
is excluded for query row r (of its head) when c - r > diagonal (NO_DIAGONAL: no band). Excluded
scores are float32's minimum, so a row with no key left gets uniform weights as in the fused
reference (fusion_attention.py). `scale` arrives as a 0-d tensor (a kernel parameter).
"""

from __future__ import annotations

from typing import Callable

import torch

from .fusion_attention import SOFTMAX_STAT_COLUMNS

NO_DIAGONAL = 2**31 - 1  # int32 max, torch_npu's "no band" value of pre/next_tockens
LOWEST = torch.finfo(torch.float32).min


def _exclude(scores: torch.Tensor, atten_mask: torch.Tensor | None, diagonal: int, rows_per_head: int,
             transposed: bool) -> torch.Tensor:
    if diagonal != NO_DIAGONAL:
        r_dim, c_dim = (-1, -2) if transposed else (-2, -1)
        rows = torch.arange(scores.shape[r_dim], device=scores.device) % rows_per_head
        cols = torch.arange(scores.shape[c_dim], device=scores.device)
        if transposed:
            band = (cols.unsqueeze(1) - rows.unsqueeze(0)) > diagonal
        else:
            band = (cols.unsqueeze(0) - rows.unsqueeze(1)) > diagonal
        atten_mask = band if atten_mask is None else atten_mask | band
    if atten_mask is None:
        return scores
    return torch.where(atten_mask, LOWEST, scores)


def flash_forward_step(query: torch.Tensor, key_t: torch.Tensor, value: torch.Tensor,
                       atten_mask: torch.Tensor | None, bias: torch.Tensor | None, row_max: torch.Tensor | None,
                       row_sum: torch.Tensor | None, acc: torch.Tensor | None, group: int, diagonal: int,
                       last: bool, scale: torch.Tensor | float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One key/value block of the online softmax: (row_max, row_sum, acc), or on the last block
    (out, softmax_max, softmax_sum)."""
    heads, rows, _ = query.shape
    scores = torch.bmm(query.to(torch.float32), key_t.to(torch.float32)) * scale
    if bias is not None:
        scores = scores + bias.to(torch.float32)
    scores = _exclude(scores, atten_mask, diagonal, rows // group, transposed=False)
    block_max = scores.amax(-1, keepdim=True)
    new_max = block_max if row_max is None else torch.maximum(row_max, block_max)
    probs = torch.exp(scores - new_max)
    new_sum = probs.sum(-1, keepdim=True)
    new_acc = torch.bmm(probs, value.to(torch.float32))
    if row_max is not None:
        alpha = torch.exp(row_max - new_max)
        new_sum = row_sum * alpha + new_sum
        new_acc = acc * alpha + new_acc
    if not last:
        return new_max, new_sum, new_acc
    stat = (heads, rows, SOFTMAX_STAT_COLUMNS)
    return ((new_acc / new_sum).to(query.dtype), new_max.expand(stat).contiguous(),
            new_sum.expand(stat).contiguous())


def flash_backward_prep(grad_out: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """rowsum(dO * O) of a query block [G, R, D], as a [G, 1, R] row (the softmax
    backward's per-row term, so no step needs the whole score row)."""
    delta = (grad_out.to(torch.float32) * out.to(torch.float32)).sum(-1)
    return delta.unsqueeze(1)


def flash_backward_step(key: torch.Tensor, key_t: torch.Tensor, value: torch.Tensor, query: torch.Tensor,
                        query_t: torch.Tensor, grad_out: torch.Tensor, grad_out_t: torch.Tensor,
                        row_max: torch.Tensor, row_sum: torch.Tensor, delta: torch.Tensor,
                        atten_mask: torch.Tensor | None, bias: torch.Tensor | None, grad_key: torch.Tensor | None,
                        grad_value: torch.Tensor | None, grad_query_t: torch.Tensor | None, group: int,
                        diagonal: int, scale: torch.Tensor | float
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One (key/value block, query block) pair of the backward: (dK, dV, dQ^T) with this pair's
    terms added, all float32. key/value [G, C, D], key_t [G, D, C], query/grad_out [G, R, D],
    query_t/grad_out_t [G, D, R], row_max/row_sum/delta [G, 1, R]."""
    rows = query.shape[1]
    f32 = torch.float32
    scores_t = torch.bmm(key.to(f32), query_t.to(f32)) * scale  # [G, C, R]
    if bias is not None:
        scores_t = scores_t + bias.to(f32)
    scores_t = _exclude(scores_t, atten_mask, diagonal, rows // group, transposed=True)
    probs_t = torch.exp(scores_t - row_max) / row_sum
    dv = torch.bmm(probs_t, grad_out.to(f32))
    dprobs_t = torch.bmm(value.to(f32), grad_out_t.to(f32))
    dscores_t = probs_t * (dprobs_t - delta) * scale
    dk = torch.bmm(dscores_t, query.to(f32))
    dq_t = torch.bmm(key_t.to(f32), dscores_t)
    if grad_key is not None:
        dk, dv = grad_key + dk, grad_value + dv
    if grad_query_t is not None:
        dq_t = grad_query_t + dq_t
    return dk, dv, dq_t


def flash_bias_grad_step(key: torch.Tensor, value: torch.Tensor, query_t: torch.Tensor, grad_out_t: torch.Tensor,
                         row_max: torch.Tensor, row_sum: torch.Tensor, delta: torch.Tensor,
                         atten_mask: torch.Tensor | None, bias: torch.Tensor | None, group: int, diagonal: int,
                         scale: torch.Tensor | float) -> torch.Tensor:
    """The gradient of one block pair's additive bias, transposed: dS^T [G, C, R] float32, where
    the bias enters as scores * scale + bias (so no factor of scale). Operands as in
    flash_backward_step."""
    rows = query_t.shape[2]
    f32 = torch.float32
    scores_t = torch.bmm(key.to(f32), query_t.to(f32)) * scale
    if bias is not None:
        scores_t = scores_t + bias.to(f32)
    scores_t = _exclude(scores_t, atten_mask, diagonal, rows // group, transposed=True)
    probs_t = torch.exp(scores_t - row_max) / row_sum
    dprobs_t = torch.bmm(value.to(f32), grad_out_t.to(f32))
    return probs_t * (dprobs_t - delta)


REFERENCES: dict[str, Callable] = {
    "_npu_flash_attention_forward_step": flash_forward_step,
    "_npu_flash_attention_backward_prep": flash_backward_prep,
    "_npu_flash_attention_backward_step": flash_backward_step,
    "_npu_flash_attention_bias_grad_step": flash_bias_grad_step,
}
