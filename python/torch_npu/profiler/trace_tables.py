"""torch_npu's summary tables, computed from one Kineto trace (the chrome-trace events).

The trace holds everything the tables need: host ops (``cpu_op``, with ``External id`` =
correlation id), schedule steps (``ProfilerStep#N``), the npu tasks the Kineto plug-in
(csrc/profiler/NpuActivityProfiler.cpp) emitted with their ``correlation`` and ``task
type``, and the allocator's ``[memory]`` events. Times in the tables are microseconds
since the epoch, as torch_npu writes them; the trace's own ``ts`` are relative to its
``baseTimeNanoseconds``.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from torch_npu.profiler.modeled_time import KernelModelTime

__all__ = ["TraceTables"]

# Categories the plug-in gives npu tasks.
DEVICE_TASK_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"})
# c10::DeviceType::PrivateUse1, as the memory events carry it.
PRIVATEUSE1_DEVICE_TYPE = 20
# CANN's value for "no model": eager launches belong to none.
NO_MODEL_ID = 4294967295
COMPUTE_TASK_TYPES = frozenset({"AI_CORE", "HOST_FUNC"})
COMMUNICATION_TASK_TYPE = "HCCL"
RECEIVE_TASK_NAME = "hcom_receive_"
MB = 1024.0 * 1024.0
# The trace lane of a stream's modeled 910B times: tid = this + stream index, on the device's pid.
MODELED_LANE_BASE = 1000
# AiCMetrics.PipeUtilization columns the model fills: (column, core type, pipe).
PIPE_COLUMNS = (("aic_mac_ratio", "aic", "cube"), ("aic_mte2_ratio", "aic", "mte2"),
                ("aic_fixpipe_ratio", "aic", "mte3"), ("aiv_vec_ratio", "aiv", "vector"),
                ("aiv_mte2_ratio", "aiv", "mte2"), ("aiv_mte3_ratio", "aiv", "mte3"))


@dataclass
class HostOp:
    """A host op of the trace and its place in its thread's call tree."""

    event: dict[str, Any]
    start: float
    end: float
    children: list["HostOp"] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)  # npu tasks it queued itself

    @property
    def correlation(self) -> int:
        return int(self.event.get("args", {}).get("External id", 0))

    def all_tasks(self) -> list[dict[str, Any]]:
        out = list(self.tasks)
        for child in self.children:
            out.extend(child.all_tasks())
        return out


def _us(value: float) -> float:
    return round(value, 3)


