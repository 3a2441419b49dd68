"""ascend-approximate-math: replace math.exp/log/tanh/erf/sin/cos on f32 (scalars or vectors) by polynomials.

Upstream's math-polynomial-approximation is not in the bindings, so these ops would lower to scalar
libm calls - one call per element even inside vectorized code (about 8x slower). The expansions use
only arith, math.fma and math.floor, which lower to vector instructions. f16/bf16 operands are
widened to f32 around the expansion. Sigmoid needs nothing of its own: torch-mlir writes it with exp.

Accuracy (f32): exp and log within ~2 ulp (Cephes reductions; log of a subnormal scales it to a normal first), tanh within ~3 ulp, erf within
1.5e-7 absolute (Taylor series below 0.5, Abramowitz-Stegun 7.1.26 above), sin and cos within
~2e-7 absolute for |x| < 8192 (Cephes sinf/cosf: three-part Cody-Waite reduction by pi/2). Beyond
that the reduction loses precision (at 1e9 its quadrant count overflows i32 and sin returned 13.3), so
a value with |x| >= 8192 takes libm's sin / cos in f64 (Payne-Hanek reduction, correct to an ulp over
the whole f32 range, as torch's CPU kernels are); the polynomial still serves every other lane and a
vector with no large lane never branches. Special values follow IEEE: exp(-inf)=0,
exp(+inf)=inf, log(0)=-inf, log(x<0)=nan, sin/cos(+-inf)=nan, nan propagates.

math.fpowi (torch-mlir's `x ** n` for an integer n: gelu's tanh form, mse_loss, square) is rewritten
too: vectorized, its exponent is a vector, which llvm.intr.powi cannot take. A constant exponent
becomes a chain of multiplications (square-and-multiply, a reciprocal for n < 0); any other exponent
becomes math.powf of the exponent converted to float.
"""

from __future__ import annotations

import math as pymath

from torch_mlir import ir
from torch_mlir.dialects import arith, math, scf, vector

APPROXIMATED = ("math.exp", "math.log", "math.tanh", "math.erf", "math.sin", "math.cos")
# pi/2 split so that k * part is exact in f32 for |k| < 2^14 (Cephes' DP1..DP3, doubled).
HALF_PI_PARTS = (1.5703125, 4.837512969970703125e-4, 7.54978995489188216e-8)
# Where the Cody-Waite reduction stops being accurate to ~2e-7 (Cephes' bound).
REDUCTION_LIMIT = 8192.0


