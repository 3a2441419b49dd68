"""TORCH_NPU_COMPILE_DUMP: each stage's file of a compiled graph, given to npu-opt with the passes its
successor's first line names, reproduces that successor byte for byte; the kernels stage shows the
fused kernel and the format casts of its cube operands."""

import os
import subprocess
import sys
from pathlib import Path

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from npu_mlir.frontend import fx_graph

NPU_OPT = Path(sys.executable).with_name("npu-opt")
HEADER = "// after: "


def _graph(x, w, b):
    y = torch.relu(torch.addmm(b, x, w))
    return (torch.exp(y * 0.5) + y,)


def test_npu_opt_on_each_dumped_stage_reproduces_the_next(tmp_path, monkeypatch):
    examples = [torch.randn(16, 32), torch.randn(32, 16), torch.randn(16)]
    gm = make_fx(_graph)(*examples)
    meta = [(str(e.dtype).removeprefix("torch."), list(e.shape), list(e.stride())) for e in examples]
    monkeypatch.setenv(fx_graph.DUMP_ENV, str(tmp_path / "dump"))
    request = {"graph": fx_graph.describe(gm, meta, [n.name for n in gm.graph.output_node().args[0]]),
               "name": "graph", "cache_dir": str(tmp_path)}
    fx_graph.build(request)
    stages = sorted((tmp_path / "dump").glob("graph.[0-9]-*.mlir"))
    assert [p.name.split(".")[1] for p in stages] == ["0-linalg", "1-linalg", "2-ascend", "3-kernels", "4-tile"]
    for before, after in zip(stages, stages[1:]):
        header, expected = after.read_text().split("\n", 1)
        assert header.startswith(HEADER), after.name
        out = subprocess.run([str(NPU_OPT), f"--pass-pipeline={header[len(HEADER):]}", str(before)],
                             capture_output=True, text=True, timeout=300, env=dict(os.environ))
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout == expected, f"npu-opt on {before.name} differs from {after.name}"
    assert list((tmp_path / "dump").glob("graph.*.ascendc.cpp")) and (tmp_path / "dump" / "graph.fx.py").exists()
    # the kernels stage: one matmul_epilogue kernel (addmm, relu, mul, exp, add) whose two cube operands
    # are cast ND -> FRACTAL_NZ inside it, one launch
    kernels = stages[3].read_text()
    assert kernels.count('"ascend.kernel"') == 1 and 'fusion = "matmul_epilogue"' in kernels
    assert kernels.count('"ascend.launch"') == 1
    casts = [line for line in kernels.splitlines() if '"ascend.format_cast"(%arg' in line]
    assert len(casts) == 2 and all('#ascend.format<"FRACTAL_NZ">' in line for line in casts), casts
