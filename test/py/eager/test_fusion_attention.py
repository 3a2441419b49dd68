"""torch_npu.npu_fusion_attention: forward and gradients against plain-torch attention on the CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu
from conftest import assert_no_fallback
from npu_mlir.frontend.references import philox

B, N, S1, S2, D = 2, 2, 8, 16, 16
SCALE = 0.25


def to_layout(x: torch.Tensor, layout: str) -> torch.Tensor:
    """[B, N, S, D] -> the same values in `layout`, contiguous."""
    b, n, s, d = x.shape
    if layout == "BSH":
        return x.transpose(1, 2).reshape(b, s, n * d)
    if layout == "SBH":
        return x.permute(2, 0, 1, 3).reshape(s, b, n * d)
    if layout == "BSND":
        return x.transpose(1, 2).contiguous()
    return x.contiguous()


def from_layout(x: torch.Tensor, layout: str) -> torch.Tensor:
    """`layout` -> [B, N, S, D] (heads of size D)."""
    if layout == "BSH":
        return x.view(x.shape[0], x.shape[1], -1, D).transpose(1, 2)
    if layout == "SBH":
        return x.view(x.shape[0], x.shape[1], -1, D).permute(1, 2, 0, 3)
    if layout == "BSND":
        return x.transpose(1, 2)
    return x


def reference(q, k, v, layout, mask=None, pse=None, drop=None, keep_prob=1.0):
    """Attention in float32 on the CPU; `drop` is the keep mask of dropout."""
    qb, kb, vb = (from_layout(t.float(), layout) for t in (q, k, v))
    if drop is None:
        bias = None if pse is None else SCALE * pse.float()
        if mask is not None:
            masked = torch.zeros(mask.shape).masked_fill(mask.bool(), float("-inf"))
            bias = masked if bias is None else bias + masked
        out = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=bias, scale=SCALE,
                                             enable_gqa=kb.shape[1] != qb.shape[1])
    else:
        probs = torch.softmax(SCALE * qb @ kb.transpose(2, 3), -1)
        out = (probs * drop / keep_prob) @ vb
    return to_layout(out, layout)


def inputs(layout: str, dtype=torch.float32, kv_heads: int = N, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    q = to_layout(torch.randn(B, N, S1, D, generator=gen), layout).to(dtype)
    k = to_layout(torch.randn(B, kv_heads, S2, D, generator=gen), layout).to(dtype)
    v = to_layout(torch.randn(B, kv_heads, S2, D, generator=gen), layout).to(dtype)
    dy = to_layout(torch.randn(B, N, S1, D, generator=gen), layout).to(dtype)
    return q, k, v, dy


def run_npu(q, k, v, dy, layout, **kwargs):
    leaves = [t.npu().requires_grad_() for t in (q, k, v)]
    pse = kwargs.pop("pse", None)
    if pse is not None:
        pse = pse.npu().requires_grad_()
    result = torch_npu.npu_fusion_attention(*leaves, N, layout, pse=pse, scale=SCALE, **kwargs)
    result[0].backward(dy.npu())
    grads = [t.grad.cpu() for t in leaves] + ([pse.grad.cpu()] if pse is not None else [])
    return result, grads


def run_cpu(q, k, v, dy, layout, **kwargs):
    leaves = [t.float().requires_grad_() for t in (q, k, v)]
    pse = kwargs.pop("pse", None)
    if pse is not None:
        pse = pse.float().requires_grad_()
    out = reference(*leaves, layout, pse=pse, **kwargs)
    out.backward(dy.float())
    return out.detach(), [t.grad for t in leaves] + ([pse.grad] if pse is not None else [])


def assert_close_all(got: list, want: list, atol: float, rtol: float) -> None:
    for g, w in zip(got, want):
        torch.testing.assert_close(g.float(), w, atol=atol, rtol=rtol)


@pytest.mark.parametrize("layout", ["BSH", "SBH", "BSND", "BNSD"])
def test_layout_forward_and_gradients(layout, eager_stats):
    q, k, v, dy = inputs(layout)
    result, grads = run_npu(q, k, v, dy, layout)
    out, softmax_max, softmax_sum, softmax_out, seed, offset, numels = result
    want_out, want_grads = run_cpu(q, k, v, dy, layout)
    torch.testing.assert_close(out.cpu(), want_out, atol=1e-5, rtol=1e-5)
    assert_close_all(grads, want_grads, 1e-5, 1e-5)

    scores = SCALE * from_layout(q, layout) @ from_layout(k, layout).transpose(2, 3)
    row_max = scores.amax(-1, keepdim=True)
    assert softmax_max.shape == softmax_sum.shape == (B, N, S1, 8) and softmax_max.dtype == torch.float32
    torch.testing.assert_close(softmax_max.cpu(), row_max.expand(B, N, S1, 8))
    torch.testing.assert_close(softmax_sum.cpu(), torch.exp(scores - row_max).sum(-1, keepdim=True).expand(B, N, S1, 8))
    assert softmax_out.numel() == 0 and (seed, offset, numels) == (0, 0, B * N * S1 * S2)

    stats = eager_stats()  # no pse, no dropout: the flash kernels, one block pair here
    assert stats["npu::_npu_flash_attention_forward_step"]["compiled"] == 1
    assert stats["npu::_npu_flash_attention_backward_step"]["compiled"] == 1
    assert "npu::_npu_fusion_attention_forward" not in stats
    assert_no_fallback()


def test_bool_mask_and_pse_gradients(eager_stats):
    gen = torch.Generator().manual_seed(1)
    q, k, v, dy = inputs("BNSD")
    mask = torch.rand(B, 1, S1, S2, generator=gen) < 0.3
    mask[0, 0, 0] = True  # a fully masked row gets uniform weights, never nan
    pse = torch.randn(1, N, S1, S2, generator=gen)
    result, grads = run_npu(q, k, v, dy, "BNSD", atten_mask=mask.npu(), pse=pse)
    assert not result[0].cpu().isnan().any()
    keep_rows = ~mask.all(-1, keepdim=True)
    got_out = result[0].cpu() * keep_rows
    mask_for_reference = mask & keep_rows  # torch's SDPA gives nan on a fully masked row
    want_out, want_grads = run_cpu(q, k, v, dy, "BNSD", mask=mask_for_reference, pse=pse)
    torch.testing.assert_close(got_out, want_out * keep_rows, atol=1e-5, rtol=1e-5)
    # Rows of batch 0 (one of them fully masked) feed every gradient: compare batch 1 only, pse fully.
    assert_close_all([g[1] for g in grads[:3]], [w[1] for w in want_grads[:3]], 1e-5, 1e-5)
    assert grads[3].shape == pse.shape
    assert_no_fallback()


@pytest.mark.parametrize("pse_shape,kv_heads", [((1, N, S1, S2), N), ((B, 1, S1, S2), 1)])
def test_pse_runs_on_the_flash_kernels(pse_shape, kv_heads, eager_stats):
    # pse (shared by the batch, or by the heads with grouped-query attention) is the flash bias
    # scale * pse: no fused S1 x S2 kernel, and its gradient comes from the bias-gradient step.
    q, k, v, dy = inputs("BSND", kv_heads=kv_heads, seed=4)
    pse = torch.randn(pse_shape, generator=torch.Generator().manual_seed(5))
    result, grads = run_npu(q, k, v, dy, "BSND", pse=pse)
    want_out, want_grads = run_cpu(q, k, v, dy, "BSND", pse=pse)
    torch.testing.assert_close(result[0].cpu(), want_out, atol=1e-5, rtol=1e-5)
    assert grads[3].shape == pse.shape
    assert_close_all(grads, want_grads, 1e-4, 1e-4)
    stats = eager_stats()
    assert stats["npu::_npu_flash_attention_bias_grad_step"]["compiled"] >= 1
    assert "npu::_npu_fusion_attention_forward" not in stats and "npu::_npu_fusion_attention_backward" not in stats
    assert_no_fallback()


def test_uint8_two_dim_mask_matches_bool(eager_stats):
    q, k, v, _ = inputs("BNSD")
    mask = torch.triu(torch.ones(S1, S2, dtype=torch.uint8), diagonal=1)
    got = torch_npu.npu_fusion_attention(q.npu(), k.npu(), v.npu(), N, "BNSD", atten_mask=mask.npu(), scale=SCALE)[0]
    want = reference(q, k, v, "BNSD", mask=mask.bool())
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
    assert_no_fallback()


def test_tockens_band_narrows_the_mask():
    # sparse_mode 0: next_tockens=0 with an all-False mask is causal attention; without a mask the band is ignored.
    q, k, v, _ = inputs("BNSD")
    qn, kn, vn = q.npu(), k.npu(), v.npu()
    no_mask = torch.zeros(S1, S2, dtype=torch.bool)
    causal = torch_npu.npu_fusion_attention(qn, kn, vn, N, "BNSD", atten_mask=no_mask.npu(), scale=SCALE,
                                            pre_tockens=S2, next_tockens=0)[0]
    want = reference(q, k, v, "BNSD", mask=torch.ones(S1, S2, dtype=torch.bool).triu(1))
    torch.testing.assert_close(causal.cpu(), want, atol=1e-5, rtol=1e-5)
    ignored = torch_npu.npu_fusion_attention(qn, kn, vn, N, "BNSD", scale=SCALE, next_tockens=0)[0]
    torch.testing.assert_close(ignored.cpu(), reference(q, k, v, "BNSD"), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("sparse_mode", [2, 3])
def test_causal_sparse_modes(sparse_mode, eager_stats):
    # 2: the diagonal from the top-left corner (SDPA's is_causal); 3: from the bottom-right, i.e.
    # query i sees keys j <= i + S2 - S1. torch_npu's compressed triangle mask is not read.
    q, k, v, dy = inputs("BSND", kv_heads=1)
    shift = 0 if sparse_mode == 2 else S2 - S1
    mask = torch.ones(S1, S2, dtype=torch.bool).triu(1 + shift)
    result, grads = run_npu(q, k, v, dy, "BSND", sparse_mode=sparse_mode,
                            atten_mask=torch.ones(2048, 2048, dtype=torch.bool).triu(1).npu())
    want_out, want_grads = run_cpu(q, k, v, dy, "BSND", mask=mask)
    torch.testing.assert_close(result[0].cpu(), want_out, atol=1e-5, rtol=1e-5)
    assert_close_all(grads, want_grads, 1e-5, 1e-5)
    assert eager_stats()["npu::_npu_flash_attention_forward_step"]["compiled"] >= 1
    assert_no_fallback()


def test_grouped_query_attention(eager_stats):
    q, k, v, dy = inputs("BSND", kv_heads=1)
    result, grads = run_npu(q, k, v, dy, "BSND")
    want_out, want_grads = run_cpu(q, k, v, dy, "BSND")
    assert grads[1].shape == k.shape
    torch.testing.assert_close(result[0].cpu(), want_out, atol=1e-5, rtol=1e-5)
    assert_close_all(grads, want_grads, 1e-5, 1e-5)
    assert_no_fallback()


@pytest.mark.parametrize("dtype, tol", [(torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_half_precision(dtype, tol):
    q, k, v, dy = inputs("BNSD", dtype=dtype)
    result, grads = run_npu(q, k, v, dy, "BNSD")
    want_out, want_grads = run_cpu(q, k, v, dy, "BNSD")
    assert result[0].dtype == dtype and all(g.dtype == dtype for g in grads)
    torch.testing.assert_close(result[0].cpu().float(), want_out, atol=tol, rtol=tol)
    assert_close_all(grads, want_grads, 2 * tol, 2 * tol)


def _dropout_keep_mask(keep_prob: float) -> torch.Tensor:
    """The keep mask the next call draws: zero scores give probabilities 1/S2, and value = I reads them."""
    q = torch.zeros(B, N, S1, D).npu()
    k = torch.zeros(B, N, S2, D).npu()
    v = torch.eye(S2, D).expand(B, N, S2, D).contiguous().npu()
    out = torch_npu.npu_fusion_attention(q, k, v, N, "BNSD", scale=SCALE, keep_prob=keep_prob)[0].cpu()
    return out * S2 * keep_prob > 0.5


def test_dropout_is_reproducible_and_backward_reuses_the_mask(eager_stats):
    keep_prob = 0.5
    torch.manual_seed(7)
    keep = _dropout_keep_mask(keep_prob)
    assert abs(keep.float().mean().item() - keep_prob) < 0.07  # 512 draws: 3 standard deviations
    torch.manual_seed(7)
    assert torch.equal(_dropout_keep_mask(keep_prob), keep)
    assert not torch.equal(_dropout_keep_mask(keep_prob), keep)  # the generator moved on

    torch.manual_seed(7)
    q, k, v, dy = inputs("BNSD")
    result, grads = run_npu(q, k, v, dy, "BNSD", keep_prob=keep_prob)
    seed, offset, numels = result[4:]
    assert seed == torch.npu.initial_seed() and numels == B * N * S1 * S2
    want_out, want_grads = run_cpu(q, k, v, dy, "BNSD", drop=keep, keep_prob=keep_prob)
    torch.testing.assert_close(result[0].cpu(), want_out, atol=1e-5, rtol=1e-5)
    assert_close_all(grads, want_grads, 1e-5, 1e-5)
    assert_no_fallback()


def test_dropout_output_statistics():
    # Uniform attention over S2 values of 1: each output is (kept count / S2) / keep_prob, mean 1.
    keep_prob = 0.5
    q, k = torch.zeros(B, N, S1, D).npu(), torch.zeros(B, N, S2, D).npu()
    v = torch.ones(B, N, S2, D).npu()
    out = torch_npu.npu_fusion_attention(q, k, v, N, "BNSD", scale=SCALE, keep_prob=keep_prob)[0].cpu()
    per_row = out[..., 0]
    assert abs(per_row.mean().item() - 1.0) < 0.1
    assert torch.equal(out, per_row.unsqueeze(-1).expand_as(out))  # one mask per (row, key), shared by D
    assert ((per_row * S2 * keep_prob).round() - per_row * S2 * keep_prob).abs().max() < 1e-4


def _philox_keep(shape: tuple, seed: int, offset: int, keep_prob: float) -> torch.Tensor:
    """The keep mask torch_npu's fused kernel draws at (seed, offset): one Philox uniform per score."""
    return philox.uniform(torch.empty(shape), seed, offset, 0.0, 1.0) < keep_prob


