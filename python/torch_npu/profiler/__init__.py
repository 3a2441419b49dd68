"""torch_npu.profiler: torch_npu's profiler API on top of torch.profiler and the npu Kineto plug-in."""

from torch_npu.profiler import dynamic_profile
from torch_npu.profiler.experimental_config import (
    AiCMetrics,
    ExportType,
    HostSystem,
    ProfilerLevel,
    _ExperimentalConfig,
    supported_ai_core_metrics,
    supported_export_type,
    supported_profiler_level,
)
from torch_npu.profiler.profiler import ProfilerActivity, profile, supported_activities, tensorboard_trace_handler
from torch_npu.profiler.scheduler import ProfilerAction, schedule

__all__ = ["profile", "ProfilerActivity", "schedule", "tensorboard_trace_handler", "ProfilerAction",
           "_ExperimentalConfig", "supported_activities", "supported_profiler_level", "supported_ai_core_metrics",
           "supported_export_type", "ProfilerLevel", "AiCMetrics", "ExportType", "HostSystem", "dynamic_profile"]
