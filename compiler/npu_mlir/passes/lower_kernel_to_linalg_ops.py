"""Per-op text emitters for lower_kernel_to_linalg: one ascend tensor op -> linalg on tensors.

Elementwise kinds become the scalar body of a linalg.generic over the result shape (a scalar
operand is used directly in the body); reductions, broadcasts and contractions become generics
with the matching indexing maps, conv2d the upstream named op on a padded input.
"""

from __future__ import annotations

import math
from typing import Protocol

from torch_mlir import ir

from npu_mlir.errors import NOT_SUPPORTED, CompilerError


class KernelLoweringError(CompilerError, ValueError):
    """The kernel holds an op the sim lowering does not handle."""

    code = NOT_SUPPORTED


class Writer(Protocol):
    def fresh(self) -> str: ...
    def emit(self, text: str) -> None: ...


def elem_type(t: ir.Type) -> str:
    return str(t.element_type if isinstance(t, ir.ShapedType) else t)


def tensor_type(shape: list[int], elt: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elt}>"


def _is_float(elt: str) -> bool:
    return elt.startswith(("f", "bf"))


def _dims(rank: int) -> str:
    return ", ".join(f"d{i}" for i in range(rank))


def _map(rank: int, results: list[str]) -> str:
    return f"affine_map<({_dims(rank)}) -> ({', '.join(results)})>"


def _float_const(elt: str, value: float) -> str:
    if math.isinf(value):
        bits = {"f32": "0x7F800000", "f16": "0x7C00", "bf16": "0x7F80", "f64": "0x7FF0000000000000"}[elt]
        if value < 0:
            bits = {"f32": "0xFF800000", "f16": "0xFC00", "bf16": "0xFF80", "f64": "0xFFF0000000000000"}[elt]
        return bits
    return repr(float(value))


# Scalar bodies: (operands, element type) -> list of "op text" lines ending in the value %r.
def _unary(kind: str, x: str, elt: str) -> list[str]:
    if not _is_float(elt):
        table = {"abs": [f"%r = math.absi {x} : {elt}"],
                 "neg": [f"%z = arith.constant 0 : {elt}", f"%r = arith.subi %z, {x} : {elt}"],
                 "relu": [f"%z = arith.constant 0 : {elt}", f"%r = arith.maxsi {x}, %z : {elt}"],
                 "not": [f"%m = arith.constant {'true' if elt == 'i1' else '-1'} : {elt}",
                         f"%r = arith.xori {x}, %m : {elt}"]}
        if kind not in table:
            raise KernelLoweringError(f"ERR03007 GRAPH unary {kind} on {elt} has no sim lowering")
        return table[kind]
    one = f"%one = arith.constant 1.0 : {elt}"
    half = f"%half = arith.constant 0.5 : {elt}"
    simple = {"abs": "math.absf", "exp": "math.exp", "log": "math.log", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt",
              "tanh": "math.tanh", "erf": "math.erf", "sin": "math.sin", "cos": "math.cos", "floor": "math.floor",
              "ceil": "math.ceil", "round": "math.roundeven", "neg": "arith.negf",
              **{k: f"math.{k}" for k in ("log2", "log10", "log1p", "expm1", "tan", "sinh", "cosh", "asin", "acos",
                                          "atan", "asinh", "acosh", "atanh")}}
    if kind in simple:
        return [f"%r = {simple[kind]} {x} : {elt}"]
    sigmoid = [one, f"%n = arith.negf {x} : {elt}", f"%e = math.exp %n : {elt}", f"%d = arith.addf %one, %e : {elt}"]
    table = {
        "reciprocal": [one, f"%r = arith.divf %one, {x} : {elt}"],
        "relu": [f"%z = arith.constant 0.0 : {elt}", f"%r = arith.maximumf {x}, %z : {elt}"],
        "sigmoid": sigmoid + [f"%r = arith.divf %one, %d : {elt}"],
        "silu": sigmoid + [f"%r = arith.divf {x}, %d : {elt}"],
        "gelu": [one, half, f"%s = arith.constant {1 / math.sqrt(2)!r} : {elt}", f"%a = arith.mulf {x}, %s : {elt}",
                 f"%e = math.erf %a : {elt}", f"%b = arith.addf %e, %one : {elt}", f"%c = arith.mulf %b, %half : {elt}",
                 f"%r = arith.mulf {x}, %c : {elt}"],
        "gelu_tanh": [one, half, f"%k = arith.constant {math.sqrt(2 / math.pi)!r} : {elt}",
                      f"%q = arith.constant 0.044715 : {elt}", f"%x2 = arith.mulf {x}, {x} : {elt}",
                      f"%x3 = arith.mulf %x2, {x} : {elt}", f"%t = math.fma %x3, %q, {x} : {elt}",
                      f"%u = arith.mulf %t, %k : {elt}", f"%th = math.tanh %u : {elt}",
                      f"%b = arith.addf %th, %one : {elt}", f"%c = arith.mulf %b, %half : {elt}",
                      f"%r = arith.mulf {x}, %c : {elt}"],
    }
    if kind not in table:
        raise KernelLoweringError(f"ERR03007 GRAPH unary {kind} has no sim lowering")
    return table[kind]


