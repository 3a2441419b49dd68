"""Reference decompositions of npu_fusion_attention and its gradient, traced into one kernel each.

Semantics follow torch_npu (pse_type 1): scores = scale * (q @ k^T + pse), positions where atten_mask
is True are excluded from the softmax, dropout keeps a probability where drop_mask is True and
divides by keep_prob, out = probs @ v. softmax_max / softmax_sum are the per-row max and sum of
exp(score - max), float32, broadcast to [B, N, S1, 8] as torch_npu stores them. The backward
recomputes the probabilities from them instead of saving the [S1, S2] matrix.

Query heads may outnumber key/value heads (GQA): query head h reads key/value head h // (N1 / N2).
Everything is computed in float32 and the results are cast back, as torch_npu's kernels accumulate.
Dropout keeps the positions where a uniform draw is below keep_prob. The draws are an input: the
caller makes them with the npu generator at a (seed, offset), so the kernel is deterministic and the
backward redraws the same ones. The REFERENCES entries are the compiled ops behind
torch_npu.npu_fusion_attention (see npu_mlir/frontend/references/__init__.py); scale and keep_prob arrive as
0-d tensors (kernel parameters). Imported by the compile worker (no torch_npu import).
"""

from __future__ import annotations

from typing import Callable

import torch

LAYOUTS = ("BSH", "SBH", "BSND", "BNSD")
SOFTMAX_STAT_COLUMNS = 8  # torch_npu keeps softmax_max/sum as [B, N, S1, 8]


def head_dim(query: torch.Tensor, head_num: int, layout: str) -> int:
    return query.shape[-1] // head_num if layout in ("BSH", "SBH") else query.shape[-1]


