"""F.scaled_dot_product_attention on npu tensors: the flash kernels (overrideable SDPA backend)
against CPU SDPA, forward and gradients; dropout against CPU attention with the flash kernels'
Philox keep mask; and flash memory at S=2048 staying O(S)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401
from conftest import assert_no_fallback
from npu_mlir.frontend.references import philox

FLASH_FORWARD = "npu::_npu_flash_attention_forward_step"
FLASH_BACKWARD = "npu::_npu_flash_attention_backward_step"
TOLERANCES = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}


def make(b, n, nkv, s1, s2, d, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(b, n, s1, d, generator=gen).to(dtype)
    k, v = (torch.randn(b, nkv, s2, d, generator=gen).to(dtype) for _ in range(2))
    return q, k, v, torch.randn(b, n, s1, d, generator=gen).to(dtype)


def compare(q, k, v, dy, **kwargs):
    """SDPA forward + backward on npu vs on the CPU in float32 from the same (rounded) inputs."""
    mask = kwargs.pop("attn_mask", None)
    cpu = [t.float().clone().requires_grad_() for t in (q, k, v)]
    want = F.scaled_dot_product_attention(*cpu, attn_mask=mask, **kwargs)
    want.backward(dy.float())
    npu = [t.detach().npu().requires_grad_() for t in (q, k, v)]
    got = F.scaled_dot_product_attention(*npu, attn_mask=None if mask is None else mask.npu(), **kwargs)
    got.backward(dy.npu())
    tol = TOLERANCES[q.dtype]
    assert got.dtype == q.dtype and all(t.grad.dtype == q.dtype for t in npu)
    torch.testing.assert_close(got.cpu().float(), want.detach(), atol=tol, rtol=tol)
    for g, w in zip(npu, cpu):
        torch.testing.assert_close(g.grad.cpu().float(), w.grad, atol=2 * tol, rtol=2 * tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_sdpa_forward_and_gradients_match_cpu(dtype, eager_stats):
    compare(*make(2, 2, 2, 8, 16, 16, dtype))
    stats = eager_stats()
    assert stats[FLASH_FORWARD]["compiled"] >= 1 and stats[FLASH_BACKWARD]["compiled"] >= 1
    assert_no_fallback()


def test_sdpa_causal_grouped_query_attention(eager_stats):
    compare(*make(1, 4, 2, 16, 16, 16), is_causal=True, enable_gqa=True, scale=0.3)
    assert eager_stats()[FLASH_FORWARD]["compiled"] >= 1
    assert_no_fallback()


def test_sdpa_bool_and_float_masks():
    q, k, v, dy = make(2, 2, 2, 8, 16, 16)
    keep = torch.rand(2, 1, 8, 16, generator=torch.Generator().manual_seed(3)) > 0.3
    keep[..., 0] = True  # no fully masked row (CPU SDPA gives nan there)
    compare(q, k, v, dy, attn_mask=keep)
    compare(q, k, v, dy, attn_mask=torch.randn(8, 16))  # additive, broadcast over batch and heads
    assert_no_fallback()


FLASH_BIAS_GRAD = "npu::_npu_flash_attention_bias_grad_step"


@pytest.mark.parametrize("b,n,s1,s2,mask_shape", [
    (2, 2, 8, 16, (8, 16)),            # broadcast over batch and heads: summed over both
    (2, 2, 8, 16, (2, 1, 8, 16)),      # per batch, shared by the heads
    (1, 2, 520, 24, (1, 2, 520, 24)),  # two query blocks (512 + 8 rows), each its own slice
])
def test_sdpa_float_mask_requiring_grad_gets_its_gradient(b, n, s1, s2, mask_shape, eager_stats):
    q, k, v, dy = make(b, n, n, s1, s2, 8, seed=5)
    mask = torch.randn(mask_shape, generator=torch.Generator().manual_seed(6))
    leaves = [t.clone().requires_grad_() for t in (q, k, v, mask)]
    F.scaled_dot_product_attention(*leaves[:3], attn_mask=leaves[3]).backward(dy)
    npu = [t.npu().requires_grad_() for t in (q, k, v, mask)]
    got = F.scaled_dot_product_attention(*npu[:3], attn_mask=npu[3])
    got.backward(dy.npu())
    for g, w in zip(npu, leaves):
        assert g.grad is not None and g.grad.shape == w.shape
        torch.testing.assert_close(g.grad.cpu(), w.grad, atol=1e-4, rtol=1e-4)
    assert eager_stats()[FLASH_BIAS_GRAD]["compiled"] >= 1
    assert_no_fallback()


def test_sdpa_mask_without_grad_skips_the_bias_gradient(eager_stats):
    q, k, v, dy = make(1, 2, 2, 8, 16, 16)
    compare(q, k, v, dy, attn_mask=torch.randn(8, 16))
    assert FLASH_BIAS_GRAD not in eager_stats()


def _philox_keep(shape: tuple, seed: int, offset: int, keep_prob: float) -> torch.Tensor:
    """The keep mask of the flash kernels at (seed, offset): one Philox uniform per score (as npu_fusion_attention)."""
    return philox.uniform(torch.empty(shape), seed, offset, 0.0, 1.0) < keep_prob


@pytest.mark.parametrize("causal_gqa", [False, True])
def test_sdpa_dropout_runs_the_flash_kernels_with_the_philox_mask(causal_gqa, eager_stats):
    b, n, s1, s2, d, p = 2, 4, 8, 16, 16, 0.3
    q, k, v, dy = make(b, n, 2 if causal_gqa else n, s1, s2, d, seed=8)
    kwargs = {"is_causal": True, "enable_gqa": True} if causal_gqa else {}
    torch.npu.manual_seed(5)
    direct = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(
        q.npu(), k.npu(), v.npu(), None, p, causal_gqa, False)
    seed, offset = direct[6].item(), direct[7].item()
    assert seed == 5
    keep = _philox_keep((b, n, s1, s2), seed, offset, 1 - p)
    assert 0.5 < keep.float().mean().item() < 0.9

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    kx, vx = (t.repeat_interleave(n // t.shape[1], 1) for t in leaves[1:])
    scores = leaves[0] @ kx.transpose(2, 3) / d ** 0.5
    if causal_gqa:
        scores = scores.masked_fill(torch.ones(s1, s2, dtype=torch.bool).triu(1), float("-inf"))
    want = (torch.softmax(scores, -1) * keep / (1 - p)) @ vx
    want.backward(dy)

    torch.npu.manual_seed(5)  # the same seed draws the same mask again
    npu = [t.npu().requires_grad_() for t in (q, k, v)]
    got = F.scaled_dot_product_attention(*npu, dropout_p=p, **kwargs)
    got.backward(dy.npu())
    assert torch.equal(got.detach().cpu(), direct[0].cpu())
    torch.testing.assert_close(got.detach().cpu(), want.detach(), atol=1e-5, rtol=1e-5)
    for g, w in zip(npu, leaves):
        torch.testing.assert_close(g.grad.cpu(), w.grad, atol=1e-5, rtol=1e-5)
    again = F.scaled_dot_product_attention(*npu, dropout_p=p, **kwargs)
    assert not torch.equal(again.detach().cpu(), got.detach().cpu())  # the generator moved on
    everything = F.scaled_dot_product_attention(*npu, dropout_p=1.0, **kwargs)
    assert torch.equal(everything.detach().cpu(), torch.zeros(b, n, s1, d))
    stats = eager_stats()
    assert stats[FLASH_FORWARD]["compiled"] >= 1 and stats[FLASH_BACKWARD]["compiled"] >= 1
    assert "npu::_npu_philox_uniform" not in stats  # no S1 x S2 draws
    assert_no_fallback()


def test_long_causal_sequence_memory_is_linear():
    # S = 2000: query and key blocks of 512 rows (the last ones 464), block pairs above the causal
    # diagonal skipped, the diagonal ones banded. One float32 S x S score matrix is 16 MB here; the
    # flash kernels hold one block pair's scores at a time, forward and backward.
    s, d = 2000, 16
    q, k, v, dy = (t.npu() for t in make(1, 1, 1, s, s, d))
    leaves = [t.requires_grad_() for t in (q, k, v)]
    torch.npu.synchronize()
    torch.npu.reset_peak_memory_stats()
    base = torch.npu.memory_allocated()
    out = F.scaled_dot_product_attention(*leaves, is_causal=True)
    out.backward(dy)
    torch.npu.synchronize()
    peak = torch.npu.max_memory_allocated() - base
    score_matrix = s * s * 4
    assert peak < score_matrix / 2, f"peak {peak} bytes, one S x S float32 matrix is {score_matrix}"
    cpu = [t.detach().cpu().requires_grad_() for t in (q, k, v)]
    want = F.scaled_dot_product_attention(*cpu, is_causal=True)
    want.backward(dy.cpu())
    torch.testing.assert_close(out.detach().cpu(), want.detach(), atol=1e-5, rtol=1e-5)
    for g, w in zip(leaves, cpu):
        torch.testing.assert_close(g.grad.cpu(), w.grad, atol=1e-4, rtol=1e-4)
    assert_no_fallback()
