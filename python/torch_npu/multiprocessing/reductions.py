"""Pickling npu tensors, storages and interprocess events for multiprocessing (torch's reductions, for npu).

torch 2.13's ``torch.multiprocessing.reductions`` knows only CUDA device memory; for any
other device it falls through to ``_share_fd_cpu_`` and fails in the queue's feeder
thread, leaving the receiver waiting forever. These reducers take npu objects and hand
the rest to torch's. Anything that cannot be shared pickles to a call that raises on the
receiving side, so ``get()`` fails with the reason instead of hanging.
"""
from multiprocessing import reduction

import torch
from torch.multiprocessing import reductions as torch_reductions

from torch_npu import _C
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

# Formats whose bytes read as the logical tensor: anything else is an internal layout.
BASE_FORMATS = frozenset({0, 1, 2, 30})  # NCHW, NHWC, ND, NCDHW


def share_npu(storage: torch.UntypedStorage) -> tuple:
    """Export ``storage`` for another process: ``(device, key, nbytes, event_handle)`` (``UntypedStorage._share_npu_``).

    A storage this process received is sent on under its key (the exporter keeps the memory
    for every holder). The storage is cached under the bytes it names, so one that comes back
    here is this same storage.
    """
    shared = _C._npu_share_storage(storage)
    key = shared[1]
    if key is not None:
        torch_reductions.shared_cache[segment_identity(key)] = torch_reductions.StorageWeakRef(storage)
    return shared


def new_shared_npu(device: int, key: bytes | None, nbytes: int, event_handle: bytes | None) -> torch.UntypedStorage:
    """Open a storage another process exported with ``_share_npu_`` (``UntypedStorage._new_shared_npu``).

    Work queued afterwards on the current stream waits for the writes the sender had queued.
    """
    if key is None or nbytes == 0:
        return torch.UntypedStorage(0, device=torch.device("npu", device))
    identity = segment_identity(key)
    storage = torch_reductions.storage_from_cache(torch.UntypedStorage, identity)
    if storage is not None:
        _C._npu_ipc_release_key(key.decode())  # already open here (or this process's own): released at once
        return storage
    torch.npu._lazy_init()
    storage = _C._npu_new_shared_storage(device, key.decode(), nbytes, event_handle or b"")
    torch_reductions.shared_cache[identity] = torch_reductions.StorageWeakRef(storage)
    return storage


def segment_identity(key: bytes) -> tuple:
    """The bytes a key names, whichever share produced it: (exporter pid, segment serial, offset, size)."""
    fields = key.decode().split(":")
    return ("npu", int(fields[1]), int(fields[7], 16), int(fields[9], 16), int(fields[10], 16))


def raise_unshareable(message: str) -> None:
    raise RuntimeError(message)


def unshareable(message: str) -> tuple:
    return (raise_unshareable, (message + "\n" + npu_error(SubModule.PTA, ErrCode.NOT_SUPPORT),))


def rebuild_npu_tensor(cls: type, size: torch.Size, stride: tuple, offset: int, dtype: torch.dtype,
                       requires_grad: bool, storage_args: tuple) -> torch.Tensor:
    storage = new_shared_npu(*storage_args)
    typed = torch.storage.TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)
    t = torch._utils._rebuild_tensor(typed, offset, size, stride)
    if cls == torch.nn.parameter.Parameter:
        # Through the constructor: integer Parameters must get requires_grad=False there.
        return torch.nn.parameter.Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def reduce_tensor(tensor: torch.Tensor) -> tuple:
    if tensor.device.type != "npu":
        return torch_reductions.reduce_tensor(tensor)
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries. If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).\n" + npu_error(SubModule.PTA, ErrCode.PARAM)
        )
    torch.utils.hooks.warn_if_has_hooks(tensor)
    if tensor.layout != torch.strided:
        return unshareable(f"an npu tensor with layout {tensor.layout} cannot be shared between processes; "
                           "share its dense parts")
    npu_format = torch.ops.npu.get_npu_format(tensor)
    if npu_format not in BASE_FORMATS:
        return unshareable(f"an npu tensor stored in internal format {npu_format} cannot be shared between "
                           "processes: share torch_npu.npu_format_cast(t, 2) instead")
    try:
        storage_args = share_npu(tensor.untyped_storage())
    except RuntimeError as e:
        return unshareable(f"the npu tensor could not be shared: {e}")
    return (rebuild_npu_tensor, (type(tensor), tensor.size(), tensor.stride(), tensor.storage_offset(), tensor.dtype,
                                 tensor.requires_grad, storage_args))


def reduce_storage(storage: torch.UntypedStorage) -> tuple:
    if storage.device.type != "npu":
        return torch_reductions.reduce_storage(storage)
    try:
        return (new_shared_npu, share_npu(storage))
    except RuntimeError as e:
        return unshareable(f"the npu storage could not be shared: {e}")


def rebuild_event(device: int, handle: bytes) -> "torch.npu.Event":
    return torch.npu.Event.from_ipc_handle(device, handle)


def reduce_event(event: "torch.npu.Event") -> tuple:
    if event._ipc is None:
        return unshareable("an npu Event can go to another process only when created with interprocess=True")
    return (rebuild_event, (event._ipc.device, event.ipc_handle()))


def init_reductions() -> None:
    """Register the npu-aware reducers with multiprocessing's ForkingPickler (``import torch_npu`` does it)."""
    reduction.register(torch.UntypedStorage, reduce_storage)
    for t in torch._tensor_classes:
        reduction.register(t, reduce_tensor)
    reduction.register(torch.Tensor, reduce_tensor)
    reduction.register(torch.nn.parameter.Parameter, reduce_tensor)
    from torch_npu.npu.streams import Event

    reduction.register(Event, reduce_event)
    torch.UntypedStorage._share_npu_ = share_npu
    torch.UntypedStorage._new_shared_npu = staticmethod(new_shared_npu)
