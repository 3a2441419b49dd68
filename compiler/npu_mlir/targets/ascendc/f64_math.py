"""Double-precision math functions for scalar-unit AscendC (targets/ascendc/scalar.py).

No vector instruction of a 910B takes f64, and the scalar unit has no transcendental functions, so
an f64 tensor's exp / log / tanh / erf / pow ... are built here from double arithmetic and bit
manipulation: range reduction (by ln 2, pi / 2, powers of two) and polynomials or series that reach
double precision on the reduced range (relative error ~1e-15; sin / cos reduce by a three-part
pi / 2, accurate for |x| below ~1e9). The functions are `__aicore__ inline` C++ emitted once per
source file (include guard), before the first kernel that calls one.
"""

from __future__ import annotations

from math import factorial


def _coefficients(powers: range, sign: bool = False) -> str:
    """1 / k! for k in `powers` (highest first, for Horner), alternating in sign with `sign`."""
    terms = [(-1.0) ** (i if sign else 0) / factorial(k) for i, k in enumerate(powers)]
    return ", ".join(repr(t) for t in reversed(terms))


_PRELUDE = r"""
#ifndef NPU_F64_MATH
#define NPU_F64_MATH
// f64 math on the scalar unit: no vector instruction takes double.
__aicore__ inline int64_t F64Bits(double x) { union { double d; int64_t i; } u; u.d = x; return u.i; }
__aicore__ inline double F64FromBits(int64_t i) { union { double d; int64_t i; } u; u.i = i; return u.d; }
__aicore__ inline double F64Inf() { return F64FromBits(0x7ff0000000000000LL); }
__aicore__ inline double F64Nan() { return F64FromBits(0x7ff8000000000000LL); }
__aicore__ inline double F64Pow2(int64_t n) { return F64FromBits((n + 1023) << 52); }  // n in [-1022, 1023]
__aicore__ inline double F64Round(double x) {  // nearest integer, ties to even
  if (!(x > -4.5e15 && x < 4.5e15)) return x;
  double t = static_cast<double>(static_cast<int64_t>(x));  // toward zero
  double f = x - t;
  if (f > 0.5 || (f == 0.5 && (static_cast<int64_t>(t) & 1))) t += 1.0;
  if (f < -0.5 || (f == -0.5 && (static_cast<int64_t>(t) & 1))) t -= 1.0;
  return t;
}
__aicore__ inline double F64Exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return F64Inf();
  if (x < -745.1332191019412) return 0.0;
  const double n = F64Round(x * 1.4426950408889634);
  const double r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  const double c[14] = {EXP_COEFFS};  // Taylor to r^13, |r| <= ln2 / 2
  double p = 0.0;
  for (int k = 0; k < 14; ++k) p = p * r + c[k];
  const int64_t e = static_cast<int64_t>(n), h = e / 2;
  return p * F64Pow2(h) * F64Pow2(e - h);
}
__aicore__ inline double F64Log(double x) {
  if (x != x || x < 0) return F64Nan();
  if (x == 0) return -F64Inf();
  if (x == F64Inf()) return x;
  int64_t e = 0;
  if (x < 2.2250738585072014e-308) { x *= 18014398509481984.0; e = -54; }  // subnormal: * 2^54
  const int64_t bits = F64Bits(x);
  e += ((bits >> 52) & 0x7ff) - 1023;
  double m = F64FromBits((bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);  // [1, 2)
  if (m > 1.4142135623730951) { m *= 0.5; e += 1; }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double p = 1.0 / 25.0;  // 2 atanh(s) = log(m), |s| <= 0.1716
  for (int k = 23; k >= 1; k -= 2) p = p * s2 + 1.0 / k;
  const double de = static_cast<double>(e);
  return de * 6.93147180369123816490e-01 + (2.0 * s * p + de * 1.90821492927058770002e-10);
}
__aicore__ inline double F64Log1p(double x) {
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  if (u == F64Inf() || u <= 0) return F64Log(u);
  return F64Log(u) * x / (u - 1.0);
}
__aicore__ inline double F64Expm1(double x) {
  if (x > -0.5 && x < 0.5) {  // Taylor to x^18: exp(x) - 1 would lose the digits 1 absorbs
    const double c[18] = {EXPM1_COEFFS};
    double p = 0.0;
    for (int k = 0; k < 18; ++k) p = p * x + c[k];
    return p * x;
  }
  return F64Exp(x) - 1.0;
}
__aicore__ inline double F64Sqrt(double x) {
  if (x != x || x < 0) return F64Nan();
  if (x == 0 || x == F64Inf()) return x;
  double scale = 1.0;
  if (x < 1e-300) { x *= 1.6069380442589903e60; scale = 7.888609052210118e-31; }  // 2^200, 2^-100
  double y = F64FromBits((F64Bits(x) >> 1) + 0x1ff8000000000000LL);
  for (int k = 0; k < 6; ++k) y = 0.5 * (y + x / y);
  return y * scale;
}
__aicore__ inline double F64Tanh(double x) {
  const double a = x < 0 ? -x : x;
  if (a != a) return x;
  const double t = a > 22.0 ? 1.0 : F64Expm1(2.0 * a) / (F64Expm1(2.0 * a) + 2.0);
  return x < 0 ? -t : t;
}
__aicore__ inline double F64Sinh(double x) {
  const double a = x < 0 ? -x : x;
  double r;
  if (a < 1.0) { const double e = F64Expm1(a); r = 0.5 * (e + e / (e + 1.0)); }
  else if (a < 22.0) { const double e = F64Exp(a); r = 0.5 * (e - 1.0 / e); }
  else { const double h = F64Exp(0.5 * a); r = (0.5 * h) * h; }
  return x < 0 ? -r : r;
}
__aicore__ inline double F64Cosh(double x) {
  const double a = x < 0 ? -x : x;
  if (a < 22.0) { const double e = F64Exp(a); return 0.5 * (e + 1.0 / e); }
  const double h = F64Exp(0.5 * a);
  return (0.5 * h) * h;
}
__aicore__ inline double F64Asinh(double x) {
  const double a = x < 0 ? -x : x;
  const double r = a > 268435456.0 ? F64Log(a) + 0.6931471805599453
                                   : F64Log1p(a + a * a / (1.0 + F64Sqrt(1.0 + a * a)));
  return x < 0 ? -r : r;
}
__aicore__ inline double F64Acosh(double x) {
  if (x != x || x < 1.0) return F64Nan();
  if (x > 268435456.0) return F64Log(x) + 0.6931471805599453;
  const double t = x - 1.0;
  return F64Log1p(t + F64Sqrt(2.0 * t + t * t));
}
__aicore__ inline double F64Atanh(double x) {
  const double a = x < 0 ? -x : x;
  const double r = 0.5 * F64Log1p(2.0 * a / (1.0 - a));
  return x < 0 ? -r : r;
}
// sin and cos of r in [-pi/4, pi/4]: Taylor to r^21 / r^20.
__aicore__ inline double F64SinKernel(double r) {
  const double c[11] = {SIN_COEFFS};
  double p = 0.0;
  for (int k = 0; k < 11; ++k) p = p * (r * r) + c[k];
  return p * r;
}
__aicore__ inline double F64CosKernel(double r) {
  const double c[11] = {COS_COEFFS};
  double p = 0.0;
  for (int k = 0; k < 11; ++k) p = p * (r * r) + c[k];
  return p;
}
// x = n * pi/2 + r, |r| <= pi/4; returns n mod 4.
__aicore__ inline int64_t F64ReducePio2(double x, double* r) {
  const double n = F64Round(x * 0.6366197723675814);
  // pi/2 in four parts (fdlibm's pio2_1, _2, _3 of 33 bits each and a tail): n * part is exact
  *r = (((x - n * 1.57079632673412561417e+00) - n * 6.07710050630396597660e-11) - n * 2.02226624871116645580e-21)
       - n * 8.47842766036889956997e-32;
  return static_cast<int64_t>(n) & 3;
}
__aicore__ inline double F64Sin(double x) {
  if (x != x || x == F64Inf() || x == -F64Inf()) return F64Nan();
  double r;
  const int64_t q = F64ReducePio2(x, &r);
  const double v = (q & 1) ? F64CosKernel(r) : F64SinKernel(r);
  return (q & 2) ? -v : v;
}
__aicore__ inline double F64Cos(double x) {
  if (x != x || x == F64Inf() || x == -F64Inf()) return F64Nan();
  double r;
  const int64_t q = F64ReducePio2(x, &r);
  const double v = (q & 1) ? F64SinKernel(r) : F64CosKernel(r);
  return (q == 1 || q == 2) ? -v : v;
}
__aicore__ inline double F64Tan(double x) {
  if (x != x || x == F64Inf() || x == -F64Inf()) return F64Nan();
  double r;
  const int64_t q = F64ReducePio2(x, &r);
  const double s = F64SinKernel(r), c = F64CosKernel(r);
  return (q & 1) ? -c / s : s / c;
}
__aicore__ inline double F64Atan(double x) {
  if (x != x) return x;
  const double a = x < 0 ? -x : x;
  const double pio2 = 1.5707963267948966, pio6 = 0.5235987755982989;
  double t = a > 1.0 ? 1.0 / a : a, base = 0.0;
  if (t > 0.2679491924311227) { t = (t * 1.7320508075688772 - 1.0) / (1.7320508075688772 + t); base = pio6; }
  const double t2 = t * t;
  double p = 1.0 / 33.0;  // atan(t) = t - t^3/3 + ..., |t| <= tan(pi/12)
  for (int k = 31; k >= 1; k -= 2) p = -p * t2 + 1.0 / k;
  double r = base + t * p;
  if (a > 1.0) r = pio2 - r;
  return x < 0 ? -r : r;
}
__aicore__ inline double F64Atan2(double y, double x) {
  const double pi = 3.141592653589793;
  const double sy = F64Bits(y) < 0 ? -1.0 : 1.0;
  if (x != x || y != y) return x + y;
  if (y == 0) return (x > 0 || (x == 0 && F64Bits(x) >= 0)) ? y : sy * pi;
  if (x == F64Inf() || x == -F64Inf()) {
    if (y == F64Inf() || y == -F64Inf()) return sy * (x > 0 ? pi / 4 : 3 * pi / 4);
    return x > 0 ? sy * 0.0 : sy * pi;
  }
  if (x == 0 || y == F64Inf() || y == -F64Inf()) return sy * pi / 2;
  if (x > 0) return F64Atan(y / x);
  return F64Atan(y / x) + sy * pi;
}
__aicore__ inline double F64Asin(double x) {
  if (x != x || x > 1.0 || x < -1.0) return F64Nan();
  if (x == 1.0 || x == -1.0) return x * 1.5707963267948966;
  return F64Atan(x / F64Sqrt((1.0 - x) * (1.0 + x)));
}
__aicore__ inline double F64Acos(double x) {
  if (x != x || x > 1.0 || x < -1.0) return F64Nan();
  if (x == -1.0) return 3.141592653589793;
  return 2.0 * F64Atan(F64Sqrt((1.0 - x) / (1.0 + x)));
}
__aicore__ inline double F64Erf(double x) {
  const double a = x < 0 ? -x : x;
  if (a != a) return x;
  double r;
  if (a < 2.5) {  // Taylor: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
    const double a2 = a * a;
    double term = a, sum = a;
    for (int n = 1; n < 60; ++n) { term *= -a2 / n; sum += term / (2 * n + 1); }
    r = 1.1283791670955126 * sum;
  } else if (a < 6.0) {  // erfc's continued fraction, evaluated from its 80th term back
    double k = 0.0;
    for (int n = 80; n >= 1; --n) k = (0.5 * n) / (a + k);
    r = 1.0 - F64Exp(-a * a) * 0.5641895835477563 / (a + k);
  } else {
    r = 1.0;
  }
  return x < 0 ? -r : r;
}
__aicore__ inline double F64Pow(double a, double b) {
  if (b == 0 || a == 1.0) return 1.0;
  if (a != a || b != b) return a + b;
  const double m = a < 0 ? -a : a;
  if (b == F64Inf() || b == -F64Inf()) return m == 1.0 ? 1.0 : ((m > 1.0) == (b > 0) ? F64Inf() : 0.0);
  const bool whole = b > -9.0e18 && b < 9.0e18 && b == static_cast<double>(static_cast<int64_t>(b));
  const bool odd = whole && (static_cast<int64_t>(b) & 1) != 0;
  if (a < 0 && !whole && a != -F64Inf()) return F64Nan();
  const double r = F64Exp(b * F64Log(m));
  return (F64Bits(a) < 0 && odd) ? -r : r;  // -0 and negative bases: odd powers keep the sign
}
#endif  // NPU_F64_MATH
"""
PRELUDE = (_PRELUDE.replace("EXP_COEFFS", _coefficients(range(14)))
           .replace("EXPM1_COEFFS", _coefficients(range(1, 19)))
           .replace("SIN_COEFFS", _coefficients(range(1, 22, 2), sign=True))
           .replace("COS_COEFFS", _coefficients(range(0, 22, 2), sign=True)))

