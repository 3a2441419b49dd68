"""torch_npu.profiler.profile: torch.profiler.profile with torch_npu's arguments and output.

It is torch's profiler underneath (npu tasks come from the Kineto plug-in in
csrc/profiler/), so ``events()``, ``key_averages()``, ``export_chrome_trace`` and
``export_memory_timeline`` work as on torch; ``tensorboard_trace_handler`` writes
torch_npu's ``*_ascend_pt`` directory from the same trace.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import torch.profiler
from torch.profiler import ProfilerActivity

from torch_npu.npu.mstx import mstx
from torch_npu.profiler.ascend_output import write_ascend_pt
from torch_npu.profiler.experimental_config import _ExperimentalConfig
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

__all__ = ["profile", "ProfilerActivity", "supported_activities", "tensorboard_trace_handler"]


def supported_activities() -> set[ProfilerActivity]:
    """Return the activities this build traces: CPU and NPU."""
    return {a for a in torch.profiler.supported_activities() if a in (ProfilerActivity.CPU, ProfilerActivity.NPU)}


def tensorboard_trace_handler(dir_name: str | None = None, worker_name: str | None = None,
                              analyse_flag: bool = True, async_mode: bool = False) -> Callable[[Any], None]:
    """Return an ``on_trace_ready`` callback that writes each trace as a ``*_ascend_pt`` directory.

    Args:
        dir_name: where the directories go (default: $ASCEND_WORK_PATH/profiling_data, else "./").
        worker_name: directory prefix (default "{hostname}_{pid}").
        analyse_flag, async_mode: accepted for torch_npu compatibility; the files are always
            written at once, in the calling thread (there is no separate offline analysis step).
    """
    if dir_name is None:
        work = os.environ.get("ASCEND_WORK_PATH")
        dir_name = os.path.join(work, "profiling_data") if work else "./"
    if not isinstance(dir_name, str) or not dir_name:
        raise ValueError(f"tensorboard_trace_handler: dir_name must be a non-empty path, got {dir_name!r}\n"
                         f"{npu_error(SubModule.PROF, ErrCode.PARAM)}")
    if worker_name is not None and (not isinstance(worker_name, str) or os.sep in worker_name):
        raise ValueError(f"tensorboard_trace_handler: worker_name must be a name without '{os.sep}', "
                         f"got {worker_name!r}\n{npu_error(SubModule.PROF, ErrCode.PARAM)}")

    def handler(prof: Any) -> None:
        prof.npu_result_dir = str(write_ascend_pt(prof, dir_name, worker_name))

    return handler


class profile(torch.profiler.profile):  # noqa: N801 - torch_npu's public name
    """Profile host ops and npu tasks, with torch_npu's arguments.

    Args (defaults in brackets):
        activities: ProfilerActivity.CPU and/or .NPU [both].
        schedule: a torch_npu.profiler.schedule (or any step -> ProfilerAction callable) [record all].
        on_trace_ready: called with the profiler when a trace is ready, e.g.
            tensorboard_trace_handler(dir) [None].
        record_shapes, profile_memory, with_stack, with_flops, with_modules: as torch [False].
        experimental_config: a _ExperimentalConfig [Level0, no AI-core metrics].
    """

    def __init__(self, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], Any] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: _ExperimentalConfig | None = None,
                 use_cuda: bool | None = None, custom_trace_id_callback: Callable[[], str] | None = None) -> None:
        if experimental_config is None:
            experimental_config = _ExperimentalConfig()
        if not isinstance(experimental_config, _ExperimentalConfig):
            raise TypeError("experimental_config must be a torch_npu.profiler._ExperimentalConfig, got "
                            f"{type(experimental_config).__name__}\n{npu_error(SubModule.PROF, ErrCode.TYPE)}")
        if use_cuda:
            raise ValueError("use_cuda: there is no CUDA device; use activities=[ProfilerActivity.CPU, "
                             f"ProfilerActivity.NPU]\n{npu_error(SubModule.PROF, ErrCode.PARAM)}")
        chosen = set(supported_activities() if activities is None else activities)
        unknown = chosen - supported_activities()
        if unknown or not chosen:
            raise ValueError(f"activities must be a non-empty subset of {sorted(map(str, supported_activities()))}, "
                             f"got {sorted(map(str, chosen))}\n{npu_error(SubModule.PROF, ErrCode.PARAM)}")
        if not experimental_config.collects_device:
            chosen.discard(ProfilerActivity.NPU)  # Level_none: host ops only
            chosen.add(ProfilerActivity.CPU)
        super().__init__(activities=sorted(chosen, key=lambda a: a.value), schedule=schedule,
                         on_trace_ready=on_trace_ready, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         custom_trace_id_callback=custom_trace_id_callback)
        self.npu_experimental_config = experimental_config
        self.npu_metadata: dict[str, Any] = {}
        self.npu_start_ns = 0
        self.npu_result_dir: str | None = None

    def start(self) -> None:
        self.npu_start_ns = time.time_ns()
        super().start()
        config = self.npu_experimental_config.as_dict()
        mstx._in_profile = config["_msprof_tx"] or config["_mstx"]

    def stop(self) -> None:
        mstx._in_profile = False
        super().stop()

    def add_metadata(self, key: str, value: str) -> None:
        """Add a string entry to the trace and to profiler_metadata.json."""
        self.npu_metadata[key] = value
        super().add_metadata(key, value)

    def add_metadata_json(self, key: str, value: str) -> None:
        """Add a JSON entry (given as text) to the trace and to profiler_metadata.json."""
        self.npu_metadata[key] = json.loads(value)
        super().add_metadata_json(key, value)
