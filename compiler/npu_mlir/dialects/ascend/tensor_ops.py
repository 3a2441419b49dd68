"""Tensor-level ascend ops: what `ascend-raise-linalg` produces and `ascend-fuse` groups.

Semantics (all value semantics on ranked tensors; "tensor or scalar" operands broadcast a scalar
of int/float/index type to the result shape, which is how the scalar variants are spelled):
  unary(x) {kind}                    elementwise; UNARY_KINDS (round: half to even, as torch)
  binary(lhs, rhs) {kind}            elementwise, tensor or scalar operands; BINARY_KINDS
                                     (integers are signed; integer div truncates; rem is
                                     the truncated remainder, C's fmod)
  ternary(a, b, c) {kind}            fma = a*b+c, clamp = min(max(a,b),c), lerp = a+c*(b-a)
  cast(x)                            element type conversion, same shape
  compare(lhs, rhs) {predicate}      i1 result; COMPARE_PREDICATES
  select(cond, t, f)                 cond ? t : f, cond an i1 tensor (t and f may both be scalars)
  broadcast(x) {dims}                `dims` are the result dims x lacks (as linalg.broadcast) or,
                                     when x has the result's rank, x's size-1 dims to stretch
  reduce(x) {kind, dims, keepdim}    REDUCE_KINDS over `dims`; mean divides by the reduced count
  transpose(x) {permutation}         result dim i is input dim permutation[i]
  format_cast(x)                     same logical shape, new #ascend.format encoding
  matmul(a, b[, bias]) {transpose_a, transpose_b, acc_type}
                                     (M,K)x(K,N) (+ bias (N)) accumulated in acc_type
  batch_matmul(a, b) {transpose_a, transpose_b, acc_type}   equal leading batch dims
  conv2d(x, w[, bias]) {strides, padding, dilations, groups}  NCHW x (Co, C/groups, Kh, Kw)
"""

# No `from __future__ import annotations`: ext reads op fields from live annotations.

from typing import Any

from torch_mlir import ir
from torch_mlir.dialects.ext import Operand, Pure, Result, attribute

from .dialect import AscendOp
from .formats import rank_error
from .shaped import element_type, is_scalar, tensor_format

UNARY_KINDS = ("abs", "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid",
               "relu", "gelu", "gelu_tanh", "silu", "erf", "sin", "cos", "floor", "ceil",
               "round", "not", "log2", "log10", "log1p", "expm1", "tan", "sinh", "cosh", "asin", "acos",
               "atan", "asinh", "acosh", "atanh")
BINARY_KINDS = ("add", "sub", "mul", "div", "max", "min", "pow", "and", "or", "xor", "atan2", "rem")
TERNARY_KINDS = ("fma", "clamp", "lerp")
COMPARE_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
REDUCE_KINDS = ("sum", "max", "min", "prod", "mean")

Tensor = ir.RankedTensorType


def _false() -> ir.BoolAttr:
    return ir.BoolAttr.get(False)


def _kind_error(op: AscendOp, name: str, allowed: tuple[str, ...]) -> str | None:
    kind = op.attr_str(name)
    return None if kind in allowed else f"unknown {name} '{kind}'; expected one of {', '.join(allowed)}"


def _elementwise_error(op: AscendOp, values: list[ir.Value], check_elt: bool = True,
                       need_tensor: bool = True) -> str | None:
    """Operands must be scalars or tensors of the result's shape (and element type)."""
    res = op.result.type
    tensors = [v for v in values if isinstance(v.type, Tensor)]
    if not tensors and need_tensor:
        return "needs at least one tensor operand"
    for v in values:
        if isinstance(v.type, Tensor):
            if v.type.shape != res.shape:
                return f"operand shape {v.type.shape} differs from result shape {res.shape}"
            if check_elt and v.type.element_type != res.element_type:
                return f"operand element type {v.type.element_type} differs from result {res.element_type}"
        elif not is_scalar(v.type):
            return f"operand of type {v.type} is neither a ranked tensor nor a scalar"
    return None


class UnaryOp(AscendOp, name="unary", traits=[Pure]):
    x: Operand[Tensor]
    kind: ir.StringAttr
    result: Result[Tensor]

    def check(self):
        return _kind_error(self, "kind", UNARY_KINDS) or _elementwise_error(self, [self.x])


