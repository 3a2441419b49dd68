"""Dynamic profiling: start and stop collection of a running job by editing a config file.

    from torch_npu.profiler import dynamic_profile as dp
    dp.init("/path/to/dir")        # creates dir/profiler_config.json if missing
    for batch in loader:
        train_step(batch)
        dp.step()                  # cheap: one stat() of the config file

Saving a changed profiler_config.json starts a profiler at step ``start_step`` (or the
next step if that has passed) for ``active`` steps; its result directory goes to
``prof_dir`` (torch_npu's tensorboard_trace_handler layout). ``start(path)`` reads a
config file and starts at once.
"""

from __future__ import annotations

import json
import os
from typing import Any

from torch.profiler import ProfilerActivity

from torch_npu.profiler.experimental_config import _ExperimentalConfig
from torch_npu.profiler.profiler import profile, tensorboard_trace_handler
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

__all__ = ["init", "step", "start"]

CONFIG_NAME = "profiler_config.json"
DEFAULT_CONFIG: dict[str, Any] = {
    "activities": ["CPU", "NPU"], "prof_dir": "./", "analyse": False, "record_shapes": False,
    "profile_memory": False, "with_stack": False, "with_flops": False, "with_modules": False,
    "active": 1, "warmup": 0, "start_step": 0, "experimental_config": {},
}
EXPERIMENTAL_KEYS = {"profiler_level", "aic_metrics", "l2_cache", "op_attr", "data_simplification",
                     "record_op_args", "export_type", "msprof_tx", "mstx", "host_sys", "gc_detect_threshold"}


class _Controller:
    def __init__(self) -> None:
        self.config_path: str | None = None
        self.mtime: float | None = None
        self.step_num = 0
        self.pending: dict[str, Any] | None = None  # a config waiting for its start step
        self.prof: profile | None = None
        self.steps_left = 0

    def watch(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)
        self.config_path = os.path.join(path, CONFIG_NAME)
        if not os.path.exists(self.config_path):
            with open(self.config_path, "w", encoding="utf-8") as f:
                json.dump(DEFAULT_CONFIG, f, indent=4)
        self.mtime = os.stat(self.config_path).st_mtime_ns

    def step(self) -> None:
        self.step_num += 1
        if self.prof is not None:
            self.steps_left -= 1
            if self.steps_left <= 0:
                self._finish()
            else:
                self.prof.step()
        if self.config_path is not None and self.prof is None:
            mtime = os.stat(self.config_path).st_mtime_ns
            if mtime != self.mtime:
                self.mtime = mtime
                self.pending = _read_config(self.config_path)
        if self.pending is not None and self.prof is None and self.step_num >= int(self.pending["start_step"]):
            config, self.pending = self.pending, None
            self.begin(config)

    def begin(self, config: dict[str, Any]) -> None:
        if self.prof is not None:
            raise RuntimeError("dynamic_profile: a profiler is already running; wait until its active steps end\n"
                               f"{npu_error(SubModule.PROF, ErrCode.UNAVAIL)}")
        activities = [getattr(ProfilerActivity, name) for name in config["activities"]]
        experimental = {k: v for k, v in config.get("experimental_config", {}).items() if k in EXPERIMENTAL_KEYS}
        self.prof = profile(activities=activities, record_shapes=config["record_shapes"],
                            profile_memory=config["profile_memory"], with_stack=config["with_stack"],
                            with_flops=config["with_flops"], with_modules=config["with_modules"],
                            experimental_config=_ExperimentalConfig(**experimental),
                            on_trace_ready=tensorboard_trace_handler(config["prof_dir"]))
        self.steps_left = int(config["active"])
        self.prof.start()

    def _finish(self) -> None:
        prof, self.prof = self.prof, None
        prof.stop()  # on_trace_ready writes the result directory


def _read_config(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            user = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"dynamic_profile: cannot read {path}: {e}\n{npu_error(SubModule.PROF, ErrCode.PARAM)}") from e
    config = {**DEFAULT_CONFIG, **user}
    unknown = [a for a in config["activities"] if a not in ("CPU", "NPU")]
    if unknown or int(config["active"]) < 1:
        raise ValueError(f"dynamic_profile: {path} needs activities from ['CPU', 'NPU'] and active >= 1, got "
                         f"activities={config['activities']} active={config['active']}\n"
                         f"{npu_error(SubModule.PROF, ErrCode.VALUE)}")
    return config


_controller = _Controller()


def init(path: str) -> None:
    """Watch ``path``/profiler_config.json (created with defaults if missing) from now on."""
    _controller.watch(path)


def step() -> None:
    """Mark the end of a training step: advances a running profiler, or starts one the config asked for."""
    _controller.step()


def start(config_path: str | None = None) -> None:
    """Start profiling now with the settings of ``config_path`` (default: the watched config)."""
    path = config_path or _controller.config_path
    if path is None:
        raise ValueError("dynamic_profile.start: give config_path or call init(path) first\n"
                         f"{npu_error(SubModule.PROF, ErrCode.PARAM)}")
    _controller.begin(_read_config(path))
