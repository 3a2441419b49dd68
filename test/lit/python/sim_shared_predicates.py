# RUN: %PYTHON %s | FileCheck %s
# A boolean mask read by two consumers (transposed by a matmul, row-wise by a select) is cloned
# into each consumer instead of being stored as a memref of i1, whose vector stores pack bits.

import torch
from torch_mlir import ir

from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.targets.sim import lowering as sim_lowering
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host


def masked_backward(p, mask, g):
    dv = torch.matmul(torch.where(mask, p, 0.0).transpose(2, 3), g)
    return dv, torch.where(mask, g.sum(-1, keepdim=True), 0.0)


torch.manual_seed(0)
inputs = [torch.rand(1, 2, 4, 8), torch.rand(1, 2, 4, 8) < 0.5, torch.randn(1, 2, 4, 8)]
graph = import_fx_graph(masked_backward, inputs)

with ir.Context(), ir.Location.unknown():
    module = ir.Module.parse(str(graph.module))
    sim_lowering.prepare(module)
    # CHECK-LABEL: after prepare
    # CHECK-NOT: tensor.empty() : tensor<{{.*}}xi1>
    # CHECK: return
    print("after prepare")
    print(module)

kernel = compile_linalg(graph.module, SimTiling(2), name="masked_backward")
got = run_on_host(kernel, inputs)
want = masked_backward(*inputs)
# CHECK: dv matches True
# CHECK: masked sum matches True
print("dv matches", torch.allclose(got[0], want[0], atol=1e-5))
print("masked sum matches", torch.allclose(got[1], want[1], atol=1e-5))