class BinaryOp(AscendOp, name="binary", traits=[Pure]):
    lhs: Operand[Any]
    rhs: Operand[Any]
    kind: ir.StringAttr
    result: Result[Tensor]

    def check(self):
        return _kind_error(self, "kind", BINARY_KINDS) or _elementwise_error(self, [self.lhs, self.rhs])


class TernaryOp(AscendOp, name="ternary", traits=[Pure]):
    a: Operand[Any]
    b: Operand[Any]
    c: Operand[Any]
    kind: ir.StringAttr
    result: Result[Tensor]

    def check(self):
        return _kind_error(self, "kind", TERNARY_KINDS) or _elementwise_error(
            self, [self.a, self.b, self.c]
        )


class CastOp(AscendOp, name="cast", traits=[Pure]):
    x: Operand[Tensor]
    result: Result[Tensor]

    def check(self):
        return _elementwise_error(self, [self.x], check_elt=False)


class CompareOp(AscendOp, name="compare", traits=[Pure]):
    lhs: Operand[Any]
    rhs: Operand[Any]
    predicate: ir.StringAttr
    result: Result[Tensor]

    def check(self):
        if err := _kind_error(self, "predicate", COMPARE_PREDICATES):
            return err
        if str(self.result.type.element_type) != "i1":
            return "result must be a tensor of i1"
        if err := _elementwise_error(self, [self.lhs, self.rhs], check_elt=False):
            return err
        if element_type(self.lhs.type) != element_type(self.rhs.type):
            return "compared operands must have the same element type"
        return None


class SelectOp(AscendOp, name="select", traits=[Pure]):
    cond: Operand[Tensor]
    true_value: Operand[Any]
    false_value: Operand[Any]
    result: Result[Tensor]

    def check(self):
        if str(self.cond.type.element_type) != "i1":
            return "condition must be a tensor of i1"
        # The condition is the tensor: both values may be scalars (sign picks between 1 and -1).
        return _elementwise_error(self, [self.true_value, self.false_value], need_tensor=False) or _elementwise_error(
            self, [self.cond], check_elt=False
        )


class BroadcastOp(AscendOp, name="broadcast", traits=[Pure]):
    x: Operand[Tensor]
    dims: Any
    result: Result[Tensor]

    def check(self):
        src, res, dims = self.x.type.shape, self.result.type.shape, self.attr_ints("dims")
        if self.x.type.element_type != self.result.type.element_type:
            return "element types of input and result differ"
        if len(src) == len(res):
            if not dims or any(d < 0 or d >= len(res) or src[d] != 1 for d in dims):
                return f"dims {dims} must be size-1 dims of the input {src} to stretch"
            if any(src[i] != res[i] for i in range(len(res)) if i not in dims):
                return f"input shape {src} and result shape {res} differ outside dims {dims}"
            return None
        if len(src) + len(dims) != len(res):
            return f"input rank {len(src)} plus {len(dims)} added dims must equal result rank {len(res)}"
        if sorted(set(dims)) != sorted(dims) or any(d < 0 or d >= len(res) for d in dims):
            return f"dims {dims} must be distinct result dims in [0, {len(res)})"
        kept = [s for i, s in enumerate(res) if i not in dims]
        if kept != list(src):
            return f"result shape {res} without dims {dims} is {kept}, not the input shape {src}"
        return None


class ReduceOp(AscendOp, name="reduce", traits=[Pure]):
    x: Operand[Tensor]
    kind: ir.StringAttr
    dims: Any
    keepdim: ir.IntegerAttr
    result: Result[Tensor]

    def check(self):
        if err := _kind_error(self, "kind", REDUCE_KINDS):
            return err
        src, dims = self.x.type.shape, self.attr_ints("dims")
        rank = len(src)
        if not dims or any(d < 0 or d >= rank for d in dims) or len(set(dims)) != len(dims):
            return f"reduce dims {dims} must be distinct and in range [0, {rank}) for a rank-{rank} input"
        if self.attr_bool("keepdim"):
            want = [1 if i in dims else s for i, s in enumerate(src)]
        else:
            want = [s for i, s in enumerate(src) if i not in dims]
        if list(self.result.type.shape) != want:
            return f"result shape {self.result.type.shape} should be {want}"
        return None


class TransposeOp(AscendOp, name="transpose", traits=[Pure]):
    x: Operand[Tensor]
    permutation: Any
    result: Result[Tensor]

    def check(self):
        perm, src = self.attr_ints("permutation"), self.x.type.shape
        if sorted(perm) != list(range(len(src))):
            return f"permutation {perm} is not a permutation of [0, {len(src)})"
        want = [src[p] for p in perm]
        if list(self.result.type.shape) != want:
            return f"result shape {self.result.type.shape} should be {want}"
        return None


