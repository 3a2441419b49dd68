"""torch_npu.npu_fusion_attention and its gradient: flash attention (blocked online softmax, O(S) memory);
with pse, dropout or a pre/next_tockens band, one fused compiled kernel each way."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["npu_fusion_attention", "npu_fusion_attention_grad"]

NO_BAND = 2147483647


def npu_fusion_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int,
                         input_layout: str, pse: torch.Tensor | None = None,
                         padding_mask: torch.Tensor | None = None, atten_mask: torch.Tensor | None = None,
                         scale: float = 1.0, keep_prob: float = 1.0, pre_tockens: int = NO_BAND,
                         next_tockens: int = NO_BAND, inner_precise: int = 0, prefix: list[int] | None = None,
                         actual_seq_qlen: list[int] | None = None, actual_seq_kvlen: list[int] | None = None,
                         sparse_mode: int = 0, gen_mask_parallel: bool = True, sync: bool = False
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, int, int]:
    """Return ``(attention_out, softmax_max, softmax_sum, softmax_out, seed, offset, numels)``.

    Computes ``dropout(softmax(mask(scale * (query @ key^T + pse))), keep_prob) @ value`` per head, as
    torch_npu does. query/key/value: float32, float16 or bfloat16 NPU tensors in ``input_layout``
    (BSH, SBH, BSND or BNSD); ``head_num`` counts query heads, and key/value may have fewer heads
    dividing it (grouped-query attention). pse (default None): added to the scores before scaling,
    broadcastable [B or 1, N or 1, S1, S2]. atten_mask (default None): bool or uint8, True / 1 = masked
    out, [S1, S2] or broadcastable 4-d. scale: default 1.0. keep_prob (default 1.0): dropout draws come
    from the NPU generator at the returned ``(seed, offset)``, so the backward reproduces them.
    softmax_max / softmax_sum are float32 [B, N, S1, 8]; softmax_out is empty; numels = B*N*S1*S2.
    pre_tockens / next_tockens (sparse_mode 0, as torch_npu): with an atten_mask, key j is also masked
    for query i when j - i > next_tockens or i - j > pre_tockens; without one they are ignored.
    sparse_mode 2 / 3: causal, the diagonal aligned top-left / bottom-right (atten_mask, torch_npu's
    compressed triangle, is not read). Without pse and dropout the flash kernels run: blocks of 512
    query and key rows, causal blocks skipped, memory O(S) (no S1 x S2 matrix).
    Not supported (ERR01007): padding_mask, sparse_mode other than 0, 2, 3, prefix / actual_seq_*,
    input_layout TND, pse or dropout with sparse_mode 2 / 3.
    inner_precise (0 or 1), gen_mask_parallel and sync are accepted and ignored (float32 compute). Differentiable w.r.t. query, key, value and pse (backward: npu_fusion_attention_grad).
    Returns at once (the kernel is queued on the current stream).
    """
    return torch.ops.npu.npu_fusion_attention(query, key, value, head_num, input_layout, pse, padding_mask,
                                              atten_mask, scale, keep_prob, pre_tockens, next_tockens,
                                              inner_precise, prefix, actual_seq_qlen, actual_seq_kvlen,
                                              sparse_mode, gen_mask_parallel, sync)


def npu_fusion_attention_grad(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dy: torch.Tensor,
                              head_num: int, input_layout: str, *, pse: torch.Tensor | None = None,
                              padding_mask: torch.Tensor | None = None, atten_mask: torch.Tensor | None = None,
                              softmax_max: torch.Tensor | None = None, softmax_sum: torch.Tensor | None = None,
                              softmax_in: torch.Tensor | None = None, attention_in: torch.Tensor | None = None,
                              scale_value: float = 1.0, keep_prob: float = 1.0, pre_tockens: int = NO_BAND,
                              next_tockens: int = NO_BAND, inner_precise: int = 0, seed: int = 0, offset: int = 0,
                              numels: int = 0, prefix: list[int] | None = None,
                              actual_seq_qlen: list[int] | None = None, actual_seq_kvlen: list[int] | None = None,
                              sparse_mode: int = 0, gen_mask_parallel: bool = True, sync: bool = False
                              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return ``(dq, dk, dv, dpse)`` of npu_fusion_attention for the output gradient ``dy``.

    Pass the forward's arguments and its softmax_max, softmax_sum (required: the probabilities are
    recomputed from them) and, with keep_prob < 1, its seed, offset and numels. attention_in (the
    forward's attention_out) saves the flash backward a recompute of the forward; softmax_in is
    accepted and not needed. dpse is empty when pse is None. Returns at once.
    """
    return torch.ops.npu.npu_fusion_attention_grad(
        query, key, value, dy, head_num, input_layout, pse=pse, padding_mask=padding_mask, atten_mask=atten_mask,
        softmax_max=softmax_max, softmax_sum=softmax_sum, softmax_in=softmax_in, attention_in=attention_in,
        scale_value=scale_value, keep_prob=keep_prob, pre_tockens=pre_tockens, next_tockens=next_tockens,
        inner_precise=inner_precise, seed=seed, offset=offset, numels=numels, prefix=prefix,
        actual_seq_qlen=actual_seq_qlen, actual_seq_kvlen=actual_seq_kvlen, sparse_mode=sparse_mode,
        gen_mask_parallel=gen_mask_parallel, sync=sync)