@pytest.mark.parametrize("kwargs", [{"sparse_mode": 3}, {"atten_mask": "random", "pre_tockens": 3, "next_tockens": 5}])
def test_dropout_and_band_on_flash_blocks_match_the_philox_mask(kwargs, eager_stats):
    # 520 keys: two key blocks (512 + 8), so the step kernels' Philox counters and band diagonals
    # are offset per block pair; one key/value head read by both query heads (GQA).
    s2, keep_prob = 520, 0.8
    gen = torch.Generator().manual_seed(11)
    q, k, v, dy = (torch.randn(1, heads, s, D, generator=gen) for heads, s in ((N, S1), (1, s2), (1, s2), (N, S1)))
    kwargs = dict(kwargs)
    shift = s2 - S1
    if kwargs.get("atten_mask") == "random":
        mask = torch.rand(S1, s2, generator=gen) < 0.2
        kwargs["atten_mask"] = mask.npu()
        i, j = torch.arange(S1).unsqueeze(1), torch.arange(s2).unsqueeze(0)
        excluded = mask | (j - i > kwargs["next_tockens"]) | (i - j > kwargs["pre_tockens"])
    else:
        excluded = torch.ones(S1, s2, dtype=torch.bool).triu(1 + shift)
    result, grads = run_npu(q, k, v, dy, "BNSD", keep_prob=keep_prob, **kwargs)
    seed, offset, numels = result[4:]
    assert numels == N * S1 * s2
    keep = _philox_keep((1, N, S1, s2), seed, offset, keep_prob)

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    kx, vx = (t.expand(1, N, s2, D) for t in leaves[1:])
    scores = (SCALE * leaves[0] @ kx.transpose(2, 3)).masked_fill(excluded, float("-inf"))
    out = (torch.softmax(scores, -1) * keep / keep_prob) @ vx
    out.backward(dy)
    torch.testing.assert_close(result[0].cpu(), out.detach(), atol=1e-5, rtol=1e-5)
    assert_close_all(grads, [t.grad for t in leaves], 1e-5, 1e-5)
    stats = eager_stats()  # the flash kernels: no S1 x S2 draws or scores
    assert stats["npu::_npu_flash_attention_forward_step"]["compiled"] == 2
    assert "npu::_npu_philox_uniform" not in stats
    assert_no_fallback()


