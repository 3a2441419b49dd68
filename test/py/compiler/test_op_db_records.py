"""Issue #9's first proof over op_db: every kernel an op_db float32 run compiles came out of ascend-tile
(its stored tiled MLIR carries the tiling record) and carries AscendC + ACL source.

A representative subset of op_db (one or two ops per kernel kind: elementwise, broadcast, row and
column reductions, value+index reductions, scans, gathers, concatenation, matmul with a bias,
convolution, norms and their backward) runs as test_op_db runs it (op_db_parity.check_dtype,
float32 forward + backward, on npu against the CPU; each op's first sample only) in a fresh
process with a private kernel cache; the test then reads every record that run stored. The whole
op_db suite's figure is bench_kernels --ascendc's printout over a cache the full run filled.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EAGER_TESTS = Path(__file__).resolve().parents[1] / "eager"
OPS = ("add", "sum", "softmax", "nn.functional.layer_norm", "max.reduction_with_dim", "cumsum",
       "gather", "cat", "nn.functional.linear", "nn.functional.conv2d")

CHILD = r"""
import json, sys
import torch
from torch.testing._internal.common_methods_invocations import op_db
import op_db_parity
from op_db_parity import check_dtype, op_id
op_db_parity.SAMPLES = 1  # each op's first sample: its kernel kinds, at a third of the compiles
wanted = set(sys.argv[1:])
failed = {}
for info in op_db:
    if op_id(info) in wanted and torch.float32 in info.supported_dtypes("cpu"):
        wanted.discard(op_id(info))
        try:
            check_dtype(info, torch.float32)
        except Exception as err:
            failed[op_id(info)] = f"{type(err).__name__}: {err}"[:300]
fallbacks = {op: row["fallback"] for op, row in torch.npu.eager_stats().items() if row["fallback"]}
print(json.dumps({"missing": sorted(wanted), "failed": failed, "fallbacks": fallbacks}))
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[dict, list[dict]]:
    cache = tmp_path_factory.mktemp("op_db_cache")
    env = dict(os.environ, TORCH_NPU_KERNEL_CACHE=str(cache),
               PYTHONPATH=os.pathsep.join([str(EAGER_TESTS), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CHILD, *OPS], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    sources = []
    for entry in cache.rglob("entry-*.json"):
        meta = json.loads(entry.read_text())
        if "kernel" in meta:  # else a marker saying which argument values key the call's entries
            record = json.loads(meta["kernel"]) if isinstance(meta["kernel"], str) else meta["kernel"]
            sources += [dict(s, path=record.get("path")) for s in record.get("sources", [])] or [record]
    return outcome, sources


def test_the_subset_runs_natively(run):
    outcome, _ = run
    assert outcome["missing"] == [] and outcome["failed"] == {} and outcome["fallbacks"] == {}, outcome


def test_every_kernel_record_is_tiled_and_has_ascendc_and_acl(run):
    _, sources = run
    assert len(sources) >= 2 * len(OPS)  # forward and backward kernels of every op
    for source in sources:
        assert source.get("path") == "pipeline", source.get("rejected", source)
        name = source["kernel"]
        assert re.search(r"tiling = \{\w", source["tiled_mlir"]), f"@{name} has no tiling record"
        assert source.get("ascendc") and source.get("acl"), f"@{name}: {source.get('ascendc_error')}"
        assert f"void {name}(" in source["ascendc"] and "aclrtLaunchKernel" in source["acl"]