def _batch_and_seq(t: torch.Tensor, layout: str) -> tuple[int, int]:
    return (t.shape[1], t.shape[0]) if layout == "SBH" else (t.shape[0], t.shape[2 if layout == "BNSD" else 1])


@torch.library.register_fake("npu::npu_fusion_attention")
def _fake_forward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int, input_layout: str,
                  *args: Any) -> tuple:
    """Shapes without a device (meta and fake tensors, torch.compile); seed/offset are those of no dropout."""
    batch, seq_q = _batch_and_seq(query, input_layout)
    seq_kv = _batch_and_seq(key, input_layout)[1]
    stats = query.new_empty((batch, head_num, seq_q, 8), dtype=torch.float32)
    return (query.new_empty(query.shape), stats, stats.new_empty(stats.shape), query.new_empty((0,)), 0, 0,
            batch * head_num * seq_q * seq_kv)


@torch.library.register_fake("npu::npu_fusion_attention_grad")
def _fake_backward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dy: torch.Tensor, head_num: int,
                   input_layout: str, *, pse: torch.Tensor | None = None, **kwargs: Any) -> tuple:
    dpse = pse.new_empty(pse.shape) if pse is not None else query.new_empty((0,))
    return query.new_empty(query.shape), key.new_empty(key.shape), value.new_empty(value.shape), dpse


# Positions of the forward's arguments (its schema order).
_ARGS = ("query", "key", "value", "head_num", "input_layout", "pse", "padding_mask", "atten_mask", "scale",
         "keep_prob", "pre_tockens", "next_tockens", "inner_precise", "prefix", "actual_seq_qlen",
         "actual_seq_kvlen", "sparse_mode", "gen_mask_parallel", "sync")


def _setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
    args = dict(zip(_ARGS, inputs))
    attention_out, softmax_max, softmax_sum, _, seed, offset, numels = output
    # attention_out spares the flash backward a recompute of the forward (rowsum(dO * O) per row).
    ctx.save_for_backward(args["query"], args["key"], args["value"], args["pse"], args["atten_mask"], softmax_max,
                          softmax_sum, attention_out)
    ctx.options = {name: args[name] for name in _ARGS[3:] if name not in ("pse", "atten_mask", "scale")}
    ctx.options.update(scale_value=args["scale"], seed=seed, offset=offset, numels=numels)
    ctx.pse_given = args["pse"] is not None


def _backward(ctx: Any, grad_out: torch.Tensor, *unused: Any) -> tuple:
    query, key, value, pse, atten_mask, softmax_max, softmax_sum, attention_out = ctx.saved_tensors
    options = dict(ctx.options)
    head_num, input_layout = options.pop("head_num"), options.pop("input_layout")
    dq, dk, dv, dpse = npu_fusion_attention_grad(query, key, value, grad_out.contiguous(), head_num, input_layout,
                                                 pse=pse, atten_mask=atten_mask, softmax_max=softmax_max,
                                                 softmax_sum=softmax_sum, attention_in=attention_out, **options)
    return (dq, dk, dv, None, None, dpse if ctx.pse_given else None) + (None,) * (len(_ARGS) - 6)


torch.library.register_autograd("npu::npu_fusion_attention", _backward, setup_context=_setup_context)
