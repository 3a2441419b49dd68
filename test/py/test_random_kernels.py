"""NPU random ops run as compiled Philox4x32-10 kernels: exact against a numpy Philox, no fallback, no recompiles."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torch_npu
from npu_mlir.frontend.references import philox

N = 4096  # one shape for most draws: each new shape is a compile
MASK = np.uint64(0xFFFFFFFF)


def numpy_philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 on uint64 arrays holding uint32 values (Salmon et al., SC'11)."""
    c = [np.asarray(x, dtype=np.uint64) for x in (c0, c1, c2, c3)]
    k = [np.uint64(k0), np.uint64(k1)]
    for r in range(10):
        if r:
            k = [(k[0] + np.uint64(0x9E3779B9)) & MASK, (k[1] + np.uint64(0xBB67AE85)) & MASK]
        p0 = c[0] * np.uint64(0xD2511F53)
        p1 = c[2] * np.uint64(0xCD9E8D57)
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & MASK, (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & MASK]
    return c


def numpy_words(n, seed, offset):
    counter = np.arange(n, dtype=np.uint64) + np.uint64(offset)
    zero = np.zeros(n, dtype=np.uint64)
    return numpy_philox(counter & MASK, counter >> np.uint64(32), zero, zero, seed & 0xFFFFFFFF, seed >> 32)


def npu_generator(seed, offset):
    g = torch.Generator("npu").manual_seed(seed)
    g.set_offset(offset)
    return g


def philox_stats():
    return {k: v for k, v in torch_npu.npu.eager_stats().items() if k.startswith("npu::_npu_philox")}


# Random123's known-answer vectors for Philox4x32-10.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter,key,expected", KAT)
def test_philox_known_answers(counter, key, expected):
    assert tuple(int(w) for w in numpy_philox(*counter, *key)) == expected
    words = philox.philox4x32(*(torch.tensor(c, dtype=torch.int64) for c in counter),
                              *(torch.tensor(k, dtype=torch.int64) for k in key))
    assert tuple(int(w) for w in words) == expected


# seed and offset above 2^32 exercise the high key and counter words.
@pytest.mark.parametrize("seed,offset", [(0, 0), (1234, 8), ((7 << 40) + 99, (3 << 32) + 4)])
def test_rand_matches_numpy_philox_exactly(seed, offset):
    w = numpy_words(N, seed, offset)
    expected = (w[0] >> np.uint64(8)).astype(np.float32) * np.float32(2.0**-24)
    got = torch.rand(N, device="npu", generator=npu_generator(seed, offset)).cpu().numpy()
    np.testing.assert_array_equal(got, expected)


def test_randint_and_randn_match_numpy_philox():
    seed, offset = 99, 40
    w = numpy_words(N, seed, offset)
    bits = ((w[0] & np.uint64(0x7FFFFFFF)) << np.uint64(32)) + w[1]
    expected = (bits % np.uint64(1000)).astype(np.int64) - 500
    got = torch.randint(-500, 500, (N,), device="npu", generator=npu_generator(seed, offset)).cpu().numpy()
    np.testing.assert_array_equal(got, expected)
    u1 = ((w[0] >> np.uint64(8)) + np.uint64(1)).astype(np.float64) * 2.0**-24
    u2 = (w[1] >> np.uint64(8)).astype(np.float64) * 2.0**-24
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    got = torch.randn(N, device="npu", generator=npu_generator(seed, offset)).cpu().numpy()
    np.testing.assert_allclose(got, z, rtol=2e-5, atol=2e-5)


def test_offsets_advance_by_numel_and_state_replays():
    torch.npu.manual_seed(5)
    g = torch.npu.default_generators[0]
    assert g.get_offset() == 0
    torch.rand(N - 3, device="npu")  # rounded up to a multiple of 4
    assert g.get_offset() == N
    state = torch.npu.get_rng_state()
    a = torch.rand(N, device="npu").cpu()
    b = torch.randn(N, device="npu").cpu()
    torch.npu.set_rng_state(state)
    assert torch.equal(torch.rand(N, device="npu").cpu(), a)
    assert torch.equal(torch.randn(N, device="npu").cpu(), b)
    # The draw after the state is the numpy stream at offset N.
    expected = (numpy_words(N, 5, N)[0] >> np.uint64(8)).astype(np.float32) * np.float32(2.0**-24)
    np.testing.assert_array_equal(a.numpy(), expected)


