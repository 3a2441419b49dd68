"""Special functions torch-mlir does not lower, stated with the ops it does (exp, log, erf, sin, tan).

Each follows the CPU kernel's algorithm in ATen/native/Math.h (Cephes-derived: the same recurrences,
reflections and asymptotic series, unrolled to a fixed number of steps with `where` instead of
loops), so the numbers are torch's to float32 rounding:
- digamma: reflection for x < 0, ten recurrence steps up to x >= 10, the asymptotic series;
- trigamma (polygamma n = 1): reflection below 0.5, six recurrence steps, the asymptotic series;
- polygamma n >= 2: (-1)^(n+1) n! zeta(n + 1, x), Math.h's Hurwitz zeta (direct sum, then
  Euler-Maclaurin) in double like the CPU's, its loop unrolled ZETA_STEPS times;
- lgamma: reflection for x < 0.5, recurrence up to x >= 8, Stirling's series;
- erfinv: Giles' single-precision polynomials refined by two Newton steps on erf;
- erfc as 1 - erf (absolute error ~6e-8), entr and xlog1py with torch's zero / NaN cases;
- i0, i0e, i1, i1e: Cephes' Chebyshev expansions on [0, 8] and in 32 / x - 2 beyond.
Half-precision inputs compute in float32 and round once, as torch's CPU kernels do. Imported by
retrace.py.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

aten = torch.ops.aten
HALF = (torch.float16, torch.bfloat16)
DIGAMMA_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                  -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                  8.33333333333333333333E-2)  # Math.h calc_digamma's A, highest power first


# Math.h zeta's Euler-Maclaurin coefficients A, its MACHEP, and how far its direct sum is unrolled.
ZETA_SERIES = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
               -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
               1.8152105401943546773e17, -7.1661652561756670113e18)
ZETA_MACHEP = 1.11022302462515654042e-16
ZETA_STEPS = 40


# Math.h's Chebyshev coefficients (Cephes): exp(-x) I0(x) on [0, 8], exp(-x) sqrt(x) I0(x) on
# [8, inf) in 32 / x - 2, and I1's, whose float tables (the CPU's for float32 / half) are shorter.
I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
         1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
         -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
         9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
         -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
         1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
         -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
         1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
         -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
         1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
         3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
         1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
         -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
         7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
         -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
         3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
         2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
         8.04490411014108831608E-1)
I1E_A_FLOAT = (9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
               -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
               4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
               -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
               2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
               -1.76416518357834055153E-1, 2.52587186443633654823E-1)
I1E_B_FLOAT = (-3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
               -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
               7.78576235018280120474E-1)


def _float(x: torch.Tensor) -> torch.Tensor:
    if not x.is_floating_point():
        return x.to(torch.get_default_dtype())
    return x.float() if x.dtype in HALF else x


def _result(x: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    return value.to(x.dtype) if x.is_floating_point() else value


def _polevl(z: torch.Tensor, coefficients: tuple[float, ...]) -> torch.Tensor:
    out = torch.full_like(z, coefficients[0])
    for c in coefficients[1:]:
        out = out * z + c
    return out


def _digamma_positive(x: torch.Tensor) -> torch.Tensor:
    """digamma for x > 0: ten recurrence steps, then the asymptotic series at x >= 10."""
    result = torch.zeros_like(x)
    for _ in range(10):
        small = x < 10
        result = result - torch.where(small, 1.0 / x, 0.0)
        x = torch.where(small, x + 1.0, x)
    z = 1.0 / (x * x)
    return result + torch.log(x) - 0.5 / x - z * _polevl(z, DIGAMMA_SERIES)


def digamma(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    negative = x < 0
    core = _digamma_positive(torch.where(negative, 1.0 - x, x))
    fraction = x - torch.trunc(x)
    reflected = core - math.pi / torch.tan(math.pi * fraction)
    out = torch.where(negative, reflected, core)
    out = torch.where(negative & (fraction == 0), float("nan"), out)  # negative integers
    # +-0 gives -+inf (copysign(inf, -x)): 1 / 0.0 is +inf, 1 / -0.0 is -inf.
    out = torch.where(x == 0, -torch.sign(1.0 / x) * float("inf"), out)
    return _result(self, out)


def trigamma(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    low = x < 0.5
    sin_pi_x = torch.sin(math.pi * x)
    result = torch.where(low, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0.0)
    x = torch.where(low, 1.0 - x, x)
    for _ in range(6):
        result = result + 1.0 / (x * x)
        x = x + 1.0
    ixx = 1.0 / (x * x)
    result = result + (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return _result(self, torch.where(low, -result, result))


def _power(x: torch.Tensor, n: int) -> torch.Tensor:
    """x ** n for a static n >= 1 by multiplications (exact signs for a negative x, as std::pow)."""
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


def _hurwitz_zeta(x: int, q: torch.Tensor) -> torch.Tensor:
    """Math.h's zeta(x, q) for a static integer x >= 2: the direct sum while i < 9 or a <= 9, then
    twelve Euler-Maclaurin terms. The loop runs ZETA_STEPS times under a mask (q > 9 - ZETA_STEPS);
    the early returns once a term is below MACHEP of the sum are kept as masks too."""
    s = 1.0 / _power(q, x)
    a = q
    b = torch.zeros_like(q)
    done = torch.zeros_like(q, dtype=torch.bool)
    for i in range(ZETA_STEPS):
        step = ~done if i < 9 else ~done & (a <= 9.0)
        a = torch.where(step, a + 1.0, a)
        term = 1.0 / _power(a, x)
        b = torch.where(step, term, b)
        s = torch.where(step, s + term, s)
        done = done | (step & (b.abs() < ZETA_MACHEP * s.abs()))
    out_of_reach = ~done & (a <= 9.0)  # q more negative than the unrolled loop reaches
    w = a
    total = torch.where(done, s, s + b * w / (x - 1) - 0.5 * b)
    a = torch.ones_like(q)
    k = 0.0
    for coefficient in ZETA_SERIES:
        a = a * (x + k)
        b = b / w
        t = a * b / coefficient
        total = torch.where(done, total, total + t)
        done = done | ((t / total).abs() < ZETA_MACHEP)
        k += 1.0
        a = a * (x + k)
        b = b / w
        k += 1.0
    out = torch.where(out_of_reach, float("nan"), total)
    # q a non-positive integer: a pole.
    return torch.where((q <= 0) & (q == torch.floor(q)), float("inf"), out)


def polygamma(n: int, self: torch.Tensor) -> torch.Tensor:
    if n == 0:
        return digamma(self)
    if n == 1:
        return trigamma(self)
    # Math.h calc_polygamma: (-1)^(n+1) n! zeta(n + 1, x), the sum in double as the CPU's acc_type
    # (for a negative x its terms cancel: float32 loses all digits at x = -2.5, n = 8).
    x = self.to(torch.float64)
    sign = 1.0 if n % 2 else -1.0
    out = sign * math.factorial(n) * _hurwitz_zeta(n + 1, x)
    return out.to(self.dtype if self.is_floating_point() else torch.get_default_dtype())


def _chbevl(x: torch.Tensor, coefficients: tuple[float, ...]) -> torch.Tensor:
    """Math.h chbevl: the Chebyshev series by Clenshaw's recurrence."""
    b0, b1, b2 = torch.full_like(x, coefficients[0]), torch.zeros_like(x), torch.zeros_like(x)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _scaled_bessel(x: torch.Tensor, order: int) -> torch.Tensor:
    """exp(-|x|) I_order(|x|) by Math.h's two Chebyshev expansions (calc_i0e / calc_i1e)."""
    a = x.abs()
    near, far = (I0E_A, I0E_B) if order == 0 else (I1E_A_FLOAT, I1E_B_FLOAT)
    low = _chbevl(a / 2.0 - 2.0, near) * (a if order else 1.0)
    # 32 / a - 2 from a = 8 up; the near branch's a keeps the far one finite where it is not taken.
    safe = torch.where(a <= 8.0, 8.0, a)  # NaN stays NaN
    high = _chbevl(32.0 / safe - 2.0, far) / torch.sqrt(safe)
    return torch.where(a <= 8.0, low, high)


