"""NPU storage formats: physical layouts checked byte by byte against an index-formula reference,
round trips, compiled ops on internal-format inputs, copies, printing, saving, the fallback, views
and bad input. Layouts: DESIGN.md section 4."""
import copy
import io
import warnings

import numpy as np
import pytest
import torch

import torch_npu
from torch_npu import Format

ND, NCHW, NC1HWC0, FRACTAL_Z, NZ = 2, 0, 3, 4, 29


@pytest.fixture(autouse=True)
def internal_formats_allowed():
    before = torch.npu.config.allow_internal_format
    torch.npu.config.allow_internal_format = True
    yield
    torch.npu.config.allow_internal_format = before


def physical(t: torch.Tensor) -> torch.Tensor:
    """The raw storage of an npu tensor, in its physical shape, on the CPU."""
    raw = t.untyped_storage().cpu()
    return torch.empty(0, dtype=t.dtype).set_(raw).view(torch.ops.npu.get_npu_storage_sizes(t))


def nz_reference(x: np.ndarray) -> np.ndarray:
    *batch, m, n = x.shape
    out = np.zeros((*batch, -(-n // 16), -(-m // 16), 16, 16), dtype=x.dtype)
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    out[..., j // 16, i // 16, i % 16, j % 16] = x
    return out


def nc1hwc0_reference(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    out = np.zeros((n, -(-c // 16), h, w, 16), dtype=x.dtype)
    for ch in range(c):
        out[:, ch // 16, :, :, ch % 16] = x[:, ch]
    return out


def fractal_z_reference(x: np.ndarray) -> np.ndarray:
    co, ci, kh, kw = x.shape
    out = np.zeros((-(-ci // 16) * kh * kw, -(-co // 16), 16, 16), dtype=x.dtype)
    spatial = np.arange(kh)[:, None] * kw + np.arange(kw)[None, :]
    for o in range(co):
        for i in range(ci):
            out[(i // 16) * kh * kw + spatial, o // 16, o % 16, i % 16] = x[o, i]
    return out


REFERENCES = {NZ: nz_reference, NC1HWC0: nc1hwc0_reference, FRACTAL_Z: fractal_z_reference}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("fmt", [NZ, NC1HWC0, FRACTAL_Z])
def test_physical_layout_matches_the_index_formula(fmt: int, dtype: torch.dtype) -> None:
    x = torch.randn(18, 20, 3, 5).to(dtype)  # every blocked dim unaligned: padding everywhere
    t = torch_npu.npu_format_cast(x.npu(), fmt)
    assert torch_npu.get_npu_format(t) == fmt
    assert t.shape == x.shape and t.is_contiguous()
    expected = REFERENCES[fmt](x.numpy())
    assert list(torch.ops.npu.get_npu_storage_sizes(t)) == list(expected.shape)
    assert t.untyped_storage().nbytes() == expected.size * x.element_size()
    np.testing.assert_array_equal(physical(t).numpy(), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_round_trip_through_every_format(dtype: torch.dtype) -> None:
    x = torch.randn(17, 33, 2, 3).to(dtype)
    t = x.npu()
    for fmt in [NZ, NC1HWC0, FRACTAL_Z, NZ, ND, FRACTAL_Z, NC1HWC0, NCHW]:
        t = torch_npu.npu_format_cast(t, fmt)
        assert torch_npu.get_npu_format(t) == fmt
        assert torch.equal(t.cpu(), x), fmt


@pytest.mark.parametrize("dtype", [torch.int8, torch.bool])
def test_one_byte_types_use_a_32_wide_nz_fractal(dtype: torch.dtype) -> None:
    x = (torch.randn(5, 40) * 9).to(dtype)
    t = torch_npu.npu_format_cast(x.npu(), NZ)
    assert torch.ops.npu.get_npu_storage_sizes(t) == [2, 1, 16, 32]
    reference = np.zeros((2, 1, 16, 32), dtype=x.numpy().dtype)
    i, j = np.meshgrid(np.arange(5), np.arange(40), indexing="ij")
    reference[j // 32, i // 16, i % 16, j % 32] = x.numpy()
    np.testing.assert_array_equal(physical(t).numpy(), reference)
    assert torch.equal(t.cpu(), x)


def test_bf16_nz_cast_runs_compiled() -> None:
    x = torch.randn(5, 40).to(torch.bfloat16)
    torch.npu.reset_eager_stats()
    t = torch_npu.npu_format_cast(x.npu(), NZ)
    stats = _calls("npu::_npu_format_to_physical")
    assert stats["compiled"] == 1 and stats["fallback"] == 0
    # numpy has no bfloat16: compare the bit patterns.
    np.testing.assert_array_equal(physical(t).view(torch.int16).numpy(), nz_reference(x.view(torch.int16).numpy()))
    torch.npu.reset_eager_stats()
    assert torch.equal(t.cpu(), x)
    stats = _calls("npu::_npu_format_to_base")
    assert stats["compiled"] == 1 and stats["fallback"] == 0


def test_nz_of_a_batched_matrix_and_its_storage_sizes() -> None:
    x = torch.randn(2, 5, 37)
    t = torch_npu.npu_format_cast(x.npu(), Format.FRACTAL_NZ)
    assert torch.ops.npu.get_npu_storage_sizes(t) == [2, 3, 1, 16, 16]
    np.testing.assert_array_equal(physical(t).numpy(), nz_reference(x.numpy()))
    assert torch.equal(t.cpu(), x)


def test_get_npu_format_defaults_to_the_base_format() -> None:
    assert torch_npu.get_npu_format(torch.ones(3).npu()) == ND
    assert torch_npu.get_npu_format(torch.ones(2, 3).npu()) == ND
    assert torch_npu.get_npu_format(torch.ones(1, 2, 3, 4).npu()) == NCHW
    assert torch_npu.get_npu_format(torch.ones(1, 2, 3, 4, 5).npu()) == 30
    x = torch.ones(1, 2, 3, 4).npu()
    nd = torch_npu.npu_format_cast(x, ND)
    assert torch_npu.get_npu_format(nd) == ND and torch.equal(nd.cpu(), x.cpu())
    assert torch_npu.npu_format_cast(nd, ND) is nd  # already in that format: the tensor itself


def test_npu_format_cast_inplace_by_number_and_like_a_tensor() -> None:
    x = torch.randn(20, 17)
    t = x.npu()
    assert torch_npu.npu_format_cast_(t, NZ) is t
    assert torch_npu.get_npu_format(t) == NZ and torch.equal(t.cpu(), x)
    u = torch.randn(20, 17)
    v = u.npu()
    torch_npu.npu_format_cast_(v, t)
    assert torch_npu.get_npu_format(v) == NZ and torch.equal(v.cpu(), u)
    torch_npu.npu_format_cast_(v, ND)
    assert torch_npu.get_npu_format(v) == ND and torch.equal(v.cpu(), u)
    assert torch_npu.get_npu_format(v.npu_format_cast(NZ)) == NZ  # the Tensor methods torch_npu adds
    assert v.npu_format_cast_(NZ) is v and torch_npu.get_npu_format(v) == NZ and torch.equal(v.cpu(), u)


def _calls(op: str) -> dict:
    return torch.npu.eager_stats().get(op, {"misses": 0, "compiled": 0, "fallback": 0})


@pytest.mark.parametrize("op,fn", [
    ("aten::add.Tensor", lambda a, b: a + b),
    ("aten::mm", lambda a, b: a @ b.t().contiguous()),
    ("aten::relu", lambda a, b: torch.relu(a)),
])
def test_compiled_op_on_an_nz_input_is_a_different_kernel(op: str, fn) -> None:
    a, b = torch.randn(20, 24), torch.randn(20, 24)
    expected = fn(a, b)
    nd = fn(a.npu(), b.npu())
    torch.npu.reset_eager_stats()
    nz = fn(torch_npu.npu_format_cast(a.npu(), NZ), b.npu())
    stats = _calls(op)
    assert stats["fallback"] == 0 and stats["compiled"] == 1
    assert stats["misses"] == 1  # the key holds the format: the ND kernel is not reused
    assert torch_npu.get_npu_format(nz) == ND  # results of ordinary ops are base format
    torch.testing.assert_close(nz.cpu(), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(nd.cpu(), expected, rtol=1e-5, atol=1e-5)
    torch.npu.reset_eager_stats()
    fn(torch_npu.npu_format_cast(a.npu(), NZ), b.npu())
    assert _calls(op)["misses"] == 0  # and the NZ kernel is cached


def test_inplace_op_on_an_nz_tensor_keeps_its_format() -> None:
    a, b = torch.randn(20, 24), torch.randn(20, 24)
    t = torch_npu.npu_format_cast(a.npu(), NZ)
    torch.npu.reset_eager_stats()
    t.add_(b.npu())
    t.relu_()
    assert _calls("aten::add_.Tensor")["fallback"] == 0 and _calls("aten::relu_")["fallback"] == 0
    assert torch_npu.get_npu_format(t) == NZ
    expected = torch.relu(a + b)
    torch.testing.assert_close(t.cpu(), expected)
    np.testing.assert_allclose(physical(t).numpy(), nz_reference(expected.numpy()), rtol=1e-6, atol=1e-6)
    out = torch_npu.npu_format_cast(torch.zeros(20, 24).npu(), NZ)
    torch.add(a.npu(), b.npu(), out=out)
    assert torch_npu.get_npu_format(out) == NZ
    torch.testing.assert_close(out.cpu(), a + b)


def test_host_and_device_copies_go_through_the_base_format() -> None:
    x, y = torch.randn(5, 37), torch.randn(5, 37)
    t = torch_npu.npu_format_cast(torch.zeros(5, 37).npu(), NZ)
    t.copy_(x)  # H2D into NZ
    np.testing.assert_array_equal(physical(t).numpy(), nz_reference(x.numpy()))
    assert torch.equal(t.to("cpu"), x)
    host = torch.empty(5, 37, dtype=torch.float64)
    host.copy_(t)  # D2H with a dtype change
    assert torch.equal(host, x.double())
    t.copy_(y.npu())  # ND -> NZ on the device
    assert torch.equal(t.cpu(), y)
    nd = torch.empty(5, 37).npu()
    nd.copy_(t)  # NZ -> ND on the device
    assert torch.equal(nd.cpu(), y)
    w = torch.randn(2, 18, 3, 3)
    a = torch_npu.npu_format_cast(w.npu(), NC1HWC0)
    b = torch_npu.npu_format_cast(torch.zeros(2, 18, 3, 3).npu(), FRACTAL_Z)
    b.copy_(a)  # between two internal formats
    np.testing.assert_array_equal(physical(b).numpy(), fractal_z_reference(w.numpy()))
    assert t.clone().cpu().equal(y) and t.float().cpu().equal(y) and t.half().cpu().equal(y.half())
    # The same 185 terms summed in another order: within float32's worst-case rounding bound.
    bound = y.numel() * torch.finfo(torch.float32).eps * y.abs().sum().item()
    torch.testing.assert_close(t.sum().cpu(), y.sum(), atol=bound, rtol=0)
    assert t[0, 0].item() == y[0, 0].item()


def test_fill_and_zero_keep_the_padding_zero() -> None:
    t = torch_npu.npu_format_cast(torch.randn(5, 37).npu(), NZ)
    t.fill_(2.5)
    np.testing.assert_array_equal(physical(t).numpy(), nz_reference(np.full((5, 37), 2.5, np.float32)))
    t.zero_()
    assert not physical(t).any()


def test_print_save_and_deepcopy_show_the_logical_values() -> None:
    x = torch.arange(5 * 37, dtype=torch.float32).reshape(5, 37) / 7
    t = torch_npu.npu_format_cast(x.npu(), NZ)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # printing takes views of the tensor (see the views test)
        assert str(t).replace(", device='npu:0'", "") == str(x)
    buffer = io.BytesIO()
    torch.save({"w": t}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)["w"]
    assert loaded.device.type == "npu" and torch_npu.get_npu_format(loaded) == ND
    assert torch.equal(loaded.cpu(), x)
    buffer.seek(0)
    assert torch.equal(torch.load(buffer, map_location="cpu")["w"], x)
    clone = copy.deepcopy(t)
    assert torch_npu.get_npu_format(clone) == NZ and torch.equal(clone.cpu(), x)


def test_fallback_ops_read_and_write_the_logical_values() -> None:
    x = torch.rand(20, 24)
    t = torch_npu.npu_format_cast(x.npu(), NZ)
    torch.npu.reset_eager_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback warns once per op
        hermite = torch.special.hermite_polynomial_h(t, 3)  # no npu kernel yet: the CPU fallback
        t.tril_()
    fallbacks = {op: row["fallback"] for op, row in torch.npu.eager_stats().items() if row["fallback"]}
    # tril_ writes through tril.out(out=self)
    assert fallbacks == {"aten::special_hermite_polynomial_h.out": 1, "aten::tril.out": 1}
    torch.testing.assert_close(hermite.cpu(), torch.special.hermite_polynomial_h(x, 3))
    assert torch_npu.get_npu_format(t) == NZ
    assert torch.equal(t.cpu(), torch.tril(x))
    np.testing.assert_array_equal(physical(t).numpy(), nz_reference(torch.tril(x).numpy()))


def test_views_of_an_nz_tensor_are_views_of_its_logical_values() -> None:
    x = torch.randn(20, 24)
    t = torch_npu.npu_format_cast(x.npu(), NZ)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # once per process: views do not write through (as torch_npu)
        assert torch.equal(t.t().cpu(), x.t())
        assert torch.equal(t[3:7].cpu(), x[3:7])
        assert torch.equal(t[:, 5].cpu(), x[:, 5])
        assert torch.equal(t.view(-1).cpu(), x.view(-1))
        assert torch.equal(t.reshape(4, 120).cpu(), x.reshape(4, 120))
        assert torch.equal(t.unsqueeze(0).cpu(), x.unsqueeze(0))
        assert torch.equal(t.detach().cpu(), x)  # an alias keeps the layout and the format
        assert torch_npu.get_npu_format(t.detach()) == NZ
        view = t[0]
        view.fill_(0)  # a view is of a base-format copy: the original is unchanged
    assert torch.equal(t.cpu(), x)


def test_a_partial_view_of_an_internal_storage_is_refused() -> None:
    t = torch_npu.npu_format_cast(torch.randn(20, 24).npu(), NZ)
    partial = torch.empty(0, device="npu").set_(t.untyped_storage(), 16, (10,), (1,))
    with pytest.raises(RuntimeError, match=r"partial view[\s\S]*npu_format_cast[\s\S]*ERR00007"):
        partial.cpu()
    with pytest.raises(RuntimeError, match=r"partial view[\s\S]*ERR00007"):
        partial + 1


def test_empty_with_format() -> None:
    t = torch_npu.empty_with_format((3, 5, 17), dtype=torch.float16, device="npu", acl_format=NZ)
    assert t.dtype == torch.float16 and t.device.type == "npu" and t.shape == (3, 5, 17)
    assert torch_npu.get_npu_format(t) == NZ
    assert torch.ops.npu.get_npu_storage_sizes(t) == [3, 2, 1, 16, 16]
    assert not physical(t).any()  # padding (and everything) starts zero
    nd = torch_npu.empty_with_format([2, 3])
    assert torch_npu.get_npu_format(nd) == ND and nd.device.type == "npu" and nd.dtype == torch.float32
    with pytest.raises(RuntimeError, match="ERR00001"):
        torch_npu.empty_with_format([2, 3], device="cpu", acl_format=NZ)


def test_allow_internal_format_false_keeps_base_formats() -> None:
    torch.npu.config.allow_internal_format = False
    x = torch.randn(4, 20, 3, 3)
    t = torch_npu.npu_format_cast(x.npu(), NC1HWC0)  # warns once per process
    assert torch_npu.get_npu_format(t) == NCHW and torch.equal(t.cpu(), x)
    assert torch_npu.get_npu_format(torch_npu.empty_with_format([4, 4], acl_format=NZ)) == ND
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.config.allow_internal_format = 1


def test_format_cast_is_differentiable() -> None:
    x = torch.randn(20, 24)
    leaf = x.npu().requires_grad_()
    (torch_npu.npu_format_cast(leaf, NZ) * 3).sum().backward()
    assert torch.equal(leaf.grad.cpu(), torch.full((20, 24), 3.0))


@pytest.mark.parametrize("fmt,sizes,match", [
    (99, (4, 4), r"unknown acl_format 99[\s\S]*ERR00001"),
    (-1, (4, 4), r"unknown acl_format[\s\S]*ERR00001"),
    (1, (1, 2, 3, 4), r"NHWC\) is not supported[\s\S]*ERR00007"),
    (NC1HWC0, (4, 4), r"needs a 4-d tensor[\s\S]*ERR00001"),
    (FRACTAL_Z, (2, 3, 4), r"needs a 4-d tensor[\s\S]*ERR00001"),
    (NZ, (7,), r"at least 2 dims[\s\S]*ERR00001"),
])
def test_bad_formats_are_refused(fmt: int, sizes: tuple, match: str) -> None:
    with pytest.raises(RuntimeError, match=match):
        torch_npu.npu_format_cast(torch.ones(sizes).npu(), fmt)


def test_misuse_says_what_to_do() -> None:
    with pytest.raises(RuntimeError, match=r"npu tensor[\s\S]*ERR00001"):
        torch_npu.npu_format_cast(torch.ones(4, 4), NZ)
    t = torch_npu.npu_format_cast(torch.ones(4, 4).npu(), NZ)
    with pytest.raises(RuntimeError, match=r"resize_[\s\S]*npu_format_cast_[\s\S]*ERR00007"):
        t.resize_(8, 8)
