"""Translate the scalar body of an elementwise linalg.generic into ascend tensor ops.

Used by ascend-raise-linalg. After `linalg-fuse-elementwise-ops` one generic holds a whole chain
(`add; divf; erf; addf; mulf; mulf` for gelu), so every arith/math op of the body becomes one
ascend op on tensors of the iteration-domain shape. Values from outside the body stay scalars
(the scalar variants of the ascend ops); ops on scalars only are cloned as scalar arith.
`linalg.index` (a fused torch.arange) becomes a constant of row numbers. A body op without an
ascend counterpart makes `translate` return None and the caller leaves the generic alone.
"""

import array

from torch_mlir import ir
from torch_mlir.dialects import arith

from ..dialects.ascend import BinaryOp, BroadcastOp, CastOp, CompareOp, SelectOp, TernaryOp, UnaryOp

BINARY = {
    "arith.addf": "add", "arith.addi": "add", "arith.subf": "sub", "arith.subi": "sub",
    "arith.mulf": "mul", "arith.muli": "mul", "arith.divf": "div", "arith.divsi": "div",
    "arith.maximumf": "max", "arith.maxnumf": "max", "arith.maxsi": "max",
    "arith.minimumf": "min", "arith.minnumf": "min", "arith.minsi": "min", "math.powf": "pow",
    "arith.andi": "and", "arith.ori": "or", "arith.xori": "xor",
    "math.atan2": "atan2", "arith.remf": "rem", "arith.remsi": "rem",
}
UNARY = {
    "arith.negf": "neg", "math.absf": "abs", "math.absi": "abs", "math.exp": "exp",
    "math.log": "log", "math.sqrt": "sqrt", "math.rsqrt": "rsqrt", "math.tanh": "tanh",
    "math.erf": "erf", "math.sin": "sin", "math.cos": "cos", "math.floor": "floor",
    "math.ceil": "ceil", "math.roundeven": "round",
    "math.log2": "log2", "math.log10": "log10", "math.log1p": "log1p", "math.expm1": "expm1",
    "math.tan": "tan", "math.sinh": "sinh", "math.cosh": "cosh", "math.asin": "asin", "math.acos": "acos",
    "math.atan": "atan", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh",
}
# Signed integer casts only: ascend.cast reads integers as signed. Unsigned arithmetic
# (divui, uitofp, cmpi ult, ...) and math.round (half away from zero; ascend rounds half to
# even like torch.round) are left to the generic.
CASTS = {"arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi", "arith.extsi", "arith.trunci"}
FMA = {"math.fma": "fma"}
# Enum order of arith.cmpf / arith.cmpi predicates.
CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
        "ule", "une", "uno", "true"]
CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", None, None, None, None]  # unsigned: not raised
ASCEND_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


def _predicate(op: ir.OpView) -> str | None:
    """The ascend predicate of a cmpf/cmpi; ordered and unordered (and signed/unsigned) alike.

    NaN-ness is not kept: the vector unit's compares are ordered. `ord`/`uno`/`true`/`false`
    have no counterpart and return None.
    """
    names = CMPF if op.operation.name == "arith.cmpf" else CMPI
    name = names[ir.IntegerAttr(op.attributes["predicate"]).value]
    return name[-2:] if name and name[-2:] in ASCEND_PREDICATES else None


def is_zero_constant(v: ir.Value) -> bool:
    owner = v.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "arith.constant":
        return False
    value = owner.attributes["value"]
    return isinstance(value, (ir.FloatAttr, ir.IntegerAttr)) and value.value == 0


# The message of torch-mlir's guard that only rejects values torch accepts.
ZERO_ELEMENT_GUARD = "tensor with zero element"