def test_generator_argument_leaves_the_default_generator_alone():
    torch.npu.manual_seed(8)
    default = torch.npu.default_generators[0]
    g = npu_generator(8, 0)
    a = torch.rand(N, device="npu", generator=g).cpu()
    assert default.get_offset() == 0 and g.get_offset() == N
    assert torch.equal(torch.rand(N, device="npu").cpu(), a)


def test_draws_on_a_side_stream_follow_the_generator_not_the_stream():
    torch.npu.manual_seed(17)
    main = torch.rand(N, device="npu").cpu()
    torch.npu.manual_seed(17)
    side = torch.npu.Stream()
    side.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(side):
        on_side = torch.rand(N, device="npu")
        after = torch.rand(N, device="npu")
    torch.npu.current_stream().wait_stream(side)
    assert torch.equal(on_side.cpu(), main)
    assert not torch.equal(after.cpu(), main)


def test_dropout_mask_output_and_grad_agree():
    torch.npu.manual_seed(3)
    x = torch.randn(N, device="npu")
    out, mask = torch.ops.aten.native_dropout(x, 0.3, True)
    out, mask, xc = out.cpu(), mask.cpu(), x.cpu()
    assert mask.dtype == torch.bool and abs(mask.float().mean().item() - 0.7) < 0.03
    torch.testing.assert_close(out, xc * mask / 0.7)
    leaf = x.clone().requires_grad_(True)
    torch.npu.manual_seed(3)
    torch.randn(N, device="npu")  # same counters as above: the same mask
    y = F.dropout(leaf, 0.3)
    y.backward(torch.ones_like(y))
    torch.testing.assert_close(leaf.grad.cpu(), mask / 0.7)
    torch.testing.assert_close(y.detach().cpu(), out)
    assert torch.equal(torch.nn.Dropout(0.3).eval()(x).cpu(), xc)


def test_distribution_statistics():
    torch.npu.manual_seed(0)
    u = torch.empty(N, device="npu").uniform_(-1.0, 3.0).cpu()
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(u.mean().item() - 1.0) < 0.1 and abs(u.var().item() - 16 / 12) < 0.1
    z = torch.empty(N, device="npu").normal_(2.0, 0.5).cpu()
    assert abs(z.mean().item() - 2.0) < 0.03 and abs(z.std().item() - 0.5) < 0.03
    assert abs(((z - 2.0) ** 3).mean().item()) < 0.02  # symmetric
    e = torch.empty(N, device="npu").exponential_(2.0).cpu()
    assert e.min() >= 0 and abs(e.mean().item() - 0.5) < 0.03
    gm = torch.empty(N, device="npu").geometric_(0.25).cpu()
    assert gm.min() >= 1 and torch.equal(gm, gm.round()) and abs(gm.mean().item() - 4.0) < 0.25
    c = torch.empty(N, device="npu").cauchy_(1.0, 2.0).cpu()
    assert abs(c.median().item() - 1.0) < 0.2
    ln = torch.empty(N, device="npu").log_normal_(0.0, 0.5).cpu()
    assert ln.min() > 0 and abs(ln.log().std().item() - 0.5) < 0.03
    p = torch.linspace(0, 1, N).npu()
    b = torch.bernoulli(p).cpu()
    assert set(b.unique().tolist()) <= {0.0, 1.0} and b[0] == 0 and b[-1] == 1
    assert abs(b.mean().item() - 0.5) < 0.03
    mean = torch.arange(N, dtype=torch.float32).view(64, 64).npu()
    nt = torch.normal(mean, torch.full((1, 64), 1e-3, device="npu")).cpu()
    torch.testing.assert_close(nt, mean.cpu(), atol=0.01, rtol=0)
    r = torch.empty(N, dtype=torch.int64, device="npu").random_().cpu()
    assert r.min() >= 0 and r.float().mean().item() > 2.0**61


def test_narrow_and_wide_dtypes():
    torch.npu.manual_seed(4)
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        u = torch.rand(N, device="npu", dtype=dtype).cpu()
        assert u.dtype == dtype and u.min() >= 0 and u.max() < 1 and abs(u.double().mean().item() - 0.5) < 0.03
    r = torch.randint(0, 7, (N,), device="npu", dtype=torch.int32).cpu()
    assert r.dtype == torch.int32 and set(r.unique().tolist()) == set(range(7))


