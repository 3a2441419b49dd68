"""Writes torch_npu's result directory for one recorded trace.

    {worker}_{timestamp}_ascend_pt/          worker defaults to {hostname}_{pid}
        profiler_info.json                    the profiler's configuration and time span
        profiler_metadata.json                add_metadata() entries and the device's environment
        ASCEND_PROFILER_OUTPUT/
            trace_view.json                   the Kineto trace's events (chrome-trace array)
            operator_details.csv  kernel_details.csv  op_statistic.csv  step_trace_time.csv
            memory_record.csv  operator_memory.csv    (with profile_memory=True)

Column headers are torch_npu's. Everything is computed from the one trace torch.profiler
produced (trace_tables.py), so the files agree with ``prof.events()`` and with each other.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from torch_npu.profiler.experimental_config import AiCMetrics
from torch_npu.profiler.modeled_time import modeled_kernels
from torch_npu.profiler.trace_tables import PIPE_COLUMNS, TraceTables

__all__ = ["write_ascend_pt", "result_dir_name"]

OUTPUT_DIR = "ASCEND_PROFILER_OUTPUT"
OPERATOR_HEADERS = ["Name", "Input Shapes", "Call Stack", "Host Self Duration(us)", "Host Total Duration(us)",
                    "Device Self Duration(us)", "Device Total Duration(us)", "Device Self Duration With AICore(us)",
                    "Device Total Duration With AICore(us)"]
KERNEL_HEADERS = ["Device_id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State", "Accelerator Core",
                  "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Dim", "Mix Block Dim", "HF32 Eligible",
                  "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
                  "Output Formats", "Context ID"]
STEP_ID_HEADER = "Step Id"
# Beyond torch_npu: the kernel's time on a real 910B1 as modeled_time.py estimates it.
MODELED_HEADER = "Modeled 910B Duration(us)"
OP_STATISTIC_HEADERS = ["Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)",
                        "Avg Time(us)", "Max Time(us)", "Ratio(%)"]
STEP_TRACE_HEADERS = ["Device_id", "Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
                      "Communication", "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)",
                      "Preparing"]
MEMORY_RECORD_HEADERS = ["Component", "Timestamp(us)", "Total Allocated(MB)", "Total Reserved(MB)",
                         "Total Active(MB)", "Stream Ptr", "Device Type"]
OPERATOR_MEMORY_HEADERS = ["Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)", "Active Release Time(us)",
                           "Duration(us)", "Active Duration(us)", "Allocation Total Allocated(MB)",
                           "Allocation Total Reserved(MB)", "Allocation Total Active(MB)",
                           "Release Total Allocated(MB)", "Release Total Reserved(MB)", "Release Total Active(MB)",
                           "Stream Ptr", "Device Type"]
# Environment recorded in profiler_metadata.json: what shapes the simulated device's behaviour.
ENV_PREFIXES = ("ASCEND_", "NPU_SIM_", "PYTORCH_NPU_", "HCCL_", "TORCH_NPU_")


def result_dir_name(worker_name: str | None) -> str:
    """``{worker}_{timestamp}_ascend_pt``, the timestamp to the millisecond."""
    worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
    stamp = datetime.datetime.now().strftime("%Y%m%d%H%M%S%f")[:-3]
    return f"{worker}_{stamp}_ascend_pt"


def _write_csv(path: Path, headers: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(headers)
        writer.writerows(rows)


def _chrome_trace(prof: Any) -> dict[str, Any]:
    fd, path = tempfile.mkstemp(suffix=".json", prefix="torch_npu_trace_")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    finally:
        os.unlink(path)


def _profiler_info(prof: Any, end_ns: int) -> dict[str, Any]:
    import torch_npu

    schedule = getattr(prof, "schedule", None)
    config = getattr(prof, "npu_experimental_config", None)
    return {
        "config": {
            "common_config": {
                "activities": [str(a) for a in sorted(prof.activities, key=lambda a: a.value)],
                "schedule": schedule.as_dict() if hasattr(schedule, "as_dict") else None,
                "record_shapes": prof.record_shapes, "profile_memory": prof.profile_memory,
                "with_stack": prof.with_stack, "with_flops": prof.with_flops, "with_modules": prof.with_modules,
            },
            "experimental_config": config.as_dict() if config is not None else {},
        },
        "start_info": {"syscnt_enable": False, "collectionTimeBegin": getattr(prof, "npu_start_ns", 0)},
        "end_info": {"collectionTimeEnd": end_ns, "MonotonicTimeEnd": time.monotonic_ns()},
        "torch_npu_version": getattr(torch_npu, "__version__", "unknown"),
        "rank_id": int(os.environ.get("RANK", -1)),
    }


def write_ascend_pt(prof: Any, dir_name: str, worker_name: str | None = None) -> Path:
    """Write the result directory of ``prof`` (a finished torch/torch_npu profile) under dir_name."""
    root = Path(dir_name) / result_dir_name(worker_name)
    out = root / OUTPUT_DIR
    out.mkdir(parents=True, exist_ok=False)
    end_ns = time.time_ns()
    trace = _chrome_trace(prof)
    tables = TraceTables(trace)
    tables.models = modeled_kernels(tables.kernel_symbols())
    with (out / "trace_view.json").open("w", encoding="utf-8") as f:
        json.dump(trace.get("traceEvents", []) + tables.modeled_lane_events(), f)
    with_step = bool(tables.steps)
    config = getattr(prof, "npu_experimental_config", None)
    pipes = config is not None and config.as_dict()["_aic_metrics"] == AiCMetrics.PipeUtilization
    _write_csv(out / "operator_details.csv", OPERATOR_HEADERS, tables.operator_rows())
    kernel_headers = ([STEP_ID_HEADER] if with_step else []) + KERNEL_HEADERS + [MODELED_HEADER]
    if pipes:
        kernel_headers += [column for column, _, _ in PIPE_COLUMNS]
    _write_csv(out / "kernel_details.csv", kernel_headers, tables.kernel_rows(with_step, pipes))
    _write_csv(out / "op_statistic.csv", OP_STATISTIC_HEADERS, tables.op_statistic_rows())
    _write_csv(out / "step_trace_time.csv", STEP_TRACE_HEADERS, tables.step_time_rows())
    if prof.profile_memory:
        _write_csv(out / "memory_record.csv", MEMORY_RECORD_HEADERS, tables.memory_record_rows())
        _write_csv(out / "operator_memory.csv", OPERATOR_MEMORY_HEADERS, tables.operator_memory_rows())
    with (root / "profiler_info.json").open("w", encoding="utf-8") as f:
        json.dump(_profiler_info(prof, end_ns), f, indent=4)
    metadata = dict(getattr(prof, "npu_metadata", {}))
    metadata["ENV_VARIABLES"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}
    with (root / "profiler_metadata.json").open("w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=4)
    return root
