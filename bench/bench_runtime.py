"""The simulated runtime's fixed costs, each against a host peer measured in the same run.

(a) alloc + free of a 1 MiB tensor: caching allocator (npu) vs torch's CPU allocator.
(b) H2D / D2H copy bandwidth of a 64 MiB tensor vs a host-to-host torch copy and numpy.
(c) an empty kernel launch + stream synchronize vs calling the same kernel directly.

The empty kernel is a real shared object with the aclrtKernelFunc ABI (built here with
cc), launched through the runtime's C API exactly as compiled kernels are, via ctypes.
"""

from __future__ import annotations

import ctypes
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import torch_npu
from torch_npu import _C

MiB = 1 << 20
KERNEL_C = "#include <stdint.h>\nint32_t empty_kernel(const void* a, uint32_t i, uint32_t n) { return 0; }\n"
KERNEL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32)


def per_call_us(fn, calls: int, repeat: int = 5) -> float:
    """Best-of-`repeat` microseconds per call of `fn` over `calls` calls."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def best_seconds(fn, repeat: int = 7) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def report(name: str, npu: float, peer_name: str, peer: float, unit: str, higher_is_better: bool) -> None:
    ratio = npu / peer if higher_is_better else peer / npu
    print(f"{name:34s} npu {npu:10.2f} {unit:5s} {peer_name:18s} {peer:10.2f} {unit:5s} npu/peer {ratio:6.2f}x")


def bench_alloc() -> None:
    def npu_alloc():
        torch.empty(MiB, dtype=torch.uint8, device="npu")

    def cpu_alloc():
        torch.empty(MiB, dtype=torch.uint8, device="cpu")

    def npu_raw():
        torch_npu.npu.memory.caching_allocator_delete(torch_npu.npu.memory.caching_allocator_alloc(MiB))

    cpu = per_call_us(cpu_alloc, 20000)
    report("(a) alloc+free 1 MiB tensor", per_call_us(npu_alloc, 20000), "torch cpu", cpu, "us", higher_is_better=False)
    report("    caching_allocator_alloc/delete", per_call_us(npu_raw, 20000), "torch cpu", cpu, "us",
           higher_is_better=False)


def bench_copies() -> None:
    nbytes = 64 * MiB
    host = torch.randn(nbytes // 4)
    host_out = torch.empty_like(host)
    device = torch.empty(nbytes // 4, device="npu")
    device.copy_(host)
    assert torch.equal(device.cpu(), host)
    src_np, dst_np = host.numpy(), np.empty_like(host.numpy())
    gbps = lambda seconds: nbytes / seconds / 1e9
    h2d = gbps(best_seconds(lambda: device.copy_(host)))
    d2h = gbps(best_seconds(lambda: host_out.copy_(device)))
    torch_h2h = gbps(best_seconds(lambda: host_out.copy_(host)))
    numpy_h2h = gbps(best_seconds(lambda: np.copyto(dst_np, src_np)))
    report("(b) H2D 64 MiB", h2d, "torch cpu copy_", torch_h2h, "GB/s", higher_is_better=True)
    report("    D2H 64 MiB", d2h, "torch cpu copy_", torch_h2h, "GB/s", higher_is_better=True)
    report("    H2D 64 MiB", h2d, "numpy copyto", numpy_h2h, "GB/s", higher_is_better=True)


def bench_launch(tmp: Path) -> None:
    source, library = tmp / "empty_kernel.c", tmp / "empty_kernel.so"
    source.write_text(KERNEL_C)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    kernel = KERNEL_TYPE(("empty_kernel", ctypes.CDLL(str(library))))
    runtime = ctypes.CDLL(_C.__file__)
    runtime.aclrtLaunchKernel.argtypes = [KERNEL_TYPE, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                                          ctypes.c_char_p, ctypes.c_void_p]
    runtime.aclrtSynchronizeStream.argtypes = [ctypes.c_void_p]
    runtime.aclGetRecentErrMsg.restype = ctypes.c_char_p
    stream = ctypes.c_void_p()
    assert runtime.aclrtGetStreamByIndex(0, 1, ctypes.byref(stream)) == 0

    def launch_and_sync():
        runtime.aclrtLaunchKernel(kernel, 1, None, 0, b"empty", stream)
        if runtime.aclrtSynchronizeStream(stream) != 0:
            raise RuntimeError(runtime.aclGetRecentErrMsg())

    launch = per_call_us(launch_and_sync, 5000)
    direct = per_call_us(lambda: kernel(None, 0, 1), 5000)
    report("(c) empty launch + sync", launch, "direct ctypes call", direct, "us", higher_is_better=False)


def main() -> None:
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads; npu/peer > 1 means npu is better")
    bench_alloc()
    bench_copies()
    with tempfile.TemporaryDirectory() as tmp:
        bench_launch(Path(tmp))


if __name__ == "__main__":
    main()
