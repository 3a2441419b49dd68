# RUN: %PYTHON %s | FileCheck %s
# softmax(s) @ v: the normalizing division is not fused into the matmul (it would run once per
# output column); a cheap select still is. No fence call survives prepare.

import torch
from torch_mlir import ir

from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.targets.sim import lowering as sim_lowering
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host


def probs_times_values(s, keep, v):
    e = torch.exp(s - s.amax(-1, keepdim=True))
    probs = e / e.sum(-1, keepdim=True)
    return torch.matmul(probs, v), torch.matmul(torch.where(keep, s, 0.0), v)


def bodies(module: ir.Module) -> list[str]:
    found = []

    def visit(op):
        if op.name == "linalg.generic":
            found.append(" ".join(o.operation.name for o in op.regions[0].blocks[0].operations))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


torch.manual_seed(0)
inputs = [torch.randn(2, 8, 16), torch.rand(2, 8, 16) < 0.5, torch.randn(2, 16, 4)]
graph = import_fx_graph(probs_times_values, inputs)
with ir.Context(), ir.Location.unknown():
    module = ir.Module.parse(str(graph.module))
    sim_lowering.prepare(module)
    # CHECK: fences left False
    print("fences left", "fusion_fence" in str(module))
    # CHECK-DAG: body arith.divf linalg.yield
    # CHECK-DAG: body arith.mulf arith.addf linalg.yield
    # CHECK-DAG: body arith.select arith.mulf arith.addf linalg.yield
    for body in bodies(module):
        print("body", body)

kernel = compile_linalg(graph.module, SimTiling(2), name="probs_times_values")
got = run_on_host(kernel, inputs)
want = probs_times_values(*inputs)
# CHECK: matches True True
print("matches", *(torch.allclose(g, w, atol=1e-5) for g, w in zip(got, want)))
