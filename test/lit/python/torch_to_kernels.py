# RUN: %PYTHON %s | FileCheck %s
# From torch to kernels: torch-mlir's backend contract in, one matmul + bias + gelu kernel and one
# softmax kernel out.

import torch
import torch.nn.functional as F
import torch_mlir.dialects.torch as torch_dialect
from torch.fx.experimental.proxy_tensor import make_fx
from torch_mlir import ir
from torch_mlir.extras.fx_decomp_util import get_decomposition_table
from torch_mlir.extras.fx_importer import FxImporter
from torch_mlir.passmanager import PassManager

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.pipeline import PipelineOptions, run_pipeline


def block(x, w, b):
    return torch.softmax(F.gelu(F.linear(x, w, b)), dim=-1)


# make_fx + FxImporter (fx.export_and_import costs seconds), then torch-mlir's own cleanup to
# the backend contract: the torch-dialect input the pipeline's first stage takes.
graph = make_fx(block, decomposition_table=get_decomposition_table())(torch.randn(4, 8), torch.randn(16, 8), torch.randn(16))
with ir.Context() as ctx, ir.Location.unknown():
    torch_dialect.register_dialect(ctx)
    load_ascend(ctx)
    importer = FxImporter(context=ctx)
    importer.import_stateless_graph(graph.graph, func_name="main")
    module = importer.module
    PassManager.parse("builtin.module(torchdynamo-export-to-torch-backend-pipeline{extra-library=})").run(module.operation)
    run_pipeline(module, PipelineOptions(until="kernels"))
    kernels = [op for op in module.body.operations if op.operation.name == "ascend.kernel"]
    # CHECK: matmul_epilogue mix ascend.matmul ascend.broadcast ascend.binary
    # CHECK: reduction aiv ascend.reduce ascend.broadcast ascend.binary ascend.unary ascend.reduce
    for k in kernels:
        names = [op.operation.name for op in k.regions[0].blocks[0].operations if op.operation.name.startswith("ascend.")]
        print(k.attr_str("fusion"), k.attr_str("core_type"), " ".join(names[:5]))
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    # CHECK: launches 2
    print("launches", sum(op.operation.name == "ascend.launch" for op in main.regions[0].blocks[0].operations))