class BodyTranslator:
    """Build ascend ops for one generic body; `created` lets the caller undo a partial build."""

    def __init__(self, shape: list[int], loc: ir.Location, indexable: bool = True):
        self.shape = shape
        # Whether `shape` is the generic's own iteration domain, so `linalg.index d` is dim d of it
        # (not when an epilogue runs collapsed or a contraction's operand in a subset of the dims).
        self.indexable = indexable
        self.loc = loc
        self.created: list[ir.OpView] = []

    def _tensor(self, elt: ir.Type) -> ir.RankedTensorType:
        return ir.RankedTensorType.get(self.shape, elt)

    def _emit(self, op: ir.OpView) -> ir.Value:
        self.created.append(op)
        return op.result

    def translate(self, block: ir.Block, env: dict, stop: ir.Operation | None = None,
                  only: set[ir.Operation] | None = None) -> list[ir.Value] | None:
        """Map each body op through `env` (block args -> tensors); return the yielded values.

        With `stop`, translate only the ops before it and return [] (env holds the results); with
        `only`, only those ops (one operand's computation in a body that yields others).
        """
        for op in block.operations:
            name = op.operation.name
            if stop is not None and op.operation == stop:
                return []
            if name == "linalg.yield":
                return [env.get(v, v) for v in op.operands]
            if only is not None and op.operation not in only:
                continue
            if name == "cf.assert":
                # torch-mlir's "unimplemented: tensor with zero element" guard (reciprocal, gather,
                # embedding) checks element values torch itself accepts (1/0 is inf): not a
                # semantic of the op, so it is dropped with its condition. Any other assertion
                # (an index bounds check: bounds.py, split-index-checks) must fail the kernel, so
                # its generic stays whole.
                if ZERO_ELEMENT_GUARD not in ir.StringAttr(op.attributes["msg"]).value:
                    return None
                continue
            args = [env.get(v, v) for v in op.operands]
            if any(isinstance(a.type, ir.RankedTensorType) and a.type.shape != self.shape for a in args):
                return None
            if name == "linalg.index":
                env[op.result] = self._positions(op)
                if env[op.result] is None:
                    return None
                continue
            if not any(isinstance(a.type, ir.RankedTensorType) for a in args):
                if len(op.regions):
                    return None
                # Scalar-only: the op stays scalar arith, moved out of the body.
                clone = op.operation.clone(ip=ir.InsertionPoint.current)
                for i, a in enumerate(args):
                    clone.operands[i] = a
                self.created.append(clone)
                env[op.result] = clone.result
                continue
            result = self._one(op, name, args)
            if result is None:
                return None
            env[op.result] = result
        return None

    def _positions(self, op: ir.OpView) -> ir.Value | None:
        """`linalg.index d` (torch.arange fused into its consumer: index_select's and embedding's
        comparison of each index with every row number) as an i64 tensor of the domain: the row
        numbers of dim d as a constant, broadcast over the other dims. Only when every use casts it
        to an integer (arith.index_cast), which then reads the tensor as signed."""
        if not self.indexable or not all(use.owner.name == "arith.index_cast" for use in op.result.uses):
            return None
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        i64 = ir.IntegerType.get_signless(64)
        count = self.shape[dim]
        with self.loc:
            positions = arith.ConstantOp(ir.RankedTensorType.get([count], i64), ir.DenseElementsAttr.get(
                memoryview(array.array("q", range(count))), type=ir.RankedTensorType.get([count], i64)))
            self.created.append(positions)
            if len(self.shape) == 1:
                return positions.result
            others = [d for d in range(len(self.shape)) if d != dim]
            return self._emit(BroadcastOp(positions.result, ir.DenseI64ArrayAttr.get(others), self._tensor(i64)))

    def _one(self, op: ir.OpView, name: str, args: list[ir.Value]) -> ir.Value | None:
        elt = op.result.type
        out = self._tensor(elt)
        with self.loc:
            if name in BINARY:
                return self._emit(BinaryOp(args[0], args[1], ir.StringAttr.get(BINARY[name]), out))
            if name in UNARY:
                return self._emit(UnaryOp(args[0], ir.StringAttr.get(UNARY[name]), out))
            if name in FMA:
                return self._emit(TernaryOp(*args, ir.StringAttr.get("fma"), out))
            if name in CASTS:
                return self._emit(CastOp(args[0], out))
            if name == "arith.index_cast" and isinstance(args[0].type, ir.RankedTensorType):
                # Of a row-number tensor (_positions), already i64.
                same = ir.RankedTensorType(args[0].type).element_type == elt
                return args[0] if same else self._emit(CastOp(args[0], out))
            if name in ("arith.cmpf", "arith.cmpi"):
                pred = _predicate(op)
                return None if pred is None else self._emit(
                    CompareOp(args[0], args[1], ir.StringAttr.get(pred), out))
            if name == "arith.select":
                return self._select(op, args, out)
        return None

    def _select(self, op: ir.OpView, args: list[ir.Value], out: ir.Type) -> ir.Value | None:
        cond, t, f = args
        cmp = cond.owner
        # select(x > 0, x, 0) is how torch-mlir spells relu.
        if (isinstance(cmp, CompareOp) and cmp.attr_str("predicate") == "gt" and cmp.lhs == t
                and is_zero_constant(cmp.rhs) and is_zero_constant(f)):
            return self._emit(UnaryOp(t, ir.StringAttr.get("relu"), out))
        if not isinstance(cond.type, ir.RankedTensorType):
            return None
        return self._emit(SelectOp(cond, t, f, out))

    def undo(self) -> None:
        for op in reversed(self.created):
            op.erase()
        self.created.clear()