def test_direct_grad_call_matches_autograd():
    q, k, v, dy = inputs("BSH")
    qn, kn, vn, dyn = (t.npu() for t in (q, k, v, dy))
    out, smax, ssum, _, seed, offset, numels = torch_npu.npu_fusion_attention(qn, kn, vn, N, "BSH", scale=SCALE)
    dq, dk, dv, dpse = torch_npu.npu_fusion_attention_grad(qn, kn, vn, dyn, N, "BSH", softmax_max=smax,
                                                           softmax_sum=ssum, attention_in=out, scale_value=SCALE)
    _, want = run_cpu(q, k, v, dy, "BSH")
    assert_close_all([dq.cpu(), dk.cpu(), dv.cpu()], want, 1e-5, 1e-5)
    assert dpse.numel() == 0


@pytest.mark.parametrize("kwargs, code", [
    ({"input_layout": "TND"}, "ERR01007"),
    ({"input_layout": "BHS"}, "ERR01001"),
    ({"sparse_mode": 4}, "ERR01007"),
    ({"prefix": [4]}, "ERR01007"),
    ({"actual_seq_qlen": [8, 16]}, "ERR01007"),
    ({"inner_precise": 2}, "ERR01007"),
    ({"keep_prob": 1.5}, "ERR01003"),
    ({"head_num": 3}, "ERR01001"),
    ({"atten_mask": torch.zeros(S1, S1, dtype=torch.bool)}, "ERR01001"),
    ({"atten_mask": torch.zeros(S1, S2)}, "ERR01002"),
    ({"padding_mask": torch.zeros(S1, S2)}, "ERR01007"),
])
def test_bad_arguments_raise_with_error_codes(kwargs, code):
    q, k, v, _ = inputs("BNSD")
    args = {"query": q.npu(), "key": k.npu(), "value": v.npu(), "head_num": N, "input_layout": "BNSD"}
    args.update({name: value.npu() if isinstance(value, torch.Tensor) else value for name, value in kwargs.items()})
    with pytest.raises(RuntimeError, match=code):
        torch_npu.npu_fusion_attention(**args)