def _binary(kind: str, a: str, b: str, elt: str) -> list[str]:
    f = _is_float(elt)
    table = {"add": "arith.addf" if f else "arith.addi", "sub": "arith.subf" if f else "arith.subi",
             "mul": "arith.mulf" if f else "arith.muli", "div": "arith.divf" if f else "arith.divsi",
             "max": "arith.maximumf" if f else "arith.maxsi", "min": "arith.minimumf" if f else "arith.minsi",
             "pow": "math.powf" if f else "math.ipowi", "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori",
             "atan2": "math.atan2", "rem": "arith.remf" if f else "arith.remsi"}
    if kind not in table or (kind in ("and", "or", "xor") and f) or (kind == "atan2" and not f):
        raise KernelLoweringError(f"ERR03007 GRAPH binary {kind} on {elt} has no sim lowering")
    return [f"%r = {table[kind]} {a}, {b} : {elt}"]


def _ternary(kind: str, a: str, b: str, c: str, elt: str) -> list[str]:
    if kind == "fma":
        return _binary("mul", a, b, elt)[0].replace("%r", "%p").split("\n") + _binary("add", "%p", c, elt)
    if kind == "clamp":
        return (_binary("max", a, b, elt)[0].replace("%r", "%p").split("\n") + _binary("min", "%p", c, elt))
    if kind == "lerp":
        return [_binary("sub", b, a, elt)[0].replace("%r", "%p"), _binary("mul", c, "%p", elt)[0].replace("%r", "%q"),
                *_binary("add", a, "%q", elt)]
    raise KernelLoweringError(f"ERR03007 GRAPH ternary {kind} has no sim lowering")


def _cast(x: str, src: str, dst: str) -> list[str]:
    if src == dst:
        raise KernelLoweringError(f"ERR03005 GRAPH cast from {src} to itself")
    fs, fd = _is_float(src), _is_float(dst)
    width = lambda t: 16 if t == "bf16" else int(t.lstrip("fbi") or 1)
    if fs and fd:
        op = "arith.extf" if width(src) < width(dst) or (src, dst) == ("f16", "bf16") else "arith.truncf"
        if {src, dst} == {"f16", "bf16"}:
            return [f"%w = arith.extf {x} : {src} to f32", f"%r = arith.truncf %w : f32 to {dst}"]
        return [f"%r = {op} {x} : {src} to {dst}"]
    if fs and dst == "i1":
        return [f"%z = arith.constant 0.0 : {src}", f"%r = arith.cmpf une, {x}, %z : {src}"]
    if fs:
        return [f"%r = arith.fptosi {x} : {src} to {dst}"]
    if fd:
        return [f"%r = arith.{'uitofp' if src == 'i1' else 'sitofp'} {x} : {src} to {dst}"]
    if dst == "i1":
        return [f"%z = arith.constant 0 : {src}", f"%r = arith.cmpi ne, {x}, %z : {src}"]
    if width(src) < width(dst):
        return [f"%r = arith.{'extui' if src == 'i1' else 'extsi'} {x} : {src} to {dst}"]
    return [f"%r = arith.trunci {x} : {src} to {dst}"]


_CMP_F = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_CMP_I = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}