class _Builder:
    """Emits f32/i32 ops shaped like the operand (scalar or vector) at the current insertion point."""

    def __init__(self, value_type: ir.Type) -> None:
        self.shape = value_type.shape if isinstance(value_type, ir.VectorType) else None
        self.f32 = self._shaped(ir.F32Type.get())
        self.i32 = self._shaped(ir.IntegerType.get_signless(32))
        self.i1 = self._shaped(ir.IntegerType.get_signless(1))
        self.f64 = self._shaped(ir.F64Type.get())

    def _shaped(self, element: ir.Type) -> ir.Type:
        return ir.VectorType.get(self.shape, element) if self.shape is not None else element

    def const(self, value: float) -> ir.Value:
        scalar = ir.FloatAttr.get(ir.F32Type.get(), value)
        attr = ir.DenseElementsAttr.get_splat(self.f32, scalar) if self.shape is not None else scalar
        return arith.ConstantOp(self.f32, attr).result

    def iconst(self, value: int) -> ir.Value:
        scalar = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value)
        attr = ir.DenseElementsAttr.get_splat(self.i32, scalar) if self.shape is not None else scalar
        return arith.ConstantOp(self.i32, attr).result

    def horner(self, x: ir.Value, coefficients: list[float]) -> ir.Value:
        """c0*x^n + ... + cn, highest degree first."""
        acc = self.const(coefficients[0])
        for c in coefficients[1:]:
            acc = math.fma(acc, x, self.const(c))
        return acc

    def ldexp(self, value: ir.Value, k: ir.Value) -> ir.Value:
        """value * 2^k for integer-valued float k in [-254, 256], in two steps so neither overflows."""
        ki = arith.fptosi(self.i32, k)
        half = arith.shrsi(ki, self.iconst(1))
        rest = arith.subi(ki, half)
        for part in (half, rest):
            bits = arith.shli(arith.addi(part, self.iconst(127)), self.iconst(23))
            value = arith.mulf(value, arith.bitcast(self.f32, bits))
        return value

    def cmp(self, predicate: str, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        return arith.cmpf(getattr(arith.CmpFPredicate, predicate.upper()), lhs, rhs)

    def bit_set(self, value: ir.Value, mask: int) -> ir.Value:
        return arith.cmpi(arith.CmpIPredicate.ne, arith.andi(value, self.iconst(mask)), self.iconst(0))


def _exp(b: _Builder, x: ir.Value) -> ir.Value:
    # Clamp so 2^k stays representable in two halves; results saturate to 0 / inf as IEEE wants.
    x = arith.minimumf(arith.maximumf(x, b.const(-104.0)), b.const(89.0))
    k = math.floor(math.fma(x, b.const(1.0 / pymath.log(2.0)), b.const(0.5)))
    r = math.fma(k, b.const(-0.693359375), x)
    r = math.fma(k, b.const(2.12194440e-4), r)
    # exp(r) on |r| <= ln2/2: Taylor to degree 7 (truncation < 1e-9).
    p = b.horner(r, [1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 0.5, 1.0, 1.0])
    return b.ldexp(p, k)


def _log(b: _Builder, x: ir.Value) -> ir.Value:
    # A subnormal has no exponent bits to read: scaled by 2^23 it is normal, and 23 comes off e.
    subnormal = b.cmp("olt", math.absf(x), b.const(2.0 ** -126))
    scaled = arith.select(subnormal, arith.mulf(x, b.const(2.0 ** 23)), x)
    bits = arith.bitcast(b.i32, scaled)
    exponent = arith.subi(arith.andi(arith.shrui(bits, b.iconst(23)), b.iconst(0xFF)), b.iconst(126))
    exponent = arith.subi(exponent, arith.select(subnormal, b.iconst(23), b.iconst(0)))
    mantissa = arith.bitcast(b.f32, arith.ori(arith.andi(bits, b.iconst(-2139095041)), b.iconst(0x3F000000)))
    e = arith.sitofp(b.f32, exponent)
    # Cephes logf: move the mantissa into [sqrt(1/2), sqrt(2)) and take log(1+f) by a polynomial.
    small = b.cmp("olt", mantissa, b.const(0.707106781186547524))
    e = arith.select(small, arith.subf(e, b.const(1.0)), e)
    f = arith.subf(arith.select(small, arith.addf(mantissa, mantissa), mantissa), b.const(1.0))
    z = arith.mulf(f, f)
    poly = b.horner(f, [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                        1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                        3.3333331174e-1])
    y = arith.mulf(arith.mulf(poly, f), z)
    y = math.fma(e, b.const(-2.12194440e-4), y)
    y = math.fma(z, b.const(-0.5), y)
    result = math.fma(e, b.const(0.693359375), arith.addf(f, y))
    result = arith.select(b.cmp("oeq", x, b.const(float("inf"))), x, result)
    result = arith.select(b.cmp("oeq", x, b.const(0.0)), b.const(float("-inf")), result)
    # ult is true for x < 0 and for nan: both give nan.
    return arith.select(b.cmp("ult", x, b.const(0.0)), b.const(float("nan")), result)


def _tanh(b: _Builder, x: ir.Value) -> ir.Value:
    ax = math.absf(x)
    # Near zero 1 - 2/(e^2x + 1) cancels; Cephes' odd polynomial covers |x| < 0.625.
    z = arith.mulf(x, x)
    poly = b.horner(z, [-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
                        -3.33332819422e-1])
    near = math.fma(arith.mulf(poly, z), x, x)
    e2 = _exp(b, arith.addf(ax, ax))
    far = arith.subf(b.const(1.0), arith.divf(b.const(2.0), arith.addf(e2, b.const(1.0))))
    far = math.copysign(far, x)
    return arith.select(b.cmp("olt", ax, b.const(0.625)), near, far)


def _erf(b: _Builder, x: ir.Value) -> ir.Value:
    ax = math.absf(x)
    z = arith.mulf(x, x)
    series = b.horner(z, [-1 / 1320, 1 / 216, -1 / 42, 1 / 10, -1 / 3, 1.0])
    near = arith.mulf(arith.mulf(series, x), b.const(2 / pymath.sqrt(pymath.pi)))
    t = arith.divf(b.const(1.0), math.fma(ax, b.const(0.3275911), b.const(1.0)))
    poly = arith.mulf(b.horner(t, [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592]), t)
    tail = arith.mulf(poly, _exp(b, arith.negf(z)))
    far = math.copysign(arith.subf(b.const(1.0), tail), x)
    return arith.select(b.cmp("olt", ax, b.const(0.5)), near, far)


def _quarter_turns(b: _Builder, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """x = k*pi/2 + r with |r| <= pi/4: (k as i32, sin r, cos r)."""
    k = math.floor(math.fma(x, b.const(2.0 / pymath.pi), b.const(0.5)))
    r = x
    for part in HALF_PI_PARTS:
        r = math.fma(k, b.const(-part), r)
    z = arith.mulf(r, r)
    sin_r = math.fma(arith.mulf(b.horner(z, [-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1]), z), r, r)
    cos_r = math.fma(arith.mulf(b.horner(z, [2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2]),
                                z), z, math.fma(z, b.const(-0.5), b.const(1.0)))
    return arith.fptosi(b.i32, k), sin_r, cos_r


def _on_quadrant(b: _Builder, quadrant: ir.Value, sin_r: ir.Value, cos_r: ir.Value) -> ir.Value:
    """sin(q*pi/2 + r): sin r, cos r, -sin r, -cos r for q mod 4 = 0..3 (two's complement makes q mod 4 = q & 3)."""
    value = arith.select(b.bit_set(quadrant, 1), cos_r, sin_r)
    return arith.select(b.bit_set(quadrant, 2), arith.negf(value), value)


def _beyond_reduction(b: _Builder, x: ir.Value, reduced: ir.Value, exact: type) -> ir.Value:
    """`reduced` where |x| < REDUCTION_LIMIT, else `exact` (math.SinOp / CosOp) of x in f64; the f64
    call sits behind one branch on whether any lane needs it."""
    large = b.cmp("oge", math.absf(x), b.const(REDUCTION_LIMIT))
    any_large = large
    if b.shape is not None:
        i1 = ir.IntegerType.get_signless(1)
        flat = large if len(b.shape) == 1 else vector.shape_cast(ir.VectorType.get([pymath.prod(b.shape)], i1), large)
        any_large = vector.reduction(i1, vector.CombiningKind.OR, flat)
    branch = scf.IfOp(any_large, [b.f32], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        wide = arith.truncf(b.f32, exact(arith.extf(b.f64, x)).result)
        scf.YieldOp([arith.select(large, wide, reduced)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([reduced])
    return branch.results[0]


def _sin(b: _Builder, x: ir.Value) -> ir.Value:
    # sin(-0) = -0, which the reduction (r = -0 + 0) would lose.
    reduced = arith.select(b.cmp("oeq", x, b.const(0.0)), x, _on_quadrant(b, *_quarter_turns(b, x)))
    return _beyond_reduction(b, x, reduced, math.SinOp)


def _cos(b: _Builder, x: ir.Value) -> ir.Value:
    # cos x = sin(x + pi/2): one quadrant further.
    quadrant, sin_r, cos_r = _quarter_turns(b, x)
    reduced = _on_quadrant(b, arith.addi(quadrant, b.iconst(1)), sin_r, cos_r)
    return _beyond_reduction(b, x, reduced, math.CosOp)


_EXPANSIONS = {"math.exp": _exp, "math.log": _log, "math.tanh": _tanh, "math.erf": _erf, "math.sin": _sin,
               "math.cos": _cos}


def _splat_integer(value: ir.Value) -> int | None:
    """The integer a constant (scalar or splat vector) holds, or None."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.DenseIntElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
        return ir.IntegerAttr(ir.DenseElementsAttr(attr).get_splat_value()).value
    return None


def _constant_like(x: ir.Value, value: float) -> ir.Value:
    element = _element_type(x.type)
    scalar = ir.FloatAttr.get(element, value)
    attr = ir.DenseElementsAttr.get_splat(x.type, scalar) if isinstance(x.type, ir.VectorType) else scalar
    return arith.ConstantOp(x.type, attr).result


def _integer_power(x: ir.Value, n: int) -> ir.Value:
    """x ** n by square-and-multiply in x's own type (as torch computes integer powers)."""
    if n == 0:
        return _constant_like(x, 1.0)
    result, square, k = None, x, abs(n)
    while k:
        if k & 1:
            result = square if result is None else arith.mulf(result, square)
        k >>= 1
        if k:
            square = arith.mulf(square, square)
    return arith.divf(_constant_like(x, 1.0), result) if n < 0 else result


def _rewrite_fpowi(op: ir.Operation) -> None:
    x, exponent = op.operands[0], op.operands[1]
    n = _splat_integer(exponent)
    with ir.InsertionPoint(op), op.location:
        if n is not None and abs(n) <= 64:
            result = _integer_power(x, n)
        else:
            result = math.powf(x, arith.sitofp(x.type, exponent))
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _element_type(t: ir.Type) -> ir.Type:
    return t.element_type if isinstance(t, ir.VectorType) else t


def _rewrite(op: ir.Operation) -> None:
    value = op.operands[0]
    element = _element_type(value.type)
    with ir.InsertionPoint(op), op.location:
        b = _Builder(value.type)
        widened = not isinstance(element, ir.F32Type)
        x = arith.extf(b.f32, value) if widened else value
        result = _EXPANSIONS[op.name](b, x)
        if widened:
            result = arith.truncf(value.type, result)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def approximate_math(module: ir.Module | ir.Operation) -> None:
    """Rewrite every approximable math op on f32/f16/bf16, and every math.fpowi, in `module` in place."""
    root = module.operation
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in APPROXIMATED:
            element = _element_type(op.operands[0].type)
            if isinstance(element, (ir.F32Type, ir.F16Type, ir.BF16Type)):
                found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    powers: list[ir.Operation] = []
    root.walk(lambda op: (powers.append(op) if op.name == "math.fpowi" else None, ir.WalkResult.ADVANCE)[1])
    with root.context:
        for op in found:
            _rewrite(op)
        for op in powers:
            _rewrite_fpowi(op)


def run(module: ir.Operation) -> None:
    """Registry entry point (npu-opt's `ascend-approximate-math`)."""
    approximate_math(module)
