"""torch_npu.profiler's collection options: levels, AI-core metrics, export types, host data.

The names and string values are torch_npu's, so existing scripts and their
profiler_info.json read the same. What the simulated device cannot collect is said
plainly: a metric or host-system source it has no data for is left out of the
``supported_*`` functions and warned about, never filled with made-up numbers.
AiCMetrics.PipeUtilization reports the pipe shares of the modeled 910B time
(profiler/modeled_time.py), not hardware counters.
"""

from __future__ import annotations

import warnings
from typing import Any

from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

__all__ = ["ProfilerLevel", "AiCMetrics", "ExportType", "HostSystem", "_ExperimentalConfig",
           "supported_profiler_level", "supported_ai_core_metrics", "supported_export_type"]


class ProfilerLevel:
    """How much device-side data to collect (Level_none: host ops only)."""

    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics:
    """AI-core performance counter groups (torch_npu's aic_metrics)."""

    AiCoreNone = "ACL_AICORE_NONE"
    PipeUtilization = "ACL_AICORE_PIPE_UTILIZATION"
    ArithmeticUtilization = "ACL_AICORE_ARITHMETIC_UTILIZATION"
    Memory = "ACL_AICORE_MEMORY_BANDWIDTH"
    MemoryL0 = "ACL_AICORE_L0B_AND_WIDTH"
    MemoryUB = "ACL_AICORE_MEMORY_UB"
    ResourceConflictRatio = "ACL_AICORE_RESOURCE_CONFLICT_RATIO"
    L2Cache = "ACL_AICORE_L2_CACHE"
    MemoryAccess = "ACL_AICORE_MEMORY_ACCESS"


class ExportType:
    """Output format of the ascend_pt directory."""

    Db = "db"
    Text = "text"


class HostSystem:
    """Host-system data sources (host_sys)."""

    CPU = "cpu"
    MEM = "mem"
    DISK = "disk"
    NETWORK = "network"
    OSRT = "osrt"


def _values(cls: type) -> set[str]:
    return {v for k, v in vars(cls).items() if not k.startswith("_")}


def supported_profiler_level() -> set[str]:
    """Return the profiler levels this build collects."""
    return _values(ProfilerLevel)


def supported_ai_core_metrics() -> set[str]:
    """Return the AI-core metric groups this build reports: PipeUtilization, as modeled 910B pipe shares."""
    return {AiCMetrics.AiCoreNone, AiCMetrics.PipeUtilization}


def supported_export_type() -> set[str]:
    """Return the export types this build writes (text: CSV + JSON)."""
    return {ExportType.Text}


def _invalid(message: str) -> ValueError:
    return ValueError(f"{message}\n{npu_error(SubModule.PROF, ErrCode.PARAM)}")


class _ExperimentalConfig:
    """torch_npu's experimental profiler options (same names and defaults).

    Args:
        profiler_level: a ProfilerLevel value (default Level0).
        aic_metrics: an AiCMetrics value (default AiCoreNone).
        export_type: ExportType.Text (default) or a list of export types.
        host_sys: a list of HostSystem values (default none).
        The other flags (l2_cache, msprof_tx, mstx, data_simplification, record_op_args,
        op_attr, gc_detect_threshold, mstx_domain_include/exclude, sys_io,
        sys_interconnection) are kept in profiler_info.json; the simulator has no data
        behind l2_cache, sys_io and sys_interconnection and warns when they are set.
    """

    def __init__(self, profiler_level: str = ProfilerLevel.Level0, aic_metrics: str = AiCMetrics.AiCoreNone,
                 l2_cache: bool = False, msprof_tx: bool = False, data_simplification: bool = True,
                 record_op_args: bool = False, op_attr: bool = False, gc_detect_threshold: float | None = None,
                 export_type: str | list[str] | None = None, host_sys: list[str] | None = None,
                 mstx_domain_include: list[str] | None = None, mstx_domain_exclude: list[str] | None = None,
                 sys_io: bool = False, sys_interconnection: bool = False, mstx: bool = False) -> None:
        if profiler_level not in _values(ProfilerLevel):
            raise _invalid(f"profiler_level {profiler_level!r} is not one of {sorted(_values(ProfilerLevel))}: "
                           "use torch_npu.profiler.ProfilerLevel")
        if aic_metrics not in _values(AiCMetrics):
            raise _invalid(f"aic_metrics {aic_metrics!r} is not one of {sorted(_values(AiCMetrics))}: "
                           "use torch_npu.profiler.AiCMetrics")
        types = [ExportType.Text] if export_type is None else (
            [export_type] if isinstance(export_type, str) else list(export_type))
        for t in types:
            if t not in _values(ExportType):
                raise _invalid(f"export_type {t!r} is not one of {sorted(_values(ExportType))}")
            if t not in supported_export_type():
                raise ValueError(f"export_type {t!r} is not available on the simulated device: use ExportType.Text "
                                 f"(CSV and JSON files)\n{npu_error(SubModule.PROF, ErrCode.NOT_SUPPORT)}")
        hosts = list(host_sys or [])
        for h in hosts:
            if h not in _values(HostSystem):
                raise _invalid(f"host_sys entry {h!r} is not one of {sorted(_values(HostSystem))}")
        if gc_detect_threshold is not None and gc_detect_threshold < 0:
            raise _invalid(f"gc_detect_threshold must be >= 0, got {gc_detect_threshold}")
        uncollected = [name for name, on in (("aic_metrics", aic_metrics not in supported_ai_core_metrics()),
                                             ("l2_cache", l2_cache), ("host_sys", bool(hosts)), ("sys_io", sys_io),
                                             ("sys_interconnection", sys_interconnection)) if on]
        if uncollected:
            warnings.warn(f"torch_npu.profiler: the simulated device has no hardware counters for "
                          f"{', '.join(uncollected)}; those columns and files are not written", stacklevel=2)
        self._profiler_level = profiler_level
        self._aic_metrics = aic_metrics
        self._l2_cache = l2_cache
        self._msprof_tx = msprof_tx
        self._mstx = mstx
        self._data_simplification = data_simplification
        self.record_op_args = record_op_args
        self._op_attr = op_attr
        self._gc_detect_threshold = gc_detect_threshold
        self._export_type = types
        self._host_sys = hosts
        self._mstx_domain_include = list(mstx_domain_include or [])
        self._mstx_domain_exclude = list(mstx_domain_exclude or [])
        self._sys_io = sys_io
        self._sys_interconnection = sys_interconnection

    @property
    def collects_device(self) -> bool:
        """Whether npu tasks are collected (every level but Level_none)."""
        return self._profiler_level != ProfilerLevel.Level_none

    def as_dict(self) -> dict[str, Any]:
        """The options as torch_npu's profiler_info.json lists them."""
        return {"_profiler_level": self._profiler_level, "_aic_metrics": self._aic_metrics,
                "_l2_cache": self._l2_cache, "_msprof_tx": self._msprof_tx, "_mstx": self._mstx,
                "_data_simplification": self._data_simplification, "record_op_args": self.record_op_args,
                "_export_type": self._export_type, "_host_sys": self._host_sys, "_op_attr": self._op_attr,
                "_gc_detect_threshold": self._gc_detect_threshold,
                "_mstx_domain_include": self._mstx_domain_include,
                "_mstx_domain_exclude": self._mstx_domain_exclude, "_sys_io": self._sys_io,
                "_sys_interconnection": self._sys_interconnection}
