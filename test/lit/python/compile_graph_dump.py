# torch.compile's dump (TORCH_NPU_COMPILE_DUMP): a small graph compiled whole writes its IR after each
# stage; after "kernels", the matmul carries the whole elementwise tail (bias add, relu, mul, exp, add)
# as its epilogue: one kernel, one launch for six aten ops.
# RUN: rm -rf %t && env TORCH_NPU_COMPILE_DUMP=%t %PYTHON %s && FileCheck %s < %t/graph.3-kernels.mlir
# RUN: FileCheck %s --check-prefix=TILED < %t/graph.4-tile.mlir
# RUN: ls %t | FileCheck %s --check-prefix=FILES
# npu-opt on the dumped kernels stage reproduces the tile stage:
# RUN: npu-opt --pass-pipeline='builtin.module(ascend-verify-host, ascend-tile, ascend-plan-memory)' %t/graph.3-kernels.mlir | FileCheck %s --check-prefix=RETILED
import tempfile

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from npu_mlir.frontend import fx_graph


def f(x, w, b):
    y = torch.relu(torch.addmm(b, x, w))
    return (torch.exp(y * 0.5) + y,)


examples = [torch.randn(16, 32), torch.randn(32, 16), torch.randn(16)]
gm = make_fx(f)(*examples)
outputs = [n.name for n in gm.graph.output_node().args[0]]
meta = [(str(e.dtype).removeprefix("torch."), list(e.shape), list(e.stride())) for e in examples]
with tempfile.TemporaryDirectory() as cache:
    record = fx_graph.build({"graph": fx_graph.describe(gm, meta, outputs), "name": "graph", "cache_dir": cache})
assert len(record["launches"]) == len([s for s in record["sources"]])

# CHECK: // after: builtin.module(ascend-fuse
# CHECK: "ascend.kernel"
# CHECK: "ascend.matmul"
# CHECK: "ascend.unary"
# CHECK: "ascend.unary"
# CHECK: fusion = "matmul_epilogue"
# CHECK-NOT: "ascend.kernel"
# CHECK: "ascend.launch"
# CHECK-NOT: "ascend.launch"
# TILED: // after: builtin.module(ascend-verify-host, ascend-tile, ascend-plan-memory)
# TILED: tiling
# RETILED: "ascend.kernel"
# RETILED: tiling
# FILES: graph.0-linalg.mlir
# FILES: graph.3-kernels.mlir
# FILES: graph.4-tile.mlir
# FILES: graph.fx.py
# FILES: graph.{{.*}}.ascendc.cpp
# FILES: graph.{{.*}}.tiled.mlir