def to_bnsd(x: torch.Tensor, dim: int, layout: str) -> torch.Tensor:
    """[B, N, S, D] view of a tensor in `layout` whose head size is `dim`."""
    if layout == "BSH":
        b, s, h = x.shape
        return x.view(b, s, h // dim, dim).transpose(1, 2)
    if layout == "SBH":
        s, b, h = x.shape
        return x.view(s, b, h // dim, dim).permute(1, 2, 0, 3)
    if layout == "BSND":
        return x.transpose(1, 2)
    return x


def from_bnsd(x: torch.Tensor, layout: str) -> torch.Tensor:
    """The inverse of to_bnsd, contiguous."""
    b, n, s, d = x.shape
    if layout == "BSH":
        return x.transpose(1, 2).reshape(b, s, n * d)
    if layout == "SBH":
        return x.permute(2, 0, 1, 3).reshape(s, b, n * d)
    if layout == "BSND":
        return x.transpose(1, 2).contiguous()
    return x.contiguous()


def _repeat_heads(x: torch.Tensor, group: int) -> torch.Tensor:
    if group == 1:
        return x
    b, n, s, d = x.shape
    return x.unsqueeze(2).expand(b, n, group, s, d).reshape(b, n * group, s, d)


def _sum_heads(x: torch.Tensor, group: int) -> torch.Tensor:
    if group == 1:
        return x
    b, n, s, d = x.shape
    return x.view(b, n // group, group, s, d).sum(2)


def _outside_band(rows: int, cols: int, pre_tockens: int, next_tockens: int, device: torch.device) -> torch.Tensor:
    """True where key j is more than next_tockens after or pre_tockens before query i (sparse_mode 0)."""
    i = torch.arange(rows, device=device).unsqueeze(1)
    j = torch.arange(cols, device=device).unsqueeze(0)
    return ((j - i) > next_tockens) | ((i - j) > pre_tockens)


def _scores(q: torch.Tensor, k: torch.Tensor, pse: torch.Tensor | None, atten_mask: torch.Tensor | None,
            scale: float, band: tuple[int, int] | None = None) -> torch.Tensor:
    scores = torch.matmul(q, k.transpose(2, 3))
    if pse is not None:
        scores = scores + pse.to(torch.float32)
    scores = scores * scale
    if atten_mask is not None:
        if atten_mask.dtype != torch.bool:  # uint8 masks arrive as int8 (1 = masked out)
            atten_mask = atten_mask != 0
        if band is not None and (band[0] < q.shape[2] - 1 or band[1] < k.shape[2] - 1):
            atten_mask = atten_mask | _outside_band(q.shape[2], k.shape[2], *band, q.device)
        # -inf would turn a fully masked row into nan; the float32 minimum gives it uniform weights.
        scores = torch.where(atten_mask, torch.finfo(torch.float32).min, scores)
    return scores


def _inputs(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int,
            layout: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    d = head_dim(query, head_num, layout)
    q, k, v = (to_bnsd(t, d, layout).to(torch.float32) for t in (query, key, value))
    return q, k, v, q.shape[1] // k.shape[1]


def forward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int, input_layout: str,
            pse: torch.Tensor | None, atten_mask: torch.Tensor | None, drop_mask: torch.Tensor | None,
            scale: float, keep_prob: float, band: tuple[int, int] | None = None
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(attention_out in input_layout, softmax_max, softmax_sum); `band` = (pre_tockens, next_tockens)
    narrows atten_mask (torch_npu's sparse_mode 0 applies it only with a mask)."""
    q, k, v, group = _inputs(query, key, value, head_num, input_layout)
    k, v = _repeat_heads(k, group), _repeat_heads(v, group)
    scores = _scores(q, k, pse, atten_mask, scale, band)
    row_max = scores.amax(-1, keepdim=True)
    exp = torch.exp(scores - row_max)
    row_sum = exp.sum(-1, keepdim=True)
    probs = exp / row_sum
    if drop_mask is not None:
        probs = torch.where(drop_mask, probs / keep_prob, 0.0)
    out = from_bnsd(torch.matmul(probs, v), input_layout).to(query.dtype)
    stat_shape = (*row_max.shape[:3], SOFTMAX_STAT_COLUMNS)
    return out, row_max.expand(stat_shape).contiguous(), row_sum.expand(stat_shape).contiguous()


def backward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dy: torch.Tensor, head_num: int,
             input_layout: str, pse: torch.Tensor | None, atten_mask: torch.Tensor | None,
             drop_mask: torch.Tensor | None, softmax_max: torch.Tensor, softmax_sum: torch.Tensor,
             scale: float, keep_prob: float, band: tuple[int, int] | None = None) -> tuple[torch.Tensor, ...]:
    """(dq, dk, dv[, dpse]) in the inputs' layouts and dtypes; dpse only when pse is given."""
    q, k_small, v_small, group = _inputs(query, key, value, head_num, input_layout)
    k, v = _repeat_heads(k_small, group), _repeat_heads(v_small, group)
    grad_out = to_bnsd(dy, q.shape[-1], input_layout).to(torch.float32)
    scores = _scores(q, k, pse, atten_mask, scale, band)
    probs = torch.exp(scores - softmax_max[..., :1]) / softmax_sum[..., :1]
    kept = probs
    if drop_mask is not None:
        kept = torch.where(drop_mask, probs / keep_prob, 0.0)
    dv = torch.matmul(kept.transpose(2, 3), grad_out)
    dkept = torch.matmul(grad_out, v.transpose(2, 3))
    dprobs = torch.where(drop_mask, dkept / keep_prob, 0.0) if drop_mask is not None else dkept
    # Softmax backward: dS = P * (dP - rowsum(P * dP)); masked positions have P = 0.
    dscores = probs * (dprobs - (probs * dprobs).sum(-1, keepdim=True))
    dqk = dscores * scale
    dq = torch.matmul(dqk, k)
    dk = torch.matmul(dqk.transpose(2, 3), q)
    grads = [from_bnsd(dq, input_layout).to(query.dtype),
             from_bnsd(_sum_heads(dk, group), input_layout).to(key.dtype),
             from_bnsd(_sum_heads(dv, group), input_layout).to(value.dtype)]
    if pse is not None:
        dims = [i for i in range(4) if pse.shape[i] == 1 and dqk.shape[i] != 1]
        dpse = dqk.sum(dims, keepdim=True) if dims else dqk
        grads.append(dpse.to(pse.dtype))
    return tuple(grads)


def _keep(drop_uniform: torch.Tensor | None, keep_prob: torch.Tensor | float) -> torch.Tensor | None:
    return None if drop_uniform is None else drop_uniform < keep_prob


def npu_fusion_attention_forward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 pse: torch.Tensor | None, atten_mask: torch.Tensor | None,
                                 drop_uniform: torch.Tensor | None, head_num: int, input_layout: str,
                                 pre_tockens: int, next_tockens: int, scale: torch.Tensor | float,
                                 keep_prob: torch.Tensor | float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return forward(query, key, value, head_num, input_layout, pse, atten_mask, _keep(drop_uniform, keep_prob),
                   scale, keep_prob, (pre_tockens, next_tockens))


def npu_fusion_attention_backward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dy: torch.Tensor,
                                  pse: torch.Tensor | None, atten_mask: torch.Tensor | None,
                                  drop_uniform: torch.Tensor | None, softmax_max: torch.Tensor,
                                  softmax_sum: torch.Tensor, head_num: int, input_layout: str, pre_tockens: int,
                                  next_tockens: int, scale: torch.Tensor | float, keep_prob: torch.Tensor | float
                                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    grads = backward(query, key, value, dy, head_num, input_layout, pse, atten_mask,
                     _keep(drop_uniform, keep_prob), softmax_max, softmax_sum, scale, keep_prob,
                     (pre_tockens, next_tockens))
    if pse is None:
        # The op always returns four tensors; without pse the fourth is a 1-element placeholder.
        grads = (*grads, torch.zeros(1, dtype=query.dtype, device=query.device))
    return grads


REFERENCES: dict[str, Callable] = {
    "_npu_fusion_attention_forward": npu_fusion_attention_forward,
    "_npu_fusion_attention_backward": npu_fusion_attention_backward,
}
