"""F.scaled_dot_product_attention and F.multi_head_attention_forward on npu against the CPU.

Without dropout they must give the CPU's numbers, forward and gradients. With dropout the npu draws
its mask from its Philox generator (like CUDA, not the CPU's mt19937 stream), so the check there is
that the npu result is the CPU's attention with the mask the npu drew.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

TOL = dict(atol=1e-5, rtol=1e-5)
B, H, L, S, E = 2, 3, 5, 6, 8


def _leaves(*tensors: torch.Tensor, device: str) -> list[torch.Tensor]:
    return [t.detach().to(device).requires_grad_() for t in tensors]


def _forward_backward(fn, inputs: list[torch.Tensor], grad: torch.Tensor) -> list[torch.Tensor]:
    out = fn(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    grads = torch.autograd.grad(out, inputs, grad.to(out.device))
    return [t.detach().cpu() for t in (out, *grads)]


@pytest.mark.parametrize("case", ["plain", "float_mask", "bool_mask", "causal", "scale"])
def test_sdpa_matches_cpu(case: str, eager_stats) -> None:
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, H, n, E, generator=gen) for n in (L, S, S))
    masks = {"float_mask": torch.randn(L, S, generator=gen),
             "bool_mask": torch.rand(B, 1, L, S, generator=gen) > 0.3}
    mask = masks.get(case)
    kwargs = dict(is_causal=case == "causal", scale=0.3 if case == "scale" else None, dropout_p=0.0)

    def sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.to(q.device),
                                              **kwargs)

    grad = torch.randn(B, H, L, E, generator=gen)
    cpu = _forward_backward(sdpa, _leaves(q, k, v, device="cpu"), grad)
    npu = _forward_backward(sdpa, _leaves(q, k, v, device="npu"), grad)
    for n, c in zip(npu, cpu):
        torch.testing.assert_close(n, c, **TOL)
    assert_no_fallback()


def test_sdpa_dropout_is_cpu_attention_with_the_npu_mask(eager_stats) -> None:
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(B, H, n, E, generator=gen) for n in (L, S, S))
    grad = torch.randn(B, H, L, E, generator=gen)
    p = 0.5
    torch.manual_seed(42)
    npu = _forward_backward(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True),
                            _leaves(q, k, v, device="npu"), grad)
    # The same seed draws the same mask over the attention weights' shape.
    torch.manual_seed(42)
    keep = F.dropout(torch.ones(B, H, L, S, device="npu"), p, training=True).cpu()
    causal = torch.ones(L, S, dtype=torch.bool).tril()

    def reference(q, k, v):
        scores = (q @ k.transpose(-1, -2) / E ** 0.5).masked_fill(~causal, float("-inf"))
        return (scores.softmax(-1) * keep) @ v

    cpu = _forward_backward(reference, _leaves(q, k, v, device="cpu"), grad)
    for n, c in zip(npu, cpu):
        torch.testing.assert_close(n, c, **TOL)
    assert_no_fallback()


@pytest.mark.parametrize("need_weights", [True, False])
def test_multi_head_attention_matches_cpu(need_weights: bool, eager_stats) -> None:
    gen = torch.Generator().manual_seed(2)
    embed, heads, tgt, src, batch = 8, 2, 4, 6, 3
    query = torch.randn(tgt, batch, embed, generator=gen)
    key = torch.randn(src, batch, embed, generator=gen)
    value = torch.randn(src, batch, embed, generator=gen)
    in_w = torch.randn(3 * embed, embed, generator=gen) / embed ** 0.5
    in_b = torch.randn(3 * embed, generator=gen)
    out_w = torch.randn(embed, embed, generator=gen) / embed ** 0.5
    out_b = torch.randn(embed, generator=gen)
    attn_mask = torch.randn(tgt, src, generator=gen)
    padding = torch.zeros(batch, src)
    padding[0, -2:] = float("-inf")  # float like attn_mask: mixed mask types are deprecated

    def mha(query, key, value, in_w, in_b, out_w, out_b):
        device = query.device
        return F.multi_head_attention_forward(
            query, key, value, embed, heads, in_w, in_b, None, None, False, 0.0, out_w, out_b,
            training=False, key_padding_mask=padding.to(device), attn_mask=attn_mask.to(device),
            need_weights=need_weights)

    inputs = (query, key, value, in_w, in_b, out_w, out_b)
    grad = torch.randn(tgt, batch, embed, generator=gen)
    cpu = _forward_backward(mha, _leaves(*inputs, device="cpu"), grad)
    npu = _forward_backward(mha, _leaves(*inputs, device="npu"), grad)
    for n, c in zip(npu, cpu):
        torch.testing.assert_close(n, c, **TOL)
    assert_no_fallback()