def _odd(x: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    return torch.where(x < 0, -value, value)


def i0(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    return _result(self, torch.exp(x.abs()) * _scaled_bessel(x, 0))


def i0e(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    return _result(self, _scaled_bessel(x, 0))


def i1(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    return _result(self, _odd(x, torch.exp(x.abs()) * _scaled_bessel(x, 1)))


def i1e(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    return _result(self, _odd(x, _scaled_bessel(x, 1)))


def _lgamma_positive(x: torch.Tensor) -> torch.Tensor:
    """log|Gamma(x)| for x >= 0.5: recurrence up to x >= 8, then Stirling's series."""
    shift = torch.zeros_like(x)
    for _ in range(8):
        small = x < 8
        shift = shift + torch.where(small, torch.log(x), 0.0)
        x = torch.where(small, x + 1.0, x)
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680))))
    return (x - 0.5) * torch.log(x) - x + 0.5 * math.log(2 * math.pi) + series - shift


def lgamma(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    low = x < 0.5
    core = _lgamma_positive(torch.where(low, 1.0 - x, x))
    # Reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x); poles (x a non-positive integer) are inf.
    sin_pi_x = torch.abs(torch.sin(math.pi * (x - torch.floor(x))))
    reflected = math.log(math.pi) - torch.log(sin_pi_x) - core
    out = torch.where(low, reflected, core)
    out = torch.where(low & (x == torch.floor(x)), float("inf"), out)
    out = torch.where(torch.isinf(x), float("inf"), out)
    return _result(self, out)


def erfc(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    return _result(self, 1.0 - torch.erf(x))


GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erfinv(self: torch.Tensor) -> torch.Tensor:
    y = _float(self)
    w = -torch.log((1.0 - y) * (1.0 + y))
    central = _polevl(w - 2.5, GILES_CENTRAL)
    tail = _polevl(torch.sqrt(w) - 3.0, GILES_TAIL)
    x = torch.where(w < 5.0, central, tail) * y
    for _ in range(2):  # Newton on erf(x) = y, as the CPU kernel refines its rational guess
        step = (torch.erf(x) - y) / (2.0 / math.sqrt(math.pi) * torch.exp(-x * x))
        x = torch.where(torch.isfinite(x), x - step, x)
    x = torch.where(torch.abs(y) == 1.0, y * float("inf"), x)
    return _result(self, torch.where(torch.abs(y) > 1.0, float("nan"), x))


def entr(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    out = torch.where(x > 0, -x * torch.log(torch.where(x > 0, x, 1.0)), torch.where(x == 0, 0.0, float("-inf")))
    return _result(self, torch.where(torch.isnan(x), x, out))


def xlog1py(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    dtype = torch.result_type(self, other)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    compute = torch.float32 if dtype in HALF else dtype
    x, y = self.to(compute), other.to(compute)
    out = torch.where((x == 0) & ~torch.isnan(y), 0.0, x * torch.log1p(y))
    return out.to(dtype)


SPECIAL: dict[torch._ops.OpOverload, Callable] = {
    aten.digamma.default: digamma,
    aten.polygamma.default: polygamma,
    aten.lgamma.default: lgamma,
    aten.erfc.default: erfc,
    aten.erfinv.default: erfinv,
    aten.special_entr.default: entr,
    aten.special_xlog1py.default: xlog1py,
    aten.i0.default: i0,
    aten.special_i0e.default: i0e,
    aten.special_i1.default: i1,
    aten.special_i1e.default: i1e,
}
