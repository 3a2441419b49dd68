"""The legacy typed constructors ``torch.npu.FloatTensor``, ``torch.npu.FloatStorage``, ...

As torch.cuda's: ``torch.npu.FloatTensor(2, 3)`` makes an uninitialized float32 NPU tensor,
``torch.npu.FloatTensor([1, 2])`` one from data, and ``isinstance(t, torch.npu.FloatTensor)``
holds for every float32 tensor on an NPU. The ``*Storage`` classes do the same for
``torch.TypedStorage`` on the NPU.
"""

from typing import Any

import torch

__all__ = [
    "BFloat16Storage", "BFloat16Tensor", "BoolStorage", "BoolTensor", "ByteStorage", "ByteTensor", "CharStorage",
    "CharTensor", "DoubleStorage", "DoubleTensor", "FloatStorage", "FloatTensor", "HalfStorage", "HalfTensor",
    "IntStorage", "IntTensor", "LongStorage", "LongTensor", "ShortStorage", "ShortTensor",
]


class _TypedTensorMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor) and obj.device.type == "npu" and obj.dtype == cls.dtype


class _TypedTensor(metaclass=_TypedTensorMeta):
    dtype: torch.dtype

    def __new__(cls, *args: Any, device: Any = None) -> torch.Tensor:
        device = torch.device("npu") if device is None else torch.device(device)
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, torch.Size):
                return torch.empty(data, dtype=cls.dtype, device=device)
            return torch.tensor(data, dtype=cls.dtype, device=device)
        return torch.empty(*args, dtype=cls.dtype, device=device)


class _TypedStorageMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, torch.TypedStorage) and obj._untyped_storage.device.type == "npu"
                and obj.dtype == cls.dtype)


class _TypedStorage(metaclass=_TypedStorageMeta):
    dtype: torch.dtype

    def __new__(cls, *args: Any, device: Any = None) -> torch.TypedStorage:
        device = torch.device("npu") if device is None else torch.device(device)
        if len(args) == 1 and not isinstance(args[0], int):
            return torch.TypedStorage(list(args[0]), dtype=cls.dtype, device=device)
        return torch.TypedStorage(*args, dtype=cls.dtype, device=device, _internal=True)


def _tensor(name: str, dtype: torch.dtype) -> type:
    return _TypedTensorMeta(name, (_TypedTensor,), {"dtype": dtype, "__module__": __name__,
                                                     "__doc__": f"{dtype} tensors on an NPU."})


def _storage(name: str, dtype: torch.dtype) -> type:
    return _TypedStorageMeta(name, (_TypedStorage,), {"dtype": dtype, "__module__": __name__,
                                                       "__doc__": f"{dtype} typed storages on an NPU."})


BoolTensor = _tensor("BoolTensor", torch.bool)
ByteTensor = _tensor("ByteTensor", torch.uint8)
CharTensor = _tensor("CharTensor", torch.int8)
ShortTensor = _tensor("ShortTensor", torch.int16)
IntTensor = _tensor("IntTensor", torch.int32)
LongTensor = _tensor("LongTensor", torch.int64)
HalfTensor = _tensor("HalfTensor", torch.float16)
BFloat16Tensor = _tensor("BFloat16Tensor", torch.bfloat16)
FloatTensor = _tensor("FloatTensor", torch.float32)
DoubleTensor = _tensor("DoubleTensor", torch.float64)

BoolStorage = _storage("BoolStorage", torch.bool)
ByteStorage = _storage("ByteStorage", torch.uint8)
CharStorage = _storage("CharStorage", torch.int8)
ShortStorage = _storage("ShortStorage", torch.int16)
IntStorage = _storage("IntStorage", torch.int32)
LongStorage = _storage("LongStorage", torch.int64)
HalfStorage = _storage("HalfStorage", torch.float16)
BFloat16Storage = _storage("BFloat16Storage", torch.bfloat16)
FloatStorage = _storage("FloatStorage", torch.float32)
DoubleStorage = _storage("DoubleStorage", torch.float64)