def test_randperm_and_multinomial_follow_the_seed():
    torch.npu.manual_seed(6)
    p1 = torch.randperm(N, device="npu").cpu()
    w = torch.tensor([0.0, 1.0, 3.0, 0.0], device="npu")
    m1 = torch.multinomial(w, 2000, replacement=True).cpu()
    m2 = torch.multinomial(w, 2).cpu()
    torch.npu.manual_seed(6)
    assert torch.equal(torch.randperm(N, device="npu").cpu(), p1)
    assert torch.equal(torch.multinomial(w, 2000, replacement=True).cpu(), m1)
    assert torch.equal(torch.sort(p1).values, torch.arange(N))
    assert set(m1.unique().tolist()) == {1, 2} and abs((m1 == 2).float().mean().item() - 0.75) < 0.04
    assert sorted(m2.tolist()) == [1, 2]
    with pytest.raises(RuntimeError, match="ERR00003"):
        torch.multinomial(w, 5)


def test_all_compiled_and_a_new_seed_does_not_recompile():
    torch.npu.manual_seed(1)
    x = torch.ones(N, device="npu")
    torch.rand(N, device="npu")
    F.dropout(x, 0.2)
    torch_npu.npu.reset_eager_stats()
    for seed in (2, 3, 2**40 + 5):
        torch.npu.manual_seed(seed)
        torch.rand(N, device="npu")
        torch.rand(N, device="npu")  # a later offset
        F.dropout(x, 0.2 + seed % 2 * 0.1)  # a new p is a parameter too
    torch.npu.synchronize()
    stats = philox_stats()
    assert set(stats) == {"npu::_npu_philox_uniform", "npu::_npu_philox_dropout"}
    for row in stats.values():
        assert row["misses"] == 0 and row["fallback"] == 0 and row["compiled"] == row["hits"] > 0


def test_bad_arguments_carry_error_codes():
    x = torch.empty(8, device="npu")
    with pytest.raises(RuntimeError, match="ERR00003"):
        x.uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match="ERR00003"):
        x.exponential_(-1.0)
    with pytest.raises(RuntimeError, match="ERR00003"):
        x.random_(5, 5)


def test_out_variants_and_rrelu_draw_from_the_npu_generator():
    torch.npu.manual_seed(12)
    mean = torch.zeros(N, device="npu")
    expected = torch.normal(mean, 2.0).cpu()
    torch.npu.manual_seed(12)
    out = torch.empty(0, device="npu")
    torch.normal(mean, 2.0, out=out)
    assert torch.equal(out.cpu(), expected)
    x = torch.randn(N, device="npu").requires_grad_(True)
    torch_npu.npu.reset_eager_stats()
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    assert all(row["fallback"] == 0 for row in torch_npu.npu.eager_stats().values())
    xc, yc, slope = x.detach().cpu(), y.detach().cpu(), x.grad.cpu()
    negative = xc < 0
    assert torch.equal(yc[~negative], xc[~negative]) and torch.equal(slope[~negative], torch.ones_like(xc)[~negative])
    assert slope[negative].min() >= 0.1 and slope[negative].max() < 0.3 and slope[negative].unique().numel() > 100
    torch.testing.assert_close(yc[negative], xc[negative] * slope[negative])
    torch.testing.assert_close(F.rrelu(x, 0.1, 0.3).detach().cpu(), F.leaky_relu(xc, 0.2))


def test_multinomial_without_replacement_needs_enough_nonzero_categories():
    torch.multinomial(torch.tensor([0.0, 1.0, 0.0], device="npu"), 2)
    with pytest.raises(RuntimeError, match="ERR00003"):
        torch.npu.synchronize()  # found by the stream task: raised at the next synchronizing call


def test_philox_ops_called_directly_are_compiled():
    x = torch.empty(N, device="npu")
    torch_npu.npu.reset_eager_stats()
    direct = torch.ops.npu._npu_philox_uniform(x, 1234, 8, 0.0, 1.0).cpu()
    assert philox_stats()["npu::_npu_philox_uniform"]["fallback"] == 0
    assert torch.equal(direct, torch.rand(N, device="npu", generator=npu_generator(1234, 8)).cpu())
