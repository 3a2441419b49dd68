# RUN: %PYTHON %s | FileCheck %s
# From torch to kernels: torch-mlir's backend contract in, one matmul + bias + gelu kernel and one
# softmax kernel out.

import torch
import torch.nn.functional as F
from torch_mlir import fx, ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.pipeline import PipelineOptions, run_pipeline


class Block(torch.nn.Module):
    def forward(self, x, w, b):
        return torch.softmax(F.gelu(F.linear(x, w, b)), dim=-1)


torch_ir = fx.export_and_import(Block(), torch.randn(4, 8), torch.randn(16, 8), torch.randn(16),
                                output_type="torch")
with ir.Context() as ctx, ir.Location.unknown():
    import torch_mlir.dialects.torch as torch_dialect

    torch_dialect.register_dialect(ctx)
    load_ascend(ctx)
    module = ir.Module.parse(str(torch_ir))
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
