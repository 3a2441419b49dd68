"""torch_npu's profiler schedule: torch's step cycle with torch_npu's argument order."""

from __future__ import annotations

from typing import Any

import torch.profiler
from torch.profiler import ProfilerAction

from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

__all__ = ["schedule", "ProfilerAction"]


class schedule:  # noqa: N801 - torch_npu's public name
    """Skip ``skip_first`` steps, then cycle: ``wait`` idle, ``warmup``, ``active`` recorded.

    Note the positional order (wait, active, warmup, repeat, skip_first), which is
    torch_npu's and differs from torch.profiler.schedule's (wait, warmup, active, ...).
    ``repeat`` = 0 cycles until profiling ends. Returns a ProfilerAction per step.
    """

    def __init__(self, wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0) -> None:
        for name, value in (("wait", wait), ("active", active), ("warmup", warmup), ("repeat", repeat),
                            ("skip_first", skip_first)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"schedule: {name} must be an int >= 0, got {value!r}\n"
                                 f"{npu_error(SubModule.PROF, ErrCode.VALUE)}")
        if active == 0:
            raise ValueError(f"schedule: active must be >= 1 (no step would be recorded)\n"
                             f"{npu_error(SubModule.PROF, ErrCode.VALUE)}")
        self.wait, self.active, self.warmup, self.repeat, self.skip_first = wait, active, warmup, repeat, skip_first
        self._torch = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                                              skip_first=skip_first)

    def __call__(self, step: int) -> ProfilerAction:
        return self._torch(step)

    def as_dict(self) -> dict[str, Any]:
        """The schedule as profiler_info.json lists it."""
        return {"wait": self.wait, "active": self.active, "warmup": self.warmup, "repeat": self.repeat,
                "skip_first": self.skip_first}
