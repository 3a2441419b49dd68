"""Run every bench/bench_*.py in its own interpreter and print what each reports.

Usage: python bench/run.py [name-substring ...]   (no argument: all benchmarks)

Each benchmark prints its own numbers against a peer measured in the same run; this
harness only runs them one after another (never in parallel: they time the machine)
and exits non-zero if any of them failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
TIMEOUT_S = 1800


def selected(filters: list[str]) -> list[Path]:
    scripts = sorted(BENCH_DIR.glob("bench_*.py"))
    return [s for s in scripts if not filters or any(f in s.stem for f in filters)]


def run(script: Path) -> bool:
    print(f"=== {script.stem} " + "=" * max(0, 60 - len(script.stem)), flush=True)
    start = time.perf_counter()
    try:
        result = subprocess.run([sys.executable, str(script)], timeout=TIMEOUT_S)
        ok = result.returncode == 0
        status = "ok" if ok else f"FAILED (exit code {result.returncode})"
    except subprocess.TimeoutExpired:
        ok, status = False, f"FAILED (timed out after {TIMEOUT_S} s)"
    print(f"--- {script.stem}: {status} in {time.perf_counter() - start:.1f} s\n", flush=True)
    return ok


def main(argv: list[str]) -> int:
    scripts = selected(argv)
    if not scripts:
        print(f"no bench_*.py in {BENCH_DIR} matches {argv}", file=sys.stderr)
        return 2
    failed = [s.stem for s in scripts if not run(s)]
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