# MLIR math op -> the prelude function computing it on doubles.
FUNCTIONS = {
    "math.exp": "F64Exp", "math.log": "F64Log", "math.log1p": "F64Log1p", "math.expm1": "F64Expm1",
    "math.sqrt": "F64Sqrt", "math.tanh": "F64Tanh", "math.sinh": "F64Sinh", "math.cosh": "F64Cosh",
    "math.asinh": "F64Asinh", "math.acosh": "F64Acosh", "math.atanh": "F64Atanh", "math.sin": "F64Sin",
    "math.cos": "F64Cos", "math.tan": "F64Tan", "math.atan": "F64Atan", "math.asin": "F64Asin",
    "math.acos": "F64Acos", "math.erf": "F64Erf", "math.powf": "F64Pow", "math.atan2": "F64Atan2",
    "math.roundeven": "F64Round",
}


def call(op_name: str, args: list[str]) -> str | None:
    """The C++ expression computing `op_name` on double arguments, None if it has no f64 form here."""
    if op_name in FUNCTIONS:
        return f"{FUNCTIONS[op_name]}({', '.join(args)})"
    if op_name == "math.rsqrt":
        return f"(1.0 / F64Sqrt({args[0]}))"
    if op_name in ("math.log2", "math.log10"):
        scale = "1.4426950408889634" if op_name == "math.log2" else "0.4342944819032518"
        return f"(F64Log({args[0]}) * {scale})"
    return None
