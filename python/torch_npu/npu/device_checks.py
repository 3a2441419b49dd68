"""Device health and topology queries: peer access, memory UCE checks, the stress self-test."""

import torch

from torch_npu.npu.devices import _DeviceLike, _get_device_index, device_count, synchronize
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["can_device_access_peer", "check_uce_in_memory", "stress_detect"]


def _checked_index(device: _DeviceLike, name: str) -> int:
    index = _get_device_index(device, optional=True)
    if not 0 <= index < device_count():
        raise ValueError(f"{name} {index} is out of range: {device_count()} NPU(s) visible\n" + pta_error(ErrCode.VALUE))
    return index


def can_device_access_peer(device_id: _DeviceLike, peer_device_id: _DeviceLike) -> bool:
    """Whether ``device_id`` can read ``peer_device_id``'s memory directly.

    Every simulated device's memory is this process's host memory, so any two distinct
    visible devices can (a device is not its own peer, as in CUDA).
    """
    return _checked_index(device_id, "device_id") != _checked_index(peer_device_id, "peer_device_id")


def check_uce_in_memory(device_id: _DeviceLike) -> int:
    """torch_npu's uncorrectable-ECC check of a device's memory: 0 means no UCE error found.

    The simulated HBM is host DRAM, which reports no UCE to this process; the device is
    validated and 0 returned.
    """
    _checked_index(device_id, "device_id")
    return 0


def stress_detect(mode: int = 0) -> int:
    """Run a self-test on the current NPU and return 0 when it passed, 1 when it found a fault.

    The test runs a matmul, an elementwise chain and a reduction on the device and
    compares them with the CPU (torch_npu's AIC/AIV stress test, at simulator scale).
    """
    if mode not in (0, 1):
        raise ValueError(f"mode must be 0 or 1, got {mode!r}\n" + pta_error(ErrCode.VALUE))
    gen = torch.Generator().manual_seed(1234)
    a = torch.randn(64, 48, generator=gen)
    b = torch.randn(48, 32, generator=gen)
    checks = [
        ((a.npu() @ b.npu()).cpu(), a @ b),
        ((a.npu() * 2 + 1).exp().cpu(), (a * 2 + 1).exp()),
        (a.npu().sum(dim=1).cpu(), a.sum(dim=1)),
    ]
    synchronize()
    return 0 if all(torch.allclose(got, want, rtol=1e-4, atol=1e-4) for got, want in checks) else 1
