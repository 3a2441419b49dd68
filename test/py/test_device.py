"""torch.npu device functions: selection, guards, properties, lazy init, fork safety, ERR codes."""

import os
import select

import pytest
import torch

import torch_npu


def test_availability_and_count_match_the_runtime_default():
    assert torch.npu.is_available()
    assert torch.npu.device_count() == 8
    assert torch.accelerator.is_available()
    assert torch.accelerator.device_count() == 8
    assert torch.accelerator.current_accelerator() == torch.device("npu")


def test_device_context_allocates_on_the_guarded_device_and_restores():
    torch.npu.set_device(0)
    with torch.npu.device(1):
        assert torch.npu.current_device() == 1
        t = torch.ones(3, device="npu")
        assert t.device == torch.device("npu:1")
        u = torch.empty(2, 2, device="npu")
        assert u.device.index == 1
    assert torch.npu.current_device() == 0
    assert torch.ones(1, device="npu").device == torch.device("npu:0")


def test_explicit_index_allocates_there_without_changing_current_device():
    torch.npu.set_device(0)
    t = torch.zeros(4, device="npu:1")
    assert t.device == torch.device("npu:1")
    assert torch.npu.current_device() == 0
    assert torch.equal(t.cpu(), torch.zeros(4))


def test_device_of_selects_the_tensor_device():
    t = torch.ones(1, device="npu:1")
    with torch.npu.device_of(t):
        assert torch.npu.current_device() == 1
    assert torch.npu.current_device() == 0


def test_set_device_and_tensor_npu_method():
    torch.npu.set_device(1)
    try:
        assert torch.randn(2).npu().device == torch.device("npu:1")
        assert torch.randn(2).npu(0).device == torch.device("npu:0")
    finally:
        torch.npu.set_device(0)


def test_device_properties_model_ascend_910b1():
    props = torch.npu.get_device_properties(0)
    assert props.name == "Ascend910B1" == torch.npu.get_device_name()
    assert props.total_memory == min(64 * 1024**3, torch.npu.host_mem_info()[1])  # bounded by the host
    assert (props.cube_core_num, props.vector_core_num) == (24, 48)
    assert props.L2_cache_size == 192 * 1024**2
    assert props.ub_size == 192 * 1024
    assert "Ascend910B1" in repr(props)
    assert torch.npu.get_device_capability() is None


def test_invalid_device_index_errors_carry_err00001():
    with pytest.raises(IndexError, match="ERR00001"):
        torch.npu.set_device(8)
    with pytest.raises(IndexError, match="ERR00001"):
        torch.ones(1, device="npu:8")
    with pytest.raises(IndexError, match="ERR00001"):
        torch.npu.get_device_properties(42)
    with pytest.raises(ValueError, match="ERR00001"):
        torch.npu.device("cpu")
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.set_device(1.5)
    assert torch.npu.current_device() == 0


def test_lazy_init_and_init():
    torch.npu.init()
    assert torch.npu.is_initialized()


def test_synchronize_waits_for_queued_work():
    x = torch.zeros(1000, device="npu")
    x.fill_(7.0)
    torch.npu.synchronize()
    torch.npu.synchronize("npu:0")
    assert torch.equal(x.cpu(), torch.full((1000,), 7.0))


def test_fork_after_init_raises_naming_spawn():
    torch.ones(1, device="npu")  # initialise
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: must not use the device
        os.close(read_fd)
        try:
            torch.zeros(1, device="npu")
            msg = "no error"
        except RuntimeError as e:
            msg = str(e)
        os.write(write_fd, msg.encode()[:4000])
        os._exit(0)
    os.close(write_fd)
    ready, _, _ = select.select([read_fd], [], [], 60)
    msg = os.read(read_fd, 4096).decode() if ready else "child hung"
    os.close(read_fd)
    if not ready:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    assert "spawn" in msg and "ERR00009" in msg, msg
    assert torch_npu.npu.is_initialized()  # the parent is unaffected
