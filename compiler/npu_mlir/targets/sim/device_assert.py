"""A failed device-side assertion ends the kernel with a status, not the user's process.

torch-mlir guards a gather's indices with cf.assert ("index must be smaller than dim size");
convert-cf-to-llvm lowers a failed one to a printed message and abort(), which killed the process
that launched the kernel (torch.gather with an index out of range: SIGABRT). After lowering to LLVM,
each abort in the kernel body becomes a store of 1 into the module's status word and a return from
the body, before the access the assertion guards; the ABI wrapper returns that word, read and
cleared (abi.wrapper_text), and the runtime fails the launch with it, raised with its ERR code at
the next synchronization, as a CUDA device-side assert is. The message is still printed.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import llvm

from npu_mlir.targets.sim.abi import STATUS_GLOBAL, STATUS_SYMBOL


def _returns_void(func: ir.Operation) -> bool:
    return str(ir.TypeAttr(func.attributes["function_type"]).value).startswith("!llvm.func<void")


def return_on_failed_asserts(module: ir.Module | ir.Operation, body_symbol: str | None) -> bool:
    """Rewrite every `call @abort` of the body function (of every void llvm.func when
    `body_symbol` is None); True if there was one (the module then holds the status word the
    wrapper reads)."""
    body = module.operation.regions[0].blocks[0]
    aborts = []
    for func in body.operations:
        func = func.operation
        if func.name != "llvm.func" or (body_symbol is not None and
                                         ir.StringAttr(func.attributes["sym_name"]).value != body_symbol):
            continue
        if not _returns_void(func):
            if body_symbol is None:
                continue
            return False
        for block in func.regions[0].blocks:
            ops = [op.operation for op in block.operations]
            for op, following in zip(ops, ops[1:] + [None]):
                if op.name == "llvm.call" and "callee" in op.attributes and \
                        ir.FlatSymbolRefAttr(op.attributes["callee"]).value == "abort":
                    aborts.append((op, following))
    if not aborts:
        return False
    i32, ptr = ir.IntegerType.get_signless(32), ir.Type.parse("!llvm.ptr")
    for call, following in aborts:
        if following is not None and following.name == "llvm.unreachable":
            following.erase()
        with ir.InsertionPoint(call), call.location:
            address = llvm.AddressOfOp(ptr, STATUS_SYMBOL)
            one = llvm.ConstantOp(i32, ir.IntegerAttr.get(i32, 1))
            llvm.StoreOp(one.result, address.result)
            llvm.ReturnOp()
        call.erase()
    holder = ir.Module.parse(STATUS_GLOBAL)  # kept alive while its op moves into `module`
    body.append(list(holder.body.operations)[0])
    return True


def run(module: ir.Operation, *, function: str = "") -> bool:
    """The registered pass (sim-device-assert): `return_on_failed_asserts` on the LLVM-dialect
    function `function`, or on every void llvm.func of `module` when it is empty."""
    return_on_failed_asserts(module, function or None)
    return True