class TraceTables:
    """Rows of torch_npu's CSV files, from a Kineto chrome trace (the parsed JSON object)."""

    def __init__(self, trace: dict[str, Any], models: dict[str, KernelModelTime] | None = None) -> None:
        self.models = models or {}
        self.base_us = int(trace.get("baseTimeNanoseconds", 0)) / 1000.0
        events = trace.get("traceEvents", [])
        self.tasks = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_TASK_CATEGORIES),
                            key=lambda e: (e["ts"], e["args"].get("stream", 0)))
        self.steps = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                             and str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
        self.memory = sorted((e for e in events if e.get("name") == "[memory]"
                              and e.get("args", {}).get("Device Type") == PRIVATEUSE1_DEVICE_TYPE),
                             key=lambda e: e["ts"])
        self.ops = self._build_op_trees([e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"])
        by_correlation = {op.correlation: op for op in self.ops}
        self.task_op: dict[int, HostOp] = {}
        for task in self.tasks:
            op = by_correlation.get(int(task["args"].get("correlation", 0)))
            if op is not None:
                op.tasks.append(task)
                self.task_op[id(task)] = op

    # ------------------------------------------------------------------ structure
    @staticmethod
    def _build_op_trees(ops: list[dict[str, Any]]) -> list[HostOp]:
        """Every host op, each linked to the ops it encloses on its own thread."""
        nodes: list[HostOp] = []
        by_thread: dict[tuple[Any, Any], list[HostOp]] = defaultdict(list)
        for e in ops:
            node = HostOp(e, float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
            nodes.append(node)
            by_thread[(e.get("pid"), e.get("tid"))].append(node)
        for thread_ops in by_thread.values():
            thread_ops.sort(key=lambda n: (n.start, -n.end))
            stack: list[HostOp] = []
            for node in thread_ops:
                while stack and stack[-1].end < node.end:
                    stack.pop()
                if stack:
                    stack[-1].children.append(node)
                stack.append(node)
        return nodes

    def step_of(self, ts: float) -> str:
        """The schedule step ("ProfilerStep#N" -> "N") whose host interval holds ts; "" if none."""
        starts = [s["ts"] for s in self.steps]
        i = bisect.bisect_right(starts, ts) - 1
        if i >= 0 and ts <= self.steps[i]["ts"] + self.steps[i].get("dur", 0):
            return self.steps[i]["name"].split("#", 1)[1]
        return ""

    def _task_step(self, task: dict[str, Any]) -> str:
        op = self.task_op.get(id(task))
        return self.step_of(op.start if op is not None else task["ts"])

    def _innermost_op_at(self, ts: float, pid: Any, tid: Any) -> HostOp | None:
        best = None
        for op in self.ops:
            if op.event.get("pid") == pid and op.event.get("tid") == tid and op.start <= ts <= op.end:
                if best is None or op.start >= best.start:
                    best = op
        return best

    # ------------------------------------------------------------------ tables
    def kernel_symbols(self) -> set[str]:
        return {t["name"] for t in self.tasks if t["args"].get("task type") == "AI_CORE"}

    def kernel_rows(self, with_step: bool, pipe_utilization: bool) -> list[list[Any]]:
        """kernel_details.csv: one row per npu task, then its modeled 910B time (and pipe shares)."""
        rows = []
        last_end: dict[tuple[int, int], float] = {}
        task_ids: dict[tuple[int, int], int] = defaultdict(int)
        for task in self.tasks:
            args = task["args"]
            lane = (int(args.get("device", 0)), int(args.get("stream", 0)))
            start, dur = float(task["ts"]), float(task.get("dur", 0))
            wait = max(0.0, start - last_end[lane]) if lane in last_end else 0.0
            last_end[lane] = start + dur
            task_ids[lane] += 1
            op = self.task_op.get(id(task))
            shapes = op.event.get("args", {}).get("Input Dims") if op is not None else None
            dtypes = op.event.get("args", {}).get("Input type") if op is not None else None
            row = [lane[0], NO_MODEL_ID, task_ids[lane], lane[1], task["name"], self.task_type(task), "N/A",
                   args.get("task type", "N/A"), f"{_us(start + self.base_us)}\t", _us(dur), _us(wait),
                   args.get("block dim", 0), 0, "NO", _shape_text(shapes), _list_text(dtypes), "N/A", "N/A", "N/A",
                   "N/A", "N/A"]
            model = self.models.get(task["name"]) if args.get("task type") == "AI_CORE" else None
            row.append(round(model.us, 4) if model is not None else "N/A")
            if pipe_utilization:
                cores = "aiv" if model is not None and model.core_type == "aiv" else "aic"  # mix: cube + vector
                row.extend(round(model.share(pipe), 4) if model is not None and core == cores else "N/A"
                           for _, core, pipe in PIPE_COLUMNS)
            rows.append(([self._task_step(task)] if with_step else []) + row)
        return rows

    def modeled_lane_events(self) -> list[dict[str, Any]]:
        """Trace events of each kernel's modeled 910B time, on a lane beside its stream's."""
        events, lanes = [], set()
        for task in self.tasks:
            model = self.models.get(task["name"])
            if model is None or task["args"].get("task type") != "AI_CORE":
                continue
            lane = (task["pid"], MODELED_LANE_BASE + int(task["args"].get("stream", 0)))
            lanes.add(lane)
            events.append({"ph": "X", "cat": "modeled_910b", "name": task["name"], "pid": lane[0], "tid": lane[1],
                           "ts": task["ts"], "dur": round(model.us, 4),
                           "args": {"simulated duration (us)": task.get("dur", 0),
                                    **{f"{p} (us)": round(t, 4) for p, t in model.pipes.items()}}})
        for pid, tid in sorted(lanes):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": f"Stream {tid - MODELED_LANE_BASE} (modeled 910B)"}})
        return events

    def task_type(self, task: dict[str, Any]) -> str:
        """The "Type" column: the host op that launched the task, else its task type."""
        op_name = task["args"].get("op name")
        return op_name if op_name else task["args"].get("task type", "N/A")

    def op_statistic_rows(self) -> list[list[Any]]:
        """op_statistic.csv: tasks grouped by (device, type, core type)."""
        groups: dict[tuple[int, str, str], list[float]] = defaultdict(list)
        for task in self.tasks:
            key = (int(task["args"].get("device", 0)), self.task_type(task), task["args"].get("task type", "N/A"))
            groups[key].append(float(task.get("dur", 0)))
        total = sum(sum(d) for d in groups.values()) or 1.0
        rows = []
        for (device, op_type, core), durations in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
            s = sum(durations)
            rows.append([device, op_type, core, len(durations), _us(s), _us(min(durations)),
                         _us(s / len(durations)), _us(max(durations)), round(100.0 * s / total, 2)])
        return rows

    def operator_rows(self) -> list[list[Any]]:
        """operator_details.csv: one row per host op, with the device time of what it queued."""
        rows = []
        for op in sorted(self.ops, key=lambda n: n.start):
            args = op.event.get("args", {})
            own, every = op.tasks, op.all_tasks()
            host_total = op.end - op.start
            host_self = host_total - sum(c.end - c.start for c in op.children)
            rows.append([op.event["name"], _shape_text(args.get("Input Dims")), _stack_text(args.get("Call stack")),
                         _us(host_self), _us(host_total), _us(_busy(own)), _us(_busy(every)),
                         _us(_busy(own, ai_core_only=True)), _us(_busy(every, ai_core_only=True))])
        return rows

    def step_time_rows(self) -> list[list[Any]]:
        """step_trace_time.csv: per device and step, the device's compute and idle time."""
        by_step: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
        for task in self.tasks:
            by_step[(int(task["args"].get("device", 0)), self._task_step(task))].append(task)
        step_start = {s["name"].split("#", 1)[1]: float(s["ts"]) for s in self.steps}
        rows = []
        for (device, step), tasks in sorted(by_step.items(), key=lambda kv: (kv[0][0], _step_key(kv[0][1]))):
            if self.steps and step == "":
                continue  # queued outside every recorded step (e.g. during warmup)
            first = min(float(t["ts"]) for t in tasks)
            last = max(float(t["ts"]) + float(t.get("dur", 0)) for t in tasks)
            compute = _merged([t for t in tasks if t["args"].get("task type") in COMPUTE_TASK_TYPES])
            comm_tasks = [t for t in tasks if t["args"].get("task type") == COMMUNICATION_TASK_TYPE]
            comm = _merged(comm_tasks)
            receive = _merged([t for t in comm_tasks if t["name"] == RECEIVE_TASK_NAME])
            computing, communication = _length(compute), _length(comm)
            overlapped = _length(_intersect(compute, comm))
            exposed = communication - overlapped
            bubble = _length(receive)
            exposed_no_receive = _length(_subtract(_subtract(comm, compute), receive))
            e2e = last - first
            preparing = first - step_start[step] if step in step_start else 0.0
            rows.append([device, step, _us(computing), _us(exposed), _us(overlapped), _us(communication),
                         _us(max(e2e - computing - exposed, 0.0)), _us(e2e - bubble), _us(bubble),
                         _us(exposed_no_receive), _us(preparing)])
        return rows

    def memory_record_rows(self) -> list[list[Any]]:
        """memory_record.csv: the allocator's totals after every allocation and free."""
        return [["PTA", f"{_us(float(e['ts']) + self.base_us)}\t", _mb(e["args"]["Total Allocated"]),
                 _mb(e["args"]["Total Reserved"]), _mb(e["args"]["Total Allocated"]), "N/A",
                 f"NPU:{e['args'].get('Device Id', 0)}"] for e in self.memory]

    def operator_memory_rows(self) -> list[list[Any]]:
        """operator_memory.csv: each block, the op that allocated it, and when it was freed."""
        open_blocks: dict[int, dict[str, Any]] = {}
        rows = []
        for e in self.memory:
            args = e["args"]
            if args["Bytes"] > 0:
                open_blocks[args["Addr"]] = e
                continue
            alloc = open_blocks.pop(args["Addr"], None)
            if alloc is not None:
                rows.append(self._memory_row(alloc, e))
        rows.extend(self._memory_row(alloc, None) for alloc in open_blocks.values())
        return sorted(rows, key=lambda r: float(r[2].strip()))

    def _memory_row(self, alloc: dict[str, Any], free: dict[str, Any] | None) -> list[Any]:
        a = alloc["args"]
        op = self._innermost_op_at(float(alloc["ts"]), alloc.get("pid"), alloc.get("tid"))
        alloc_us = float(alloc["ts"]) + self.base_us
        free_us = float(free["ts"]) + self.base_us if free is not None else None
        release = [f"{_us(free_us)}\t", f"{_us(free_us)}\t", _us(free_us - alloc_us), _us(free_us - alloc_us)] \
            if free_us is not None else ["", "", "", ""]
        freed = [_mb(free["args"]["Total Allocated"]), _mb(free["args"]["Total Reserved"]),
                 _mb(free["args"]["Total Allocated"])] if free is not None else ["", "", ""]
        return [op.event["name"] if op is not None else "", round(a["Bytes"] / 1024.0, 3), f"{_us(alloc_us)}\t",
                *release, _mb(a["Total Allocated"]), _mb(a["Total Reserved"]), _mb(a["Total Allocated"]), *freed,
                "N/A", f"NPU:{a.get('Device Id', 0)}"]


def _busy(tasks: list[dict[str, Any]], ai_core_only: bool = False) -> float:
    return sum(float(t.get("dur", 0)) for t in tasks
               if not ai_core_only or t["args"].get("task type") == "AI_CORE")


Intervals = list[tuple[float, float]]


def _merged(tasks: list[dict[str, Any]]) -> Intervals:
    """The union of the tasks' intervals as sorted disjoint intervals (streams may overlap)."""
    out: Intervals = []
    for start, end in sorted((float(t["ts"]), float(t["ts"]) + float(t.get("dur", 0))) for t in tasks):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _length(intervals: Intervals) -> float:
    return sum(end - start for start, end in intervals)


def _intersect(a: Intervals, b: Intervals) -> Intervals:
    out: Intervals = []
    i = j = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _subtract(a: Intervals, b: Intervals) -> Intervals:
    """The parts of `a` outside `b` (both sorted and disjoint)."""
    out: Intervals = []
    for start, end in a:
        for b_start, b_end in b:
            if b_end <= start or b_start >= end:
                continue
            if b_start > start:
                out.append((start, b_start))
            start = max(start, b_end)
        if start < end:
            out.append((start, end))
    return out


def _mb(nbytes: int) -> float:
    return round(nbytes / MB, 6)


def _step_key(step: str) -> int:
    return int(step) if step.isdigit() else -1


def _shape_text(dims: Any) -> str:
    if not dims:
        return ""
    return ";".join(",".join(str(d) for d in shape) if isinstance(shape, list) else str(shape) for shape in dims)


def _list_text(values: Any) -> str:
    return ";".join(str(v) for v in values) if values else ""


def _stack_text(stack: Any) -> str:
    if not stack:
        return ""
    return ";\r\n".join(stack) if isinstance(stack, list) else str(stack)
