"""Lower one `ascend.kernel` back to a linalg-on-tensors function for the simulated device.

The sim target runs the same fused kernels the emitters see, so it needs the kernel body in
upstream ops. Each ascend tensor op becomes one linalg op (elementwise kinds as linalg.generic
bodies; reduce, broadcast, matmul, conv as structured ops), emitted as text and parsed once.

Formats: inside the function every value is its *logical* ND tensor, so `format_cast` is free. A
kernel argument or result in a physical format (FRACTAL_NZ, NC1HWC0, FRACTAL_Z) crosses the
function boundary in its storage shape (formats.storage_shape): unpacked on entry, packed (zero
padded) on exit - exactly the device-memory layout that DESIGN.md section 4 fixes.
"""

from __future__ import annotations

import math

from torch_mlir import ir

from npu_mlir.dialects.ascend.formats import storage_shape
from npu_mlir.dialects.ascend.shaped import tensor_format
from npu_mlir.passes.lower_kernel_to_linalg_ops import KernelLoweringError, OpEmitter, elem_type, tensor_type


def _layout(fmt: str, shape: list[int], c0: int):
    """(padded logical shape, expanded shape + reassociation, permutation, collapse reassociation)."""
    up = lambda n, m: math.ceil(n / m) * m
    if fmt == "FRACTAL_NZ":
        *batch, m, n = shape
        nb = len(batch)
        padded = [*batch, up(m, 16), up(n, c0)]
        expanded = [*batch, up(m, 16) // 16, 16, up(n, c0) // c0, c0]
        expand_re = [[i] for i in range(nb)] + [[nb, nb + 1], [nb + 2, nb + 3]]
        perm = list(range(nb)) + [nb + 2, nb, nb + 1, nb + 3]
        collapse_re = [[i] for i in range(nb + 4)]
    elif fmt == "NC1HWC0":
        n, c, h, w = shape
        padded = [n, up(c, 16), h, w]
        expanded = [n, up(c, 16) // 16, 16, h, w]
        expand_re, perm, collapse_re = [[0], [1, 2], [3], [4]], [0, 1, 3, 4, 2], [[0], [1], [2], [3], [4]]
    elif fmt == "FRACTAL_Z":
        co, ci, kh, kw = shape
        padded = [up(co, 16), up(ci, 16), kh, kw]
        expanded = [up(co, 16) // 16, 16, up(ci, 16) // 16, 16, kh, kw]
        expand_re, perm, collapse_re = [[0, 1], [2, 3], [4], [5]], [2, 4, 5, 0, 1, 3], [[0, 1, 2], [3], [4], [5]]
    else:
        raise KernelLoweringError(f"ERR03007 GRAPH format {fmt} has no sim lowering; cast it to ND first")
    return padded, expanded, expand_re, perm, collapse_re


def _re(groups: list[list[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def emit(self, text: str) -> None:
        self.lines.append(text)


def _pack(w: _Writer, src: str, fmt: str, shape: list[int], elt: str) -> tuple[str, str]:
    """Logical ND tensor -> storage-shaped tensor; returns (value, type)."""
    c0 = 32 if elt in ("i8", "ui8") else 16
    padded, expanded, expand_re, perm, collapse_re = _layout(fmt, shape, c0)
    cur, cur_t = src, tensor_type(shape, elt)
    if padded != shape:
        pad, zero = w.fresh(), w.fresh()
        w.emit(f"{zero} = arith.constant {'0.0' if elt.startswith(('f', 'bf')) else '0'} : {elt}")
        highs = ", ".join(str(p - s) for p, s in zip(padded, shape))
        idx = ", ".join(f"%i{k}: index" for k in range(len(shape)))
        w.emit(f"{pad} = tensor.pad {cur} low[{', '.join('0' * len(shape))}] high[{highs}] {{\n"
               f"^bb0({idx}):\n  tensor.yield {zero} : {elt}\n}} : {cur_t} to {tensor_type(padded, elt)}")
        cur, cur_t = pad, tensor_type(padded, elt)
    exp = w.fresh()
    exp_t = tensor_type(expanded, elt)
    w.emit(f"{exp} = tensor.expand_shape {cur} {_re(expand_re)} output_shape {expanded} : {cur_t} into {exp_t}")
    permuted = [expanded[p] for p in perm]
    empty, tr = w.fresh(), w.fresh()
    w.emit(f"{empty} = tensor.empty() : {tensor_type(permuted, elt)}")
    w.emit(f"{tr} = linalg.transpose ins({exp} : {exp_t}) outs({empty} : {tensor_type(permuted, elt)}) "
           f"permutation = {perm}")
    phys = storage_shape(fmt, shape, 8 if c0 == 32 else 16)
    if len(collapse_re) == len(permuted):
        return tr, tensor_type(permuted, elt)
    col = w.fresh()
    w.emit(f"{col} = tensor.collapse_shape {tr} {_re(collapse_re)} : {tensor_type(permuted, elt)} "
           f"into {tensor_type(phys, elt)}")
    return col, tensor_type(phys, elt)


def _unpack(w: _Writer, src: str, fmt: str, shape: list[int], elt: str) -> str:
    """Storage-shaped tensor -> logical ND tensor."""
    c0 = 32 if elt in ("i8", "ui8") else 16
    padded, expanded, expand_re, perm, collapse_re = _layout(fmt, shape, c0)
    permuted = [expanded[p] for p in perm]
    cur, cur_t = src, tensor_type(storage_shape(fmt, shape, 8 if c0 == 32 else 16), elt)
    if len(collapse_re) != len(permuted):
        exp = w.fresh()
        w.emit(f"{exp} = tensor.expand_shape {cur} {_re(collapse_re)} output_shape {permuted} : {cur_t} "
               f"into {tensor_type(permuted, elt)}")
        cur = exp
    cur_t = tensor_type(permuted, elt)
    inverse = [perm.index(i) for i in range(len(perm))]
    empty, tr = w.fresh(), w.fresh()
    w.emit(f"{empty} = tensor.empty() : {tensor_type(expanded, elt)}")
    w.emit(f"{tr} = linalg.transpose ins({cur} : {cur_t}) outs({empty} : {tensor_type(expanded, elt)}) "
           f"permutation = {inverse}")
    col = w.fresh()
    w.emit(f"{col} = tensor.collapse_shape {tr} {_re(expand_re)} : {tensor_type(expanded, elt)} "
           f"into {tensor_type(padded, elt)}")
    if padded == shape:
        return col
    sl = w.fresh()
    w.emit(f"{sl} = tensor.extract_slice {col}[{', '.join('0' * len(shape))}] [{', '.join(map(str, shape))}] "
           f"[{', '.join('1' * len(shape))}] : {tensor_type(padded, elt)} to {tensor_type(shape, elt)}")
    return sl


def boundary_type(t: ir.Type) -> str:
    """The function-boundary (storage) type of a kernel argument or result."""
    rt = ir.RankedTensorType(t)
    fmt, elt = tensor_format(rt), elem_type(rt)
    if fmt in ("ND", "NCHW", "NHWC", "NCDHW"):
        return tensor_type(list(rt.shape), elt)
    return tensor_type(storage_shape(fmt, list(rt.shape), 8 if elt in ("i8", "ui8") else 16), elt)


def opaque_to_func(kernel: ir.Operation, func_name: str) -> str:
    """A kernel whose body is upstream ops already (an `opaque` kernel, a tile-level program): the
    same ops in a func.func."""
    from torch_mlir.dialects import func

    block = kernel.regions[0].blocks[0]
    ftype = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
    with kernel.context, kernel.location:
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp(func_name, ftype)
        entry = f.add_entry_block()
        mapping = dict(zip(block.arguments, entry.arguments))
        with ir.InsertionPoint(entry):
            for op in block.operations:
                op = op.operation
                if op.name == "ascend.yield":
                    func.ReturnOp([mapping[v] for v in op.operands])
                    continue
                clone = op.clone()
                for inner in [clone, *_nested(clone)]:
                    for i, v in enumerate(inner.operands):
                        if v in mapping:
                            inner.operands[i] = mapping[v]
                mapping.update(zip(op.results, clone.results))
        return str(module.body.operations[0])


def _nested(op: ir.Operation) -> list[ir.Operation]:
    out = []
    for region in op.regions:
        for b in region.blocks:
            for inner in b.operations:
                out += [inner.operation, *_nested(inner.operation)]
    return out


def kernel_to_linalg(kernel: ir.Operation, func_name: str = "main") -> str:
    """Text of a module holding `func.func @<func_name>` equivalent to `kernel`."""
    if ir.StringAttr(kernel.attributes["fusion"]).value == "opaque":
        return opaque_to_func(kernel, func_name)
    block = kernel.regions[0].blocks[0]
    w = _Writer()
    emitter = OpEmitter(w)
    params = []
    for i, arg in enumerate(block.arguments):
        rt = ir.RankedTensorType(arg.type)
        params.append(f"%arg{i}: {boundary_type(rt)}")
        fmt = tensor_format(rt)
        logical = f"%arg{i}"
        if boundary_type(rt) != tensor_type(list(rt.shape), elem_type(rt)):
            logical = _unpack(w, logical, fmt, list(rt.shape), elem_type(rt))
        emitter.bind(arg, logical)
    results, result_types = [], []
    for op in block.operations:
        if op.name == "ascend.yield":
            for value in op.operands:
                rt = ir.RankedTensorType(value.type)
                name = emitter.name(value)
                if boundary_type(rt) != tensor_type(list(rt.shape), elem_type(rt)):
                    name, _ = _pack(w, name, tensor_format(rt), list(rt.shape), elem_type(rt))
                results.append(name)
                result_types.append(boundary_type(rt))
            continue
        emitter.lower(op)
    body = "\n".join(w.lines)
    return (f"func.func @{func_name}({', '.join(params)}) -> ({', '.join(result_types)}) {{\n{body}\n"
            f"return {', '.join(results)} : {', '.join(result_types)}\n}}")

