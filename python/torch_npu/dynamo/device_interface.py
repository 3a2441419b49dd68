"""Dynamo's view of the npu device: torch._dynamo asks a DeviceInterface for streams, events and
device properties of every device a graph touches."""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface, get_registered_device_interfaces, \
    register_interface_for_device


class NpuInterface(DeviceInterface):
    device = torch.npu.device
    Event = torch.npu.Event
    Stream = torch.npu.Stream

    class Worker:
        @staticmethod
        def set_device(device: int) -> None:
            torch.npu.set_device(device)

        @staticmethod
        def current_device() -> int:
            return torch.npu.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> Any:
            return torch.npu.get_device_properties(device)

    current_device = staticmethod(torch.npu.current_device)
    set_device = staticmethod(torch.npu.set_device)
    device_count = staticmethod(torch.npu.device_count)
    current_stream = staticmethod(torch.npu.current_stream)
    set_stream = staticmethod(torch.npu.set_stream)
    get_raw_stream = staticmethod(lambda device: torch.npu.current_stream(device).npu_stream)
    synchronize = staticmethod(torch.npu.synchronize)
    get_device_properties = staticmethod(torch.npu.get_device_properties)
    is_available = staticmethod(torch.npu.is_available)

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        previous = torch.npu.current_device()
        if device != previous:
            torch.npu.set_device(device)
        return previous

    exchange_device = maybe_exchange_device

    @staticmethod
    def memory_allocated(device: torch.types.Device = None) -> int:
        return torch.npu.memory_allocated(device)


def register() -> None:
    """Tell Dynamo about "npu" and each "npu:N" (once)."""
    if "npu" in dict(get_registered_device_interfaces()):
        return
    register_interface_for_device("npu", NpuInterface)
    for index in range(torch.npu.device_count()):
        register_interface_for_device(f"npu:{index}", NpuInterface)
