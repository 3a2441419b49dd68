"""ascend-verify-host: reject a host function that computes (see analysis/host_function.py).

Runs after ascend-fuse: whatever raise-linalg could not turn into ascend ops stays outside every
kernel, where neither the sim nor the AscendC emitter sees it. The error names each such op at
its location, so the gap is visible instead of silently running elsewhere.
"""

from torch_mlir import ir

from ..analysis.host_function import host_compute, host_functions


def run(module: ir.Operation) -> bool:
    ok = True
    for func in host_functions(module):
        name = ir.StringAttr(func.attributes["sym_name"]).value
        for op in host_compute(func):
            op.location.emit_error(f"ERR03007 GRAPH host function @{name} computes with {op.name}; only "
                                   "ascend.launch and reshapes may stay outside kernels")
            ok = False
    return ok
