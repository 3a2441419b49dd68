"""Native NPU kernels: allocation, views that alias, copies in every direction, fill, resize_, set_, item."""

import time

import pytest
import torch

from torch_npu import _C


def test_empty_and_empty_strided_allocate_on_npu():
    t = torch.empty(3, 4, device="npu")
    assert t.device.type == "npu" and t.shape == (3, 4) and t.is_contiguous()
    s = torch.empty_strided((2, 3), (1, 2), device="npu")
    assert s.stride() == (1, 2)
    cl = torch.empty(2, 3, 4, 5, device="npu", memory_format=torch.channels_last)
    assert cl.is_contiguous(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="ERR00001"):
        torch.empty(2, device="npu", pin_memory=True)


@pytest.mark.parametrize(
    "make_view",
    [
        lambda t: t.view(4, 6),
        lambda t: t[1:3, ::2],
        lambda t: t.t(),
        lambda t: t.as_strided((3, 3), (8, 1), 1),
        lambda t: t.reshape(24),
        lambda t: t.unfold(1, 2, 2),
        lambda t: t.select(0, 2),
        lambda t: t.diagonal(),
    ],
)
def test_writes_through_views_are_visible_in_the_base(make_view):
    base = torch.zeros(6, 4, device="npu")
    view = make_view(base)
    assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    view.fill_(2.5)
    expected = torch.zeros(6, 4)
    make_view(expected).fill_(2.5)
    assert torch.equal(base.cpu(), expected)


def test_view_as_real_and_complex_alias():
    c = torch.zeros(4, dtype=torch.complex64, device="npu")
    r = torch.view_as_real(c)
    r[:, 1].fill_(1.0)
    assert torch.equal(c.cpu(), torch.full((4,), 1j, dtype=torch.complex64))
    back = torch.view_as_complex(r)
    assert back.untyped_storage().data_ptr() == c.untyped_storage().data_ptr()


def test_in_place_fallback_op_on_a_view_writes_the_base():
    base = torch.ones(4, 4, device="npu")
    base[1].mul_(3.0)
    base[:, 2].add_(1.0)
    expected = torch.ones(4, 4)
    expected[1].mul_(3.0)
    expected[:, 2].add_(1.0)
    assert torch.equal(base.cpu(), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool])
def test_host_device_round_trip(dtype):
    src = (torch.randn(17, 33) * 10).to(dtype)
    assert torch.equal(src.npu().cpu(), src)


def test_copies_convert_dtype_in_every_direction():
    src = torch.randn(8, 5)
    h2d = torch.empty(8, 5, dtype=torch.float64, device="npu").copy_(src)
    assert torch.equal(h2d.cpu(), src.double())
    d2d = torch.empty(8, 5, dtype=torch.float16, device="npu").copy_(h2d)
    assert torch.equal(d2d.cpu(), src.half())
    d2h = torch.empty(8, 5, dtype=torch.int32).copy_(h2d * 0 + 3)
    assert torch.equal(d2h, torch.full((8, 5), 3, dtype=torch.int32))
    assert torch.equal(src.npu().to(torch.bfloat16).cpu(), src.to(torch.bfloat16))


def test_non_contiguous_copies_in_every_direction():
    src = torch.randn(6, 10)
    n = src.npu()
    assert torch.equal(n.t().cpu(), src.t())  # D2H from a transposed view
    dst = torch.zeros(10, 6, device="npu")
    dst.t().copy_(src)  # H2D into a transposed view
    assert torch.equal(dst.cpu(), src.t())
    d2d = torch.zeros(3, 10, device="npu")
    d2d.copy_(n[::2])  # D2D from a strided view
    assert torch.equal(d2d.cpu(), src[::2])
    assert torch.equal(n.t().contiguous().cpu(), src.t().contiguous())


def test_cross_device_copy():
    src = torch.randn(100)
    a = src.to("npu:0")
    b = a.to("npu:1")
    assert b.device == torch.device("npu:1")
    assert torch.equal(b.cpu(), src)
    assert torch.equal(b.to("npu:0", dtype=torch.float64).cpu(), src.double())


def test_non_blocking_d2h_into_pinned_memory_returns_before_the_copy_runs():
    src = torch.arange(1 << 18, dtype=torch.float32, device="npu")
    pinned = torch.empty(1 << 18, pin_memory=True)
    assert pinned.is_pinned()
    torch.npu.synchronize()
    _C._npu_sleep_on_stream(250.0)
    t0 = time.perf_counter()
    pinned.copy_(src, non_blocking=True)
    returned = time.perf_counter() - t0
    torch.npu.current_stream().synchronize()
    assert returned < 0.1
    assert torch.equal(pinned, torch.arange(1 << 18, dtype=torch.float32))


