"""How many of PyTorch's op_db ops run natively on npu: compiled kernels only, results equal to CPU.

    python bench/op_coverage.py [--ops name,...] [--json results.json] [--chunk 25]

Each op is checked by test/py/eager/op_db_parity.py (first samples, float32 forward + backward,
float16/bfloat16 forward where op_db lists them, zero CPU fallback calls). Ops run in chunks, one
subprocess per chunk, so that a crash of the device runtime on one op costs only that op (the rest
of its chunk runs again in a new process). Prints the passing count out of op_db, and the aten ops whose
fallback calls blocked the most op_db ops (what to teach the compiler next).
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "py" / "eager"))


def run_chunk(names: list[str]) -> dict[str, dict]:
    """Check these ops in this process; {op id: {dtype: {passed, reason, fallbacks}}}."""
    from torch.testing._internal.common_methods_invocations import op_db

    from op_db_parity import check, op_id

    wanted = set(names)
    results = {}
    for info in op_db:
        name = op_id(info)
        if name not in wanted:
            continue
        outcomes = check(info)
        results[name] = {str(d).removeprefix("torch."): vars(o) for d, o in outcomes.items()}
        print(json.dumps({name: results[name]}), flush=True)
    return results


def _spawn(names: list[str], timeout: float) -> dict[str, dict]:
    cmd = [sys.executable, __file__, "--child", ",".join(names)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        output, failure = proc.stdout, (f"exit {proc.returncode}" if proc.returncode else "")
    except subprocess.TimeoutExpired as err:
        output, failure = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or ""), "timeout"
    results = {}
    for line in output.splitlines():
        if line.startswith("{"):
            results.update(json.loads(line))
    missing = [n for n in names if n not in results]
    if missing and failure:
        # Ops report in order: the first one without a result is the one the process died in.
        results[missing[0]] = {"float32": {"passed": False, "reason": f"process {failure}", "fallbacks": {}}}
        if missing[1:]:
            results.update(_spawn(missing[1:], timeout))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated op ids (default: all of op_db)")
    parser.add_argument("--json", help="write every outcome here")
    parser.add_argument("--chunk", type=int, default=25)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_chunk(args.child.split(","))
        return 0

    from torch.testing._internal.common_methods_invocations import op_db

    from op_db_parity import op_id

    every = [op_id(info) for info in op_db]
    names = args.ops.split(",") if args.ops else every
    start = time.perf_counter()
    results = {}
    for i in range(0, len(names), args.chunk):
        results.update(_spawn(names[i:i + args.chunk], args.timeout))
        if args.json:  # after every chunk, so a long run can be read (or stopped) midway
            Path(args.json).write_text(json.dumps(results, indent=1, sort_keys=True))
        print(f"[{len(results)}/{len(names)}] {sum(r.get('float32', {}).get('passed', False) for r in results.values())}"
              f" pass, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    passing = sorted(n for n, r in results.items() if r.get("float32", {}).get("passed"))
    blockers = collections.Counter(op for r in results.values() for o in r.values() for op in o["fallbacks"])
    print(f"op_db ops passing natively (float32 forward+backward, zero fallback): {len(passing)} of {len(every)}")
    low = sum(all(o["passed"] for o in r.values()) and len(r) > 1 for r in results.values())
    print(f"  of which also pass every float16/bfloat16 dtype op_db lists: {low}")
    print(f"checked {len(names)} ops in {time.perf_counter() - start:.0f} s")
    print("aten ops whose fallback blocks the most op_db ops:",
          ", ".join(f"{op} ({n})" for op, n in blockers.most_common(25)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