class FormatCastOp(AscendOp, name="format_cast", traits=[Pure]):
    x: Operand[Tensor]
    result: Result[Tensor]

    def check(self):
        src, dst = self.x.type, self.result.type
        if src.shape != dst.shape or src.element_type != dst.element_type:
            return "input and result must have the same logical shape and element type"
        for fmt in (tensor_format(src), tensor_format(dst)):
            if err := rank_error(fmt, src.rank):
                return err
        if tensor_format(src) == tensor_format(dst):
            return f"casts {tensor_format(src)} to itself"
        return None


def _matmul_dims(op: AscendOp, a: list[int], b: list[int]) -> tuple[list[int], str | None]:
    if op.attr_bool("transpose_a"):
        a = [*a[:-2], a[-1], a[-2]]
    if op.attr_bool("transpose_b"):
        b = [*b[:-2], b[-1], b[-2]]
    if a[-1] != b[-2]:
        return [], f"contraction dims differ: lhs K = {a[-1]}, rhs K = {b[-2]}"
    return [*a[:-1], b[-1]], None


class MatmulOp(AscendOp, name="matmul", traits=[Pure]):
    a: Operand[Tensor]
    b: Operand[Tensor]
    acc_type: ir.TypeAttr
    result: Result[Tensor]
    bias: Operand[Tensor] | None = None
    transpose_a: ir.IntegerAttr = attribute(default_factory=_false)
    transpose_b: ir.IntegerAttr = attribute(default_factory=_false)

    def check(self):
        if self.a.type.rank != 2 or self.b.type.rank != 2:
            return "operands must be rank 2 (use batch_matmul for batches)"
        want, err = _matmul_dims(self, self.a.type.shape, self.b.type.shape)
        if err:
            return err
        if list(self.result.type.shape) != want:
            return f"result shape {self.result.type.shape} should be {want}"
        if self.bias is not None and list(self.bias.type.shape) != want[-1:]:
            return f"bias shape {self.bias.type.shape} should be {want[-1:]}"
        return None


class BatchMatmulOp(AscendOp, name="batch_matmul", traits=[Pure]):
    a: Operand[Tensor]
    b: Operand[Tensor]
    acc_type: ir.TypeAttr
    result: Result[Tensor]
    transpose_a: ir.IntegerAttr = attribute(default_factory=_false)
    transpose_b: ir.IntegerAttr = attribute(default_factory=_false)

    def check(self):
        a, b = self.a.type.shape, self.b.type.shape
        if len(a) < 3 or len(a) != len(b):
            return "operands must have the same rank, at least 3"
        if a[:-2] != b[:-2]:
            return f"batch dims differ: {a[:-2]} vs {b[:-2]}"
        want, err = _matmul_dims(self, a, b)
        if err:
            return err
        if list(self.result.type.shape) != want:
            return f"result shape {self.result.type.shape} should be {want}"
        return None


class Conv2dOp(AscendOp, name="conv2d", traits=[Pure]):
    x: Operand[Tensor]
    weight: Operand[Tensor]
    strides: Any
    padding: Any
    dilations: Any
    groups: ir.IntegerAttr
    result: Result[Tensor]
    bias: Operand[Tensor] | None = None

    def check(self):
        x, w, res = self.x.type.shape, self.weight.type.shape, self.result.type.shape
        if len(x) != 4 or len(w) != 4:
            return "input (N,C,H,W) and weight (Co,C/groups,Kh,Kw) must be rank 4"
        (sh, sw), (ph, pw), (dh, dw) = (self.attr_ints(n) for n in ("strides", "padding", "dilations"))
        g = self.attr_int("groups")
        if g < 1 or x[1] % g or w[0] % g or w[1] * g != x[1]:
            return f"input channels {x[1]} and weight {w} do not split into {g} groups"
        oh = (x[2] + 2 * ph - dh * (w[2] - 1) - 1) // sh + 1
        ow = (x[3] + 2 * pw - dw * (w[3] - 1) - 1) // sw + 1
        if list(res) != [x[0], w[0], oh, ow]:
            return f"result shape {res} should be {[x[0], w[0], oh, ow]}"
        if self.bias is not None and list(self.bias.type.shape) != [w[0]]:
            return f"bias shape {self.bias.type.shape} should be {[w[0]]}"
        return None

