"""Philox4x32-10 and the random distributions of torch_npu, written as plain torch integer ops.

The npu generator's state is (seed, offset). Element i of a random op reads the Philox block of
counter `offset + i` under key `seed` (counter words c0, c1 = low, high 32 bits; c2 = c3 = 0; key
words k0, k1 = low, high 32 bits of the seed) and uses its first one or two 32-bit words. One block
per element keeps every op purely elementwise, so the compiler fuses generator and transform into
one kernel of any shape; `seed` and `offset` arrive as 0-d int64 tensors (kernel parameters), so a
new seed or a later call reuses the compiled kernel.

uint32 arithmetic is emulated in int64 with masks: a 32x32-bit product fits 64 bits, and its wrapped
int64 value still carries the exact bit pattern, so `(p >> 32) & MASK` is the high word.
Imported by compile workers (kernel_build) too: no torch_npu import.
"""

from __future__ import annotations

import math

import torch

MASK32 = 0xFFFFFFFF
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
ROUNDS = 10
TWO_PI = 2.0 * math.pi
INV_2_24 = 1.0 / (1 << 24)
INV_2_53 = 1.0 / (1 << 53)
Word = torch.Tensor | int


def _mulhilo(multiplier: int, x: Word) -> tuple[Word, Word]:
    product = x * multiplier
    return (product >> 32) & MASK32, product & MASK32


def _xor(*words: Word) -> Word:
    # torch-mlir lowers bitwise_xor only between tensors: zero words (the unused counter halves) drop out.
    live = [w for w in words if not (isinstance(w, int) and w == 0)]
    result = live[0]
    for w in live[1:]:
        result = result ^ w
    return result


def philox4x32(c0: Word, c1: Word, c2: Word, c3: Word, k0: Word, k1: Word, rounds: int = ROUNDS) -> list[Word]:
    """The four 32-bit output words of Philox4x32-`rounds` (int64 tensors or ints holding uint32 values)."""
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + PHILOX_W[0]) & MASK32, (k1 + PHILOX_W[1]) & MASK32
        hi0, lo0 = _mulhilo(PHILOX_M[0], c0)
        hi1, lo1 = _mulhilo(PHILOX_M[1], c2)
        c0, c1, c2, c3 = _xor(hi1, c1, k0), lo1, _xor(hi0, c3, k1), lo0
    return [c0, c1, c2, c3]


def random_words(like: torch.Tensor, seed: Word, offset: Word, count: int = 2) -> list[torch.Tensor]:
    """The first `count` Philox words of each element of `like` (int64 tensors of its shape).

    seed and offset are int64 (0-d tensors or ints); the uint64 generator values are passed bit-cast.
    """
    counter = torch.arange(like.numel(), dtype=torch.int64, device=like.device).view(like.shape) + offset
    words = philox4x32(counter & MASK32, (counter >> 32) & MASK32, 0, 0, seed & MASK32, (seed >> 32) & MASK32)
    return words[:count]


def _value(x: torch.Tensor | float | int, dtype: torch.dtype) -> torch.Tensor:
    """A parameter as a 0-d tensor of `dtype`: traced kernels get 0-d tensors, the CPU fallback gets numbers."""
    return x.to(dtype) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=dtype)


def _unit(words: list[torch.Tensor], dtype: torch.dtype) -> torch.Tensor:
    """Uniform in [0, 1): 24 random bits (53 for float64) times 2^-24 (2^-53), exact in the dtype."""
    if dtype == torch.float64:
        return ((words[0] >> 11) * (1 << 32) + words[1]).to(torch.float64) * INV_2_53
    return (words[0] >> 8).to(torch.float32) * INV_2_24


