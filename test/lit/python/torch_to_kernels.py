# RUN: %PYTHON %s | FileCheck %s
# From torch to kernels: torch-mlir's backend contract in, one matmul + bias + gelu kernel and one
# softmax kernel out (formats on: the ND -> FRACTAL_NZ casts of the matmul operands are in the cube
# kernel, done by its copy-in, not kernels of their own), each with AscendC.

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
from npu_mlir.targets.ascendc import emit as ascendc


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
    run_pipeline(module, PipelineOptions(until="tile"))
    kernels = [op for op in module.body.operations if op.operation.name == "ascend.kernel"]
    # CHECK: matmul_epilogue mix ascend.format_cast ascend.format_cast ascend.matmul ascend.broadcast ascend.binary
    # CHECK: AscendC Nd2NzParams
    # CHECK: reduction aiv ascend.reduce ascend.broadcast ascend.binary ascend.unary ascend.reduce
    # CHECK: AscendC ReduceMax
    for k in kernels:
        names = [op.operation.name for op in k.regions[0].blocks[0].operations if op.operation.name.startswith("ascend.")]
        print(k.attr_str("fusion"), k.attr_str("core_type"), " ".join(names[:7]))
        source = ascendc.emit_kernel(k.operation)
        print("AscendC", "Nd2NzParams" if "Nd2NzParams" in source else "ReduceMax" if "ReduceMax" in source else "")
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    # CHECK: launches 2
    print("launches", sum(op.operation.name == "ascend.launch" for op in main.regions[0].blocks[0].operations))
