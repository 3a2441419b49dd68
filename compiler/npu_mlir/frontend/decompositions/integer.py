"""Integer ops that torch-mlir lowers wrongly or not at all, computed in integers as torch does.

torch-mlir negates an integer tensor through float, fptosi(-sitofp(x)) in f32 whatever the integer
width: -(2^31 - 1) gave -2^31 and -(2^53 + 1) gave -2^53. Negation is 0 - x in the tensor's own dtype,
wrapping at the minimum as torch's does.

Shifts lower to arith.shli / shrsi, whose result is poison for an amount outside [0, bits); torch
gives 0 for such a left shift and the sign for a right shift (x >> 100 is -1 for negative x).
bitwise_or / xor with a number have no torch-mlir lowering: they take the number as a 0-d tensor of
the result dtype, wrapped as torch casts a number operand. Imported by retrace.py.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def neg(self: torch.Tensor) -> torch.Tensor:
    if self.dtype.is_floating_point or self.dtype.is_complex or self.dtype == torch.bool:
        return aten.neg.default(self)
    return aten.sub.Tensor(torch.zeros_like(self), self)


def wrapped(value: int, dtype: torch.dtype) -> int:
    """`value` cast to an integer dtype as C++ casts it: modulo 2^bits (int8: 300 -> 44)."""
    bits = torch.iinfo(dtype).bits
    if dtype == torch.uint8:
        return value % (1 << bits)
    return (value + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def _operands(self: torch.Tensor | int, other: torch.Tensor | int) -> tuple[torch.Tensor, torch.Tensor]:
    """Both operands as tensors of their result dtype (a number as a 0-d tensor, wrapped)."""
    result = torch.result_type(self, other)
    device = self.device if isinstance(self, torch.Tensor) else other.device

    def tensor(x: torch.Tensor | int) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return x.to(result)
        return torch.full((), wrapped(int(x), result) if result != torch.bool else bool(x), dtype=result, device=device)

    return tensor(self), tensor(other)


def _bitwise_scalar(op: torch._ops.OpOverload):
    def rewrite(self: torch.Tensor, other: int) -> torch.Tensor:
        return op(*_operands(self, other))

    return rewrite


def _shift(left: bool):
    op = aten.bitwise_left_shift.Tensor if left else aten.bitwise_right_shift.Tensor

    def rewrite(self: torch.Tensor | int, other: torch.Tensor | int) -> torch.Tensor:
        a, b = _operands(self, other)
        if a.dtype.is_floating_point or a.dtype == torch.bool:
            return op(a, b)  # torch raises: not implemented for this dtype
        bits = torch.iinfo(a.dtype).bits
        in_range = (b >= 0) & (b < bits)
        shifted = op(a, torch.where(in_range, b, 0))
        if left:
            return torch.where(in_range, shifted, torch.zeros_like(shifted))
        return torch.where(in_range, shifted, op(a, torch.full_like(b, bits - 1)))

    return rewrite


INTEGER: dict[torch._ops.OpOverload, object] = {
    aten.neg.default: neg,
    aten.bitwise_or.Scalar: _bitwise_scalar(aten.bitwise_or.Tensor),
    aten.bitwise_xor.Scalar: _bitwise_scalar(aten.bitwise_xor.Tensor),
    aten.bitwise_and.Scalar: _bitwise_scalar(aten.bitwise_and.Tensor),
    **{op: _shift(left=True) for op in (aten.__lshift__.Scalar, aten.__lshift__.Tensor, aten.bitwise_left_shift.Tensor,
                                        aten.bitwise_left_shift.Tensor_Scalar, aten.bitwise_left_shift.Scalar_Tensor)},
    **{op: _shift(left=False) for op in (aten.__rshift__.Scalar, aten.__rshift__.Tensor, aten.bitwise_right_shift.Tensor,
                                         aten.bitwise_right_shift.Tensor_Scalar, aten.bitwise_right_shift.Scalar_Tensor)},
}
