"""A strict check of the chrome-trace (JSON) format that Perfetto and TensorBoard read.

The perfetto package's trace processor downloads its binary at first use, which fails
offline, so the tests check the format's rules directly: every event has a known phase
and numeric timestamps, complete events a non-negative duration, flow ids fit a double
exactly (< 2**53) and every flow start has exactly one end, bound to an event that
covers it on its lane.
"""

from __future__ import annotations

import gzip
import json
from numbers import Real
from pathlib import Path
from typing import Any

PHASES = frozenset("XBEiIsftfMCbenPOND") | {"(", ")"}
MAX_FLOW_ID = 2**53


def load(path: str | Path) -> Any:
    """A trace file as JSON: object form ({"traceEvents": [...]}) or array form, .gz accepted."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def events_of(trace: Any) -> list[dict[str, Any]]:
    if isinstance(trace, list):
        return trace
    assert isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), "no traceEvents array"
    return trace["traceEvents"]


def check(trace: Any) -> list[dict[str, Any]]:
    """Assert the trace is well formed; return its events."""
    events = events_of(trace)
    starts: dict[Any, dict[str, Any]] = {}
    ends: dict[Any, dict[str, Any]] = {}
    complete_by_lane: dict[tuple[Any, Any], list[tuple[float, float]]] = {}
    for e in events:
        assert isinstance(e, dict), e
        ph = e.get("ph")
        assert ph in PHASES, f"unknown phase {ph!r}: {e}"
        assert isinstance(e.get("name", ""), str), e
        if ph != "M":
            assert isinstance(e.get("ts"), Real) and not isinstance(e.get("ts"), bool), f"non-numeric ts: {e}"
        if ph == "X":
            assert isinstance(e.get("dur"), Real) and e["dur"] >= 0, f"bad dur: {e}"
            complete_by_lane.setdefault((e.get("pid"), e.get("tid")), []).append((e["ts"], e["ts"] + e["dur"]))
        if ph in ("X", "i", "I", "s", "f"):
            assert "pid" in e and "tid" in e, f"event without pid/tid: {e}"
        if "args" in e:
            assert isinstance(e["args"], dict), e
        if ph in ("s", "f"):
            fid = e.get("id")
            assert isinstance(fid, int) and 0 < fid < MAX_FLOW_ID, f"flow id not exact in a double: {e}"
            side = starts if ph == "s" else ends
            assert (e.get("cat"), fid) not in side, f"duplicate flow {ph} id {fid}"
            side[(e.get("cat"), fid)] = e
        if ph == "M":
            assert e.get("name") in {"process_name", "process_labels", "process_sort_index", "thread_name",
                                     "thread_sort_index"}, e
            assert isinstance(e.get("args"), dict), e
    assert set(starts) == set(ends), f"unmatched flows: {set(starts) ^ set(ends)}"
    for key, flow_end in ends.items():
        lane = complete_by_lane.get((flow_end["pid"], flow_end["tid"]), [])
        assert any(s <= flow_end["ts"] <= t for s, t in lane), f"flow end binds to no event: {flow_end}"
        flow_start = starts[key]
        lane = complete_by_lane.get((flow_start["pid"], flow_start["tid"]), [])
        assert any(s <= flow_start["ts"] <= t for s, t in lane), f"flow start binds to no event: {flow_start}"
    return events
