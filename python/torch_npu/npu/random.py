"""The NPU random number generators: one per device, counter based (seed, offset).

``torch.manual_seed`` seeds them too (through :func:`manual_seed_all`). Seeding
before the device is initialised is queued and replayed at initialisation.
"""

from collections.abc import Iterable

import torch

from torch_npu import _C
from torch_npu.npu.devices import _DeviceLike, _get_device_index, device_count
from torch_npu.npu.initialization import _lazy_call, _lazy_init

__all__ = [
    "default_generators",
    "get_rng_state",
    "get_rng_state_all",
    "initial_seed",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_rng_state",
    "set_rng_state_all",
]

default_generators: tuple[torch.Generator, ...] = tuple(_C._npu_default_generator(i) for i in range(device_count()))


def _generator(device: _DeviceLike) -> torch.Generator:
    idx = _get_device_index(device, optional=True)
    _C._npu_check_device(idx)
    return default_generators[idx]


def get_rng_state(device: _DeviceLike = "npu") -> torch.Tensor:
    r"""Return the random number generator state of an NPU as a ByteTensor.

    Args:
        device (torch.device or int or str, optional): the device (default: ``"npu"``,
            the current device).
    """
    _lazy_init()
    return _generator(device).get_state()


def get_rng_state_all() -> list[torch.Tensor]:
    r"""Return the random number generator states of all NPUs."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: torch.Tensor, device: _DeviceLike = "npu") -> None:
    r"""Set the random number generator state of an NPU.

    Args:
        new_state (torch.ByteTensor): the state, from :func:`get_rng_state`.
        device (torch.device or int or str, optional): the device (default: ``"npu"``,
            the current device).
    """
    state = new_state.clone(memory_format=torch.contiguous_format)
    idx = _get_device_index(device, optional=True)
    _lazy_call(lambda: _generator(idx).set_state(state))


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    r"""Set the random number generator state of every NPU, in device order."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    r"""Set the seed of the current NPU's random number generator.

    Args:
        seed (int): the desired seed. Queued if the NPU is not initialized yet.
    """
    seed = int(seed)
    _lazy_call(lambda: _generator(None).manual_seed(seed))


def manual_seed_all(seed: int) -> None:
    r"""Set the seed of every NPU's random number generator.

    Args:
        seed (int): the desired seed. Queued if the NPU is not initialized yet.
    """
    seed = int(seed)

    def seed_every_device() -> None:
        for generator in default_generators:
            generator.manual_seed(seed)

    _lazy_call(seed_every_device)


def seed() -> None:
    r"""Seed the current NPU's generator with a non-deterministic random number."""
    _lazy_call(lambda: _generator(None).seed())


def seed_all() -> None:
    r"""Seed every NPU's generator with one non-deterministic random number."""

    def seed_every_device() -> None:
        random_seed = default_generators[0].seed()
        for generator in default_generators[1:]:
            generator.manual_seed(random_seed)

    _lazy_call(seed_every_device)


def initial_seed() -> int:
    r"""Return the current seed of the current NPU's random number generator."""
    _lazy_init()
    return _generator(None).initial_seed()