def _open_unit(word: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Uniform in (0, 1]: safe under log."""
    return ((word >> 8) + 1).to(dtype) * INV_2_24


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def uniform(self: torch.Tensor, seed: Word, offset: Word, low: torch.Tensor | float,
            high: torch.Tensor | float) -> torch.Tensor:
    """Uniform in [low, high) with self's shape and dtype."""
    compute = _compute_dtype(self.dtype)
    u = _unit(random_words(self, seed, offset), self.dtype)
    low, high = _value(low, compute), _value(high, compute)
    value = (u * (high - low) + low).to(self.dtype).to(compute)
    # Rounding to a narrower dtype can land on `high`, which [low, high) excludes. (Compared in the
    # compute dtype: a 0-d float32 -> bfloat16 cast outside the elementwise loop needs a libcall.)
    return torch.where(value >= high, low, value).to(self.dtype)


def standard_normal(like: torch.Tensor, seed: Word, offset: Word) -> torch.Tensor:
    """N(0, 1) by Box-Muller from the first two words (the cosine branch), in the compute dtype."""
    words = random_words(like, seed, offset)
    compute = _compute_dtype(like.dtype)
    u2 = (words[1] >> 8).to(compute) * INV_2_24
    return torch.sqrt(-2.0 * torch.log(_open_unit(words[0], compute))) * torch.cos(u2 * TWO_PI)


def normal(self: torch.Tensor, seed: Word, offset: Word, mean: torch.Tensor | float,
           std: torch.Tensor | float) -> torch.Tensor:
    """mean + std * N(0, 1) in self's dtype; mean and std are numbers or tensors broadcast to self."""
    compute = _compute_dtype(self.dtype)
    z = standard_normal(self, seed, offset)
    return (_value(mean, compute) + _value(std, compute) * z).to(self.dtype)


def log_normal(self: torch.Tensor, seed: Word, offset: Word, mean: torch.Tensor | float,
               std: torch.Tensor | float) -> torch.Tensor:
    """exp(N(mean, std^2))."""
    compute = _compute_dtype(self.dtype)
    z = standard_normal(self, seed, offset)
    return torch.exp(_value(mean, compute) + _value(std, compute) * z).to(self.dtype)


def bernoulli(self: torch.Tensor, seed: Word, offset: Word, p: torch.Tensor | float) -> torch.Tensor:
    """1 with probability p (a number or a tensor broadcast to self), else 0; self's dtype."""
    u = _unit(random_words(self, seed, offset, 1), torch.float32)
    return (u < _value(p, torch.float32)).to(self.dtype)


def random_range(self: torch.Tensor, seed: Word, offset: Word, low: torch.Tensor | int,
                 span: torch.Tensor | int) -> torch.Tensor:
    """Integers in [low, low + span): 63 random bits modulo span (span 0: all 63 bits), in self's dtype."""
    words = random_words(self, seed, offset)
    bits = (words[0] & 0x7FFFFFFF) * (1 << 32) + words[1]
    span = _value(span, torch.int64)
    whole = span <= 0
    # A zero divisor would trap in the kernel even where the result is discarded.
    drawn = torch.where(whole, bits, bits % torch.where(whole, 1, span))
    return (drawn + _value(low, torch.int64)).to(self.dtype)


def exponential(self: torch.Tensor, seed: Word, offset: Word, lambd: torch.Tensor | float) -> torch.Tensor:
    """-log(u) / lambda with u in (0, 1]."""
    compute = _compute_dtype(self.dtype)
    u = _open_unit(random_words(self, seed, offset, 1)[0], compute)
    return (-torch.log(u) / _value(lambd, compute)).to(self.dtype)


def geometric(self: torch.Tensor, seed: Word, offset: Word, p: torch.Tensor | float) -> torch.Tensor:
    """Trials up to the first success: ceil(log(u) / log(1 - p)), at least 1."""
    u = _open_unit(random_words(self, seed, offset, 1)[0], torch.float32)
    trials = torch.ceil(torch.log(u) / torch.log(1.0 - _value(p, torch.float32)))
    return torch.clamp(trials, min=1.0).to(self.dtype)


def cauchy(self: torch.Tensor, seed: Word, offset: Word, median: torch.Tensor | float,
           sigma: torch.Tensor | float) -> torch.Tensor:
    """median + sigma * tan(pi * (u - 1/2))."""
    compute = _compute_dtype(self.dtype)
    u = _unit(random_words(self, seed, offset, 1), torch.float32).to(compute)
    angle = (u - 0.5) * math.pi
    return (_value(median, compute) + _value(sigma, compute) * torch.sin(angle) / torch.cos(angle)).to(self.dtype)


def dropout(input: torch.Tensor, seed: Word, offset: Word, keep: torch.Tensor | float,
            scale: torch.Tensor | float) -> tuple[torch.Tensor, torch.Tensor]:
    """Training dropout in one kernel: (input * scale where kept, else 0; the kept mask as bool).

    keep = 1 - p and scale = 1 / keep come from the caller: derived from p inside the kernel, the
    division and select are redone per element (measured 3x slower on the sim).
    """
    kept = _unit(random_words(input, seed, offset, 1), torch.float32) < _value(keep, torch.float32)
    compute = _compute_dtype(input.dtype)
    return torch.where(kept, input.to(compute) * _value(scale, compute), 0.0).to(input.dtype), kept


# The npu::_npu_philox_* custom ops (npu_native_functions.yaml): each takes the tensor whose shape and
# dtype it fills (its values are not read), the generator's seed and offset, then the distribution's
# parameters; RandomOps.cpp runs them.
REFERENCES = {
    "_npu_philox_uniform": uniform,
    "_npu_philox_normal": normal,
    "_npu_philox_normal.Tensor": normal,
    "_npu_philox_log_normal": log_normal,
    "_npu_philox_bernoulli": bernoulli,
    "_npu_philox_bernoulli.Tensor": bernoulli,
    "_npu_philox_random": random_range,
    "_npu_philox_exponential": exponential,
    "_npu_philox_geometric": geometric,
    "_npu_philox_cauchy": cauchy,
    "_npu_philox_dropout": dropout,
}