def test_bad_dtype_and_missing_softmax_stats():
    q, k, v, dy = inputs("BNSD")
    with pytest.raises(RuntimeError, match="ERR01002"):
        torch_npu.npu_fusion_attention(q.npu(), k.npu().double(), v.npu(), N, "BNSD")
    with pytest.raises(RuntimeError, match="(?s)softmax_max is missing.*ERR01001"):
        torch_npu.npu_fusion_attention_grad(q.npu(), k.npu(), v.npu(), dy.npu(), N, "BNSD")


def test_meta_tensors_give_torch_npu_shapes():
    q, k = torch.empty(B, S1, N * D, device="meta"), torch.empty(B, S2, D, device="meta")  # one kv head
    out, smax, ssum, softmax_out, seed, offset, numels = torch_npu.npu_fusion_attention(q, k, k, N, "BSH")
    assert out.shape == q.shape and smax.shape == ssum.shape == (B, N, S1, 8) and smax.dtype == torch.float32
    assert softmax_out.shape == (0,) and numels == B * N * S1 * S2
    dq, dk, dv, dpse = torch_npu.npu_fusion_attention_grad(q, k, k, q, N, "BSH", softmax_max=smax, softmax_sum=ssum)
    assert (dq.shape, dk.shape, dv.shape, dpse.shape) == (q.shape, k.shape, k.shape, (0,))