def test_blocking_d2h_waits_for_queued_work():
    src = torch.ones(16, device="npu")
    torch.npu.synchronize()
    _C._npu_sleep_on_stream(200.0)
    t0 = time.perf_counter()
    out = src.cpu()
    assert time.perf_counter() - t0 >= 0.19
    assert torch.equal(out, torch.ones(16))


def test_non_blocking_h2d_from_pinned_memory():
    host = torch.randn(1 << 16).pin_memory()
    dst = torch.empty(1 << 16, device="npu")
    torch.npu.synchronize()
    _C._npu_sleep_on_stream(200.0)
    t0 = time.perf_counter()
    dst.copy_(host, non_blocking=True)
    assert time.perf_counter() - t0 < 0.1
    assert torch.equal(dst.cpu(), host)
    assert torch.equal(host.npu(non_blocking=True).cpu(), host)


def test_fill_and_zero_run_on_the_device():
    t = torch.empty(5, 7, device="npu")
    t.fill_(1.25)
    assert torch.equal(t.cpu(), torch.full((5, 7), 1.25))
    t[:, 1:3].zero_()
    expected = torch.full((5, 7), 1.25)
    expected[:, 1:3] = 0
    assert torch.equal(t.cpu(), expected)
    t.fill_(torch.tensor(4.0, device="npu"))
    assert torch.equal(torch.full((2, 2), -3, dtype=torch.int8, device="npu").cpu(), torch.full((2, 2), -3, dtype=torch.int8))
    assert torch.equal(torch.zeros(3, device="npu").cpu(), torch.zeros(3))
    assert torch.equal(torch.ones(3, dtype=torch.int64, device="npu").cpu(), torch.ones(3, dtype=torch.int64))
    assert t.cpu().eq(4.0).all()


def test_item_reads_the_value():
    assert torch.tensor(3.5, device="npu").item() == 3.5
    assert torch.tensor([7], dtype=torch.int64, device="npu").item() == 7
    assert torch.tensor(True, device="npu").item() is True


def test_resize_keeps_data_and_grows_storage():
    t = torch.arange(6, dtype=torch.float32).npu()
    t.resize_(2, 3)
    assert t.shape == (2, 3)
    assert torch.equal(t.cpu(), torch.arange(6, dtype=torch.float32).view(2, 3))
    t.resize_(4, 5)
    assert t.shape == (4, 5) and t.untyped_storage().nbytes() >= 80
    assert torch.equal(t.view(-1)[:6].cpu(), torch.arange(6, dtype=torch.float32))


def test_untyped_storage_resize_keeps_bytes():
    t = torch.arange(4, dtype=torch.float32).npu()
    storage = t.untyped_storage()
    storage.resize_(64)
    assert storage.nbytes() == 64
    grown = torch.empty(0, device="npu").set_(storage, 0, (4,), (1,))
    assert torch.equal(grown.cpu(), torch.arange(4, dtype=torch.float32))


def test_set_overloads_share_storage():
    src = torch.arange(12, dtype=torch.float32).npu()
    a = torch.empty(0, device="npu").set_(src)
    assert a.untyped_storage().data_ptr() == src.untyped_storage().data_ptr() and a.shape == (12,)
    b = torch.empty(0, device="npu").set_(src.untyped_storage(), 2, (2, 3), (3, 1))
    assert torch.equal(b.cpu(), torch.arange(2, 8, dtype=torch.float32).view(2, 3))
    c = torch.empty(0, device="npu").set_(src.untyped_storage())
    assert c.numel() == 12
    d = torch.ones(3, device="npu").set_()
    assert d.numel() == 0 and d.device.type == "npu" and d.untyped_storage().device.type == "npu"
    with pytest.raises(RuntimeError, match="ERR00001"):
        torch.empty(0, device="npu").set_(torch.zeros(3).untyped_storage())


def test_clone_and_contiguous_preserve_values():
    src = torch.randn(4, 6)
    n = src.npu()
    assert torch.equal(n.clone().cpu(), src)
    assert torch.equal(n[:, ::2].contiguous().cpu(), src[:, ::2].contiguous())
