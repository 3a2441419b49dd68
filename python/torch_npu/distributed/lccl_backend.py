"""Creates ProcessGroupLCCL for c10d: ranks on one host exchange their control blocks through the store."""
import socket
from datetime import timedelta

import torch
import torch.distributed as dist

from torch_npu._C._distributed import ProcessGroupLCCL
from torch_npu.distributed.hccl_backend import rank_device
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

BACKEND_NAME = "lccl"


def host_identity() -> str:
    """This host's name and boot id: ranks share memory only when both match."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def wait_for_ranks(store: dist.Store, keys: list[str], timeout: timedelta, what: str) -> None:
    try:
        store.wait(keys, timeout)
    except Exception as e:  # noqa: BLE001 - the store's error names no rank
        missing = [k for k in keys if not store.check([k])]
        raise RuntimeError(
            f"lccl: {what}: ranks {[int(k.rsplit('/', 1)[1]) for k in missing]} did not join within {timeout} "
            f"({e}). Start every rank, or raise timeout= in init_process_group.\n"
            + npu_error(SubModule.DIST, ErrCode.TIMEOUT)
        ) from None


def create_lccl_backend(opts, backend_options) -> ProcessGroupLCCL:
    """Build the backend c10d asks for in init_process_group / new_group (extended API)."""
    device = rank_device()
    torch.accelerator.set_device_index(device)
    rank, size = opts.group_rank, opts.group_size
    store = dist.PrefixStore("lccl", opts.store)
    store.set(f"host/{rank}", host_identity())
    wait_for_ranks(store, [f"host/{r}" for r in range(size)], opts.timeout, "exchanging hosts")
    hosts = [store.get(f"host/{r}").decode() for r in range(size)]
    remote = [r for r, h in enumerate(hosts) if h != hosts[rank]]
    # Every rank reads the hosts before any raises (rank 0's exit would take the store with it).
    store.set(f"checked/{rank}", "1")
    wait_for_ranks(store, [f"checked/{r}" for r in range(size)], opts.timeout, "checking hosts")
    if remote:
        raise RuntimeError(
            f"lccl shares device memory between ranks on one host, but ranks {remote} run on another host than "
            f"rank {rank}: use init_process_group('hccl') for multi-host jobs.\n"
            + npu_error(SubModule.DIST, ErrCode.NOT_SUPPORT)
        )
    backend = ProcessGroupLCCL(rank, size, device, opts.timeout)
    store.set(f"block/{rank}", backend._local_descriptor())
    wait_for_ranks(store, [f"block/{r}" for r in range(size)], opts.timeout, "exchanging control blocks")
    backend._connect([store.get(f"block/{r}") for r in range(size)])
    return backend


def register_lccl_backend() -> None:
    """Register ``lccl`` for the npu device with c10d (once per process)."""
    if BACKEND_NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND_NAME, create_lccl_backend, extended_api=True, devices=["npu"])