class OpEmitter:
    """Emits linalg text for ascend tensor ops; tracks the text name of every IR value."""

    def __init__(self, writer: Writer) -> None:
        self.w = writer
        self.names: list[tuple[ir.Value, str]] = []

    def bind(self, value: ir.Value, name: str) -> None:
        self.names.append((value, name))

    def name(self, value: ir.Value) -> str:
        for known, name in self.names:
            if known == value:
                return name
        raise KernelLoweringError(f"ERR03005 GRAPH value {value} used before it was lowered")

    def lower(self, op: ir.Operation) -> None:
        handler = getattr(self, "_" + op.name.replace(".", "_"), None)
        if handler is not None:
            handler(op)
        elif op.name.startswith(("arith.", "math.")) and not any(
                isinstance(v.type, ir.ShapedType) for v in [*op.operands, *op.results]):
            self._scalar(op)
        else:
            raise KernelLoweringError(f"ERR03007 GRAPH {op.name} has no sim lowering")

    def _scalar(self, op: ir.Operation) -> None:
        """Scalar arith/math ops (constants folding into kernels) are copied in generic form."""
        names = [self.w.fresh() for _ in op.results]
        # Iterating the attribute map gives names; indexing by position gives NamedAttributes.
        attrs = ", ".join(f"{a.name} = {a.attr}" for a in (op.attributes[i] for i in range(len(op.attributes))))
        operands = ", ".join(self.name(v) for v in op.operands)
        types = f"({', '.join(str(v.type) for v in op.operands)}) -> ({', '.join(str(r.type) for r in op.results)})"
        self.w.emit(f"{', '.join(names)} = \"{op.name}\"({operands}) {{{attrs}}} : {types}")
        for result, name in zip(op.results, names):
            self.bind(result, name)

    def _attr_str(self, op: ir.Operation, name: str) -> str:
        return ir.StringAttr(op.attributes[name]).value

    def _attr_ints(self, op: ir.Operation, name: str) -> list[int]:
        return list(ir.DenseI64ArrayAttr(op.attributes[name]))

    def _attr_bool(self, op: ir.Operation, name: str) -> bool:
        return name in op.attributes and bool(ir.BoolAttr(op.attributes[name]).value)

    # ---------------------------------------------------------------- scalars and elementwise
    def _arith_constant(self, op: ir.Operation) -> None:
        value = op.results[0]
        if isinstance(value.type, ir.ShapedType):
            raise KernelLoweringError("ERR03007 GRAPH tensor constants inside a kernel have no sim lowering")
        name = self.w.fresh()
        self.w.emit(f"{name} = arith.constant {op.attributes['value']}")
        self.bind(value, name)

    def _tensor_extract(self, op: ir.Operation) -> None:
        """A scalar parameter (0-d kernel argument) read once."""
        name = self.w.fresh()
        self.w.emit(f"{name} = tensor.extract {self.name(op.operands[0])}[] : {op.operands[0].type}")
        self.bind(op.results[0], name)

    def _elementwise(self, op: ir.Operation, body: list[str], out_elt: str | None = None) -> None:
        result = ir.RankedTensorType(op.results[0].type)
        shape, elt = list(result.shape), out_elt or elem_type(result)
        rank = len(shape)
        tensors = [v for v in op.operands if isinstance(v.type, ir.ShapedType)]
        ins_names = [self.name(v) for v in tensors]
        in_types = [tensor_type(list(v.type.shape), elem_type(v.type)) for v in tensors]
        args = [f"%in{i}: {elem_type(v.type)}" for i, v in enumerate(tensors)]
        empty, out = self.w.fresh(), self.w.fresh()
        out_t = tensor_type(shape, elt)
        ident = _map(rank, [f"d{i}" for i in range(rank)])
        maps = ", ".join([ident] * (len(tensors) + 1))
        iters = ", ".join(['"parallel"'] * rank)
        block = "\n".join(body)
        self.w.emit(f"{empty} = tensor.empty() : {out_t}")
        ins = f"ins({', '.join(ins_names)} : {', '.join(in_types)}) " if tensors else ""
        self.w.emit(f"{out} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}} "
                    f"{ins}outs({empty} : {out_t}) {{\n^bb0({', '.join(args + [f'%o: {elt}'])}):\n{block}\n"
                    f"linalg.yield %r : {elt}\n}} -> {out_t}")
        self.bind(op.results[0], out)

    def _operand_refs(self, op: ir.Operation) -> list[str]:
        refs, n = [], 0
        for v in op.operands:
            if isinstance(v.type, ir.ShapedType):
                refs.append(f"%in{n}")
                n += 1
            else:
                refs.append(self.name(v))
        return refs

    def _ascend_unary(self, op: ir.Operation) -> None:
        (x,) = self._operand_refs(op)
        self._elementwise(op, _unary(self._attr_str(op, "kind"), x, elem_type(op.results[0].type)))

    def _ascend_binary(self, op: ir.Operation) -> None:
        a, b = self._operand_refs(op)
        self._elementwise(op, _binary(self._attr_str(op, "kind"), a, b, elem_type(op.results[0].type)))

    def _ascend_ternary(self, op: ir.Operation) -> None:
        a, b, c = self._operand_refs(op)
        self._elementwise(op, _ternary(self._attr_str(op, "kind"), a, b, c, elem_type(op.results[0].type)))

    def _ascend_cast(self, op: ir.Operation) -> None:
        (x,) = self._operand_refs(op)
        self._elementwise(op, _cast(x, elem_type(op.operands[0].type), elem_type(op.results[0].type)))

    def _ascend_compare(self, op: ir.Operation) -> None:
        a, b = self._operand_refs(op)
        elt = elem_type(op.operands[0].type)
        pred = self._attr_str(op, "predicate")
        line = (f"%r = arith.cmpf {_CMP_F[pred]}, {a}, {b} : {elt}" if _is_float(elt)
                else f"%r = arith.cmpi {_CMP_I[pred]}, {a}, {b} : {elt}")
        self._elementwise(op, [line])

    def _ascend_select(self, op: ir.Operation) -> None:
        c, t, f = self._operand_refs(op)
        self._elementwise(op, [f"%r = arith.select {c}, {t}, {f} : {elem_type(op.results[0].type)}"])

    def _ascend_format_cast(self, op: ir.Operation) -> None:
        self.bind(op.results[0], self.name(op.operands[0]))

    # ---------------------------------------------------------------- structured
    def _generic(self, ins: list[tuple[str, str, str]], out_shape: list[int], out_elt: str, init: str,
                 iters: list[str], out_map: str, body: list[str], block_args: list[str],
                 yielded: str = "%r") -> str:
        """ins: (name, type, map); the body computes `yielded`. Returns the result name."""
        out_t = tensor_type(out_shape, out_elt)
        result = self.w.fresh()
        maps = ", ".join([m for _, _, m in ins] + [out_map])
        self.w.emit(f"{result} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
                    f"[{', '.join(f'{chr(34)}{i}{chr(34)}' for i in iters)}]}} "
                    f"ins({', '.join(n for n, _, _ in ins)} : {', '.join(t for _, t, _ in ins)}) "
                    f"outs({init} : {out_t}) {{\n^bb0({', '.join(block_args)}):\n" + "\n".join(body) +
                    f"\nlinalg.yield {yielded} : {out_elt}\n}} -> {out_t}")
        return result

    def _filled(self, shape: list[int], elt: str, value: str) -> str:
        empty, cst, fill = self.w.fresh(), self.w.fresh(), self.w.fresh()
        self.w.emit(f"{empty} = tensor.empty() : {tensor_type(shape, elt)}")
        self.w.emit(f"{cst} = arith.constant {value} : {elt}")
        self.w.emit(f"{fill} = linalg.fill ins({cst} : {elt}) outs({empty} : {tensor_type(shape, elt)}) "
                    f"-> {tensor_type(shape, elt)}")
        return fill

    def _ascend_broadcast(self, op: ir.Operation) -> None:
        src = op.operands[0]
        src_shape, elt = list(src.type.shape), elem_type(src.type)
        res_shape = list(op.results[0].type.shape)
        dims, rank = self._attr_ints(op, "dims"), len(res_shape)
        if len(src_shape) == rank:
            in_map = _map(rank, ["0" if i in dims else f"d{i}" for i in range(rank)])
        else:
            in_map = _map(rank, [f"d{i}" for i in range(rank) if i not in dims])
        empty = self.w.fresh()
        self.w.emit(f"{empty} = tensor.empty() : {tensor_type(res_shape, elt)}")
        out = self._generic([(self.name(src), tensor_type(src_shape, elt), in_map)], res_shape, elt, empty,
                            ["parallel"] * rank, _map(rank, [f"d{i}" for i in range(rank)]), [],
                            [f"%x: {elt}", f"%o: {elt}"], yielded="%x")
        self.bind(op.results[0], out)

    def _ascend_reduce(self, op: ir.Operation) -> None:
        src = op.operands[0]
        shape, elt = list(src.type.shape), elem_type(src.type)
        kind, dims = self._attr_str(op, "kind"), self._attr_ints(op, "dims")
        rank = len(shape)
        kept = [s for i, s in enumerate(shape) if i not in dims]
        f = _is_float(elt)
        identity = {"sum": "0.0" if f else "0", "mean": "0.0", "prod": "1.0" if f else "1",
                    "max": _float_const(elt, -math.inf) if f else str(-(1 << (int(elt[1:]) - 1))),
                    "min": _float_const(elt, math.inf) if f else str((1 << (int(elt[1:]) - 1)) - 1)}[kind]
        combine = {"sum": "add", "mean": "add", "prod": "mul", "max": "max", "min": "min"}[kind]
        init = self._filled(kept, elt, identity)
        out = self._generic([(self.name(src), tensor_type(shape, elt), _map(rank, [f"d{i}" for i in range(rank)]))],
                            kept, elt, init, ["reduction" if i in dims else "parallel" for i in range(rank)],
                            _map(rank, [f"d{i}" for i in range(rank) if i not in dims]),
                            _binary(combine, "%x", "%o", elt), [f"%x: {elt}", f"%o: {elt}"])
        if kind == "mean":
            count = math.prod(shape[d] for d in dims)
            empty = self.w.fresh()
            self.w.emit(f"{empty} = tensor.empty() : {tensor_type(kept, elt)}")
            k = len(kept)
            out = self._generic([(out, tensor_type(kept, elt), _map(k, [f"d{i}" for i in range(k)]))], kept, elt,
                                empty, ["parallel"] * k, _map(k, [f"d{i}" for i in range(k)]),
                                [f"%n = arith.constant {float(count)!r} : {elt}", f"%r = arith.divf %x, %n : {elt}"],
                                [f"%x: {elt}", f"%o: {elt}"])
        result_shape = list(op.results[0].type.shape)
        if result_shape != kept:
            # Each reduced (now size-1) dim joins the kept dim after it; trailing ones the last kept dim.
            groups, pending = [], []
            for i in range(rank):
                pending.append(i)
                if i not in dims:
                    groups.append(pending)
                    pending = []
            if pending and groups:
                groups[-1].extend(pending)
            expanded = self.w.fresh()
            re = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]" if kept else "[]"
            self.w.emit(f"{expanded} = tensor.expand_shape {out} {re} output_shape {result_shape} : "
                        f"{tensor_type(kept, elt)} into {tensor_type(result_shape, elt)}")
            out = expanded
        self.bind(op.results[0], out)

    def _ascend_transpose(self, op: ir.Operation) -> None:
        src = op.operands[0]
        elt, perm = elem_type(src.type), self._attr_ints(op, "permutation")
        res_shape = list(op.results[0].type.shape)
        empty, out = self.w.fresh(), self.w.fresh()
        self.w.emit(f"{empty} = tensor.empty() : {tensor_type(res_shape, elt)}")
        self.w.emit(f"{out} = linalg.transpose ins({self.name(src)} : {tensor_type(list(src.type.shape), elt)}) "
                    f"outs({empty} : {tensor_type(res_shape, elt)}) permutation = {perm}")
        self.bind(op.results[0], out)

    def _contraction(self, op: ir.Operation, batch: int) -> None:
        a, b = op.operands[0], op.operands[1]
        bias = op.operands[2] if len(op.operands) > 2 else None
        acc = str(ir.TypeAttr(op.attributes["acc_type"]).value)
        res_t = ir.RankedTensorType(op.results[0].type)
        res_shape, res_elt = list(res_t.shape), elem_type(res_t)
        bd = [f"d{i}" for i in range(batch)]
        m, n, k = f"d{batch}", f"d{batch + 1}", f"d{batch + 2}"
        rank = batch + 3
        a_map = _map(rank, bd + ([k, m] if self._attr_bool(op, "transpose_a") else [m, k]))
        b_map = _map(rank, bd + ([n, k] if self._attr_bool(op, "transpose_b") else [k, n]))
        a_elt, b_elt = elem_type(a.type), elem_type(b.type)
        body = [line.replace("%r", "%xa") for line in (_cast("%x", a_elt, acc) if a_elt != acc else [])]
        body += [line.replace("%r", "%yb").replace("%w", "%wy") for line in
                 (_cast("%y", b_elt, acc) if b_elt != acc else [])]
        xa = "%xa" if a_elt != acc else "%x"
        yb = "%yb" if b_elt != acc else "%y"
        body += [_binary("mul", xa, yb, acc)[0].replace("%r", "%p"), *_binary("add", "%o", "%p", acc)]
        init = self._filled(res_shape, acc, "0.0" if _is_float(acc) else "0")
        out = self._generic([(self.name(a), tensor_type(list(a.type.shape), a_elt), a_map),
                             (self.name(b), tensor_type(list(b.type.shape), b_elt), b_map)],
                            res_shape, acc, init, ["parallel"] * (batch + 2) + ["reduction"],
                            _map(rank, bd + [m, n]), body, [f"%x: {a_elt}", f"%y: {b_elt}", f"%o: {acc}"])
        r = len(res_shape)
        ident = _map(r, [f"d{i}" for i in range(r)])
        if bias is not None or acc != res_elt:
            ins = [(out, tensor_type(res_shape, acc), ident)]
            args = [f"%x: {acc}"]
            lines = []
            value = "%x"
            if bias is not None:
                ins.append((self.name(bias), tensor_type(list(bias.type.shape), elem_type(bias.type)),
                            _map(r, [f"d{r - 1}"])))
                args.append(f"%b: {elem_type(bias.type)}")
                bval = "%b"
                if elem_type(bias.type) != acc:
                    lines += [ln.replace("%r", "%bb") for ln in _cast("%b", elem_type(bias.type), acc)]
                    bval = "%bb"
                lines.append(_binary("add", "%x", bval, acc)[0].replace("%r", "%s"))
                value = "%s"
            if acc != res_elt:
                lines += _cast(value, acc, res_elt)
                value = "%r"
            empty = self.w.fresh()
            self.w.emit(f"{empty} = tensor.empty() : {tensor_type(res_shape, res_elt)}")
            out = self._generic(ins, res_shape, res_elt, empty, ["parallel"] * r, ident, lines,
                                args + [f"%o: {res_elt}"], yielded=value)
        self.bind(op.results[0], out)

    def _ascend_matmul(self, op: ir.Operation) -> None:
        self._contraction(op, 0)

    def _ascend_batch_matmul(self, op: ir.Operation) -> None:
        self._contraction(op, op.operands[0].type.rank - 2)

    def _ascend_conv2d(self, op: ir.Operation) -> None:
        x, wt = op.operands[0], op.operands[1]
        bias = op.operands[2] if len(op.operands) > 2 else None
        if ir.IntegerAttr(op.attributes["groups"]).value != 1:
            raise KernelLoweringError("ERR03007 GRAPH grouped conv2d has no sim lowering yet")
        (sh, sw), (ph, pw), (dh, dw) = (self._attr_ints(op, n) for n in ("strides", "padding", "dilations"))
        elt = elem_type(x.type)
        xs, ws = list(x.type.shape), list(wt.type.shape)
        res_shape = list(op.results[0].type.shape)
        src, src_t = self.name(x), tensor_type(xs, elt)
        if ph or pw:
            padded = [xs[0], xs[1], xs[2] + 2 * ph, xs[3] + 2 * pw]
            pad, zero = self.w.fresh(), self.w.fresh()
            self.w.emit(f"{zero} = arith.constant 0.0 : {elt}")
            self.w.emit(f"{pad} = tensor.pad {src} low[0, 0, {ph}, {pw}] high[0, 0, {ph}, {pw}] {{\n"
                        f"^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n  tensor.yield {zero} : {elt}\n}} "
                        f": {src_t} to {tensor_type(padded, elt)}")
            src, src_t = pad, tensor_type(padded, elt)
        init = self._filled(res_shape, elt, "0.0")
        out = self.w.fresh()
        self.w.emit(f"{out} = linalg.conv_2d_nchw_fchw {{dilations = dense<[{dh}, {dw}]> : tensor<2xi64>, "
                    f"strides = dense<[{sh}, {sw}]> : tensor<2xi64>}} ins({src}, {self.name(wt)} : {src_t}, "
                    f"{tensor_type(ws, elem_type(wt.type))}) outs({init} : {tensor_type(res_shape, elt)}) "
                    f"-> {tensor_type(res_shape, elt)}")
        if bias is not None:
            empty = self.w.fresh()
            self.w.emit(f"{empty} = tensor.empty() : {tensor_type(res_shape, elt)}")
            out = self._generic([(out, tensor_type(res_shape, elt), _map(4, ["d0", "d1", "d2", "d3"])),
                                 (self.name(bias), tensor_type([ws[0]], elt), _map(4, ["d1"]))],
                                res_shape, elt, empty, ["parallel"] * 4, _map(4, ["d0", "d1", "d2", "d3"]),
                                _binary("add", "%x", "%b", elt), [f"%x: {elt}", f"%b: {elt}", f"%o: {elt}"])
        self.bind(op.results[0], out)
