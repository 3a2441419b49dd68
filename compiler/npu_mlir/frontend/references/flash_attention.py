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
added to the scaled scores (SDPA's float attn_mask); `diagonal` / `diagonal_low` the band: key c of
the block is excluded for query row r (of its head) when c - r > diagonal or r - c > diagonal_low
(NO_DIAGONAL: no such side; causal attention has only `diagonal`, torch_npu's pre/next_tockens band
both). Excluded scores are float32's minimum, so a row with no key left gets uniform weights as in
the fused reference (fusion_attention.py). `scale` arrives as a 0-d tensor (a kernel parameter).

Dropout (`dropout` true): the keep mask of each score is drawn in the step kernel from the Philox
counter the fused path's draws give it - element (b, n, i, j) of the [B, N, S1, S2] scores reads
counter offset + ((b * N + n) * S1 + i) * S2 + j under `drop_seed` (philox.py), kept when its
uniform is below keep_prob - so the block pair needs no S1 x S2 draws and the backward redraws the
forward's mask. `drop_offset` is the generator offset plus the block's first query row times S2
plus its first key (a kernel parameter: every block pair shares the kernel); `seq_q` / `seq_kv`
are S1 and S2. The softmax statistics are those of the undropped probabilities; the accumulator
and the gradients read the kept ones divided by keep_prob.
"""

from __future__ import annotations

from typing import Callable

import torch

from .fusion_attention import SOFTMAX_STAT_COLUMNS
from .philox import INV_2_24, MASK32, philox4x32

NO_DIAGONAL = 2**31 - 1  # int32 max, torch_npu's "no band" value of pre/next_tockens
LOWEST = torch.finfo(torch.float32).min


def _row_col(scores: torch.Tensor, rows_per_head: int, transposed: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(query row within its head, key column) of each score of a [G, R, C] ([G, C, R]) block, as
    broadcastable index tensors."""
    r_dim, c_dim = (-1, -2) if transposed else (-2, -1)
    rows = torch.arange(scores.shape[r_dim], device=scores.device)
    cols = torch.arange(scores.shape[c_dim], device=scores.device)
    if transposed:
        return (rows % rows_per_head).unsqueeze(0), cols.unsqueeze(1)
    return (rows % rows_per_head).unsqueeze(1), cols.unsqueeze(0)


def _exclude(scores: torch.Tensor, atten_mask: torch.Tensor | None, diagonal: int, diagonal_low: int,
             rows_per_head: int, transposed: bool) -> torch.Tensor:
    for side, limit in ((1, diagonal), (-1, diagonal_low)):
        if limit == NO_DIAGONAL:
            continue
        rows, cols = _row_col(scores, rows_per_head, transposed)
        band = (cols - rows) * side > limit
        atten_mask = band if atten_mask is None else atten_mask | band
    if atten_mask is None:
        return scores
    return torch.where(atten_mask, LOWEST, scores)


def _kept(scores: torch.Tensor, rows_per_head: int, transposed: bool, seed: torch.Tensor | int,
          offset: torch.Tensor | int, keep_prob: torch.Tensor | float, seq_q: int, seq_kv: int) -> torch.Tensor:
    """Dropout's keep mask of a [G, R, C] ([G, C, R]) block of scores (see the module docstring)."""
    heads, rows_dim, cols_dim = (scores.shape[0], -1, -2) if transposed else (scores.shape[0], -2, -1)
    row_shape, col_shape = ((1, 1, -1), (1, -1, 1)) if transposed else ((1, -1, 1), (1, 1, -1))
    rows = torch.arange(scores.shape[rows_dim], device=scores.device).view(row_shape)
    cols = torch.arange(scores.shape[cols_dim], device=scores.device).view(col_shape)
    group = scores.shape[rows_dim] // rows_per_head
    head = torch.arange(heads, device=scores.device).view(-1, 1, 1) * group + rows // rows_per_head
    counter = (head * seq_q + rows % rows_per_head) * seq_kv + cols + offset
    words = philox4x32(counter & MASK32, (counter >> 32) & MASK32, 0, 0, seed & MASK32, (seed >> 32) & MASK32)
    return (words[0] >> 8).to(torch.float32) * INV_2_24 < keep_prob


def flash_forward_step(query: torch.Tensor, key_t: torch.Tensor, value: torch.Tensor,
                       atten_mask: torch.Tensor | None, bias: torch.Tensor | None, row_max: torch.Tensor | None,
                       row_sum: torch.Tensor | None, acc: torch.Tensor | None, group: int, diagonal: int,
                       last: bool, scale: torch.Tensor | float, diagonal_low: int = NO_DIAGONAL,
                       dropout: bool = False, drop_seed: torch.Tensor | int = 0, drop_offset: torch.Tensor | int = 0,
                       keep_prob: torch.Tensor | float = 1.0, seq_q: int = 0, seq_kv: int = 0
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One key/value block of the online softmax: (row_max, row_sum, acc), or on the last block
    (out, softmax_max, softmax_sum)."""
    heads, rows, _ = query.shape
    scores = torch.bmm(query.to(torch.float32), key_t.to(torch.float32)) * scale
    if bias is not None:
        scores = scores + bias.to(torch.float32)
    scores = _exclude(scores, atten_mask, diagonal, diagonal_low, rows // group, transposed=False)
    block_max = scores.amax(-1, keepdim=True)
    new_max = block_max if row_max is None else torch.maximum(row_max, block_max)
    probs = torch.exp(scores - new_max)
    new_sum = probs.sum(-1, keepdim=True)
    if dropout:
        kept = _kept(scores, rows // group, False, drop_seed, drop_offset, keep_prob, seq_q, seq_kv)
        probs = torch.where(kept, probs / keep_prob, 0.0)
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
                        diagonal: int, scale: torch.Tensor | float, diagonal_low: int = NO_DIAGONAL,
                        dropout: bool = False, drop_seed: torch.Tensor | int = 0, drop_offset: torch.Tensor | int = 0,
                        keep_prob: torch.Tensor | float = 1.0, seq_q: int = 0, seq_kv: int = 0
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One (key/value block, query block) pair of the backward: (dK, dV, dQ^T) with this pair's
    terms added, all float32. key/value [G, C, D], key_t [G, D, C], query/grad_out [G, R, D],
    query_t/grad_out_t [G, D, R], row_max/row_sum/delta [G, 1, R]."""
    rows = query.shape[1]
    f32 = torch.float32
    scores_t = torch.bmm(key.to(f32), query_t.to(f32)) * scale  # [G, C, R]
    if bias is not None:
        scores_t = scores_t + bias.to(f32)
    scores_t = _exclude(scores_t, atten_mask, diagonal, diagonal_low, rows // group, transposed=True)
    probs_t = torch.exp(scores_t - row_max) / row_sum
    dprobs_t = torch.bmm(value.to(f32), grad_out_t.to(f32))
    if dropout:
        # delta = rowsum(dO * O) is still rowsum(P * dP) with dP the gradient through the kept mask.
        kept = _kept(scores_t, rows // group, True, drop_seed, drop_offset, keep_prob, seq_q, seq_kv)
        dv = torch.bmm(torch.where(kept, probs_t / keep_prob, 0.0), grad_out.to(f32))
        dprobs_t = torch.where(kept, dprobs_t / keep_prob, 0.0)
    else:
        dv = torch.bmm(probs_t, grad_out.to(f32))
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
                         scale: torch.Tensor | float, diagonal_low: int = NO_DIAGONAL, dropout: bool = False,
                         drop_seed: torch.Tensor | int = 0, drop_offset: torch.Tensor | int = 0,
                         keep_prob: torch.Tensor | float = 1.0, seq_q: int = 0, seq_kv: int = 0) -> torch.Tensor:
    """The gradient of one block pair's additive bias, transposed: dS^T [G, C, R] float32, where
    the bias enters as scores * scale + bias (so no factor of scale). Operands as in
    flash_backward_step."""
    rows = query_t.shape[2]
    f32 = torch.float32
    scores_t = torch.bmm(key.to(f32), query_t.to(f32)) * scale
    if bias is not None:
        scores_t = scores_t + bias.to(f32)
    scores_t = _exclude(scores_t, atten_mask, diagonal, diagonal_low, rows // group, transposed=True)
    probs_t = torch.exp(scores_t - row_max) / row_sum
    dprobs_t = torch.bmm(value.to(f32), grad_out_t.to(f32))
    if dropout:
        kept = _kept(scores_t, rows // group, True, drop_seed, drop_offset, keep_prob, seq_q, seq_kv)
        dprobs_t = torch.where(kept, dprobs_t / keep_prob, 0.0)
    return probs_t * (dprobs_t - delta)


REFERENCES: dict[str, Callable] = {
    "_npu_flash_attention_forward_step": flash_forward_step,
    "_npu_flash_attention_backward_prep": flash_backward_prep,
    "_npu_flash_attention_backward_step": flash_backward_step,
    "_npu_flash_attention_bias_grad_step": flash_bias_grad_step,
}
