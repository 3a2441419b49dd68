"""Ops the eager path traces through a decomposition of ours instead of torch-mlir's own lowering.

torch-mlir lowers these ops to something the sim target miscompiles (nll_loss_forward: rows past
the sixth read as zero), to `tm_tensor.scatter`, which the Ascend pipeline has no lowering for
(nll_loss_backward, embedding_dense_backward, the pooling and convolution backwards in PyTorch's
decompositions), or not at all (argmax/argmin of a 0-d tensor). Each rewrite below is scatter-free:
a one-hot comparison against the index, elementwise ops, reductions, matmuls or forward
convolutions, all of which the pipeline compiles. A configuration a rewrite does not cover raises,
so that call runs on the CPU fallback. Imported by kernel_build, in the user's process and in
compile workers alike (no torch_npu import). Scans, scatters and sorts are in masked.py.
"""

from __future__ import annotations

import math as pymath
from typing import Callable

import torch

from npu_mlir.frontend.decompositions.batch_norm import RETRACED as _BATCH_NORM
from npu_mlir.frontend.decompositions.bounds import in_range
from npu_mlir.frontend.decompositions.conv_gemm import RETRACED as _CONVOLUTION
from npu_mlir.frontend.decompositions.division import DIVISION
from npu_mlir.frontend.decompositions.floating import FLOATING
from npu_mlir.frontend.decompositions.half_reductions import HALF_REDUCTIONS
from npu_mlir.frontend.decompositions.indexing import INDEXING
from npu_mlir.frontend.decompositions.integer import INTEGER
from npu_mlir.frontend.decompositions.masked import MASKED
from npu_mlir.frontend.decompositions.recurrent import RECURRENT
from npu_mlir.frontend.decompositions.normalization import RETRACED as _NORMALIZATION
from npu_mlir.frontend.decompositions.pooling import RETRACED as _POOLING
from npu_mlir.frontend.decompositions.powers import POWERS
from npu_mlir.frontend.decompositions.resampling import RESAMPLING
from npu_mlir.frontend.decompositions.special import SPECIAL
from npu_mlir.frontend.decompositions.scaled_pointwise import RETRACED as _SCALED_POINTWISE

aten = torch.ops.aten
REDUCTION_NONE, REDUCTION_MEAN = 0, 1


def _one_hot(target: torch.Tensor, classes: int, dim: int, ndim: int, dtype: torch.dtype) -> torch.Tensor:
    """1.0 where the class index along `dim` equals the target, 0.0 elsewhere (ignored targets are -1)."""
    shape = [1] * ndim
    shape[dim] = classes
    index = torch.arange(classes, device=target.device).view(shape)
    return (target.unsqueeze(dim) == index).to(dtype)


def _target_classes(target: torch.Tensor, ignore_index: int, classes: int) -> torch.Tensor:
    """Each target's class, -1 where it is ignored; a class out of range fails the kernel."""
    valid = target != ignore_index
    return torch.where(valid, in_range(torch.where(valid, target, 0), classes), -1)


def nll_loss_forward(self: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None, reduction: int,
                     ignore_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    dim = 1 if self.dim() >= 2 else 0
    picked = _one_hot(_target_classes(target, ignore_index, self.shape[dim]), self.shape[dim], dim, self.dim(),
                      self.dtype)
    if weight is not None:
        shape = [1] * self.dim()
        shape[dim] = self.shape[dim]
        picked = picked * weight.view(shape)
    losses = -(self * picked).sum(dim)
    weights = picked.sum(dim)
    if reduction == REDUCTION_NONE:
        return losses, self.new_zeros(())
    total = weights.sum()
    if reduction == REDUCTION_MEAN:
        return losses.sum() / total, total
    return losses.sum(), total


def nll_loss_backward(grad_output: torch.Tensor, self: torch.Tensor, target: torch.Tensor,
                      weight: torch.Tensor | None, reduction: int, ignore_index: int,
                      total_weight: torch.Tensor) -> torch.Tensor:
    dim = 1 if self.dim() >= 2 else 0
    picked = _one_hot(_target_classes(target, ignore_index, self.shape[dim]), self.shape[dim], dim, self.dim(),
                      self.dtype)
    if weight is not None:
        shape = [1] * self.dim()
        shape[dim] = self.shape[dim]
        picked = picked * weight.view(shape)
    if reduction == REDUCTION_NONE:
        return -picked * grad_output.unsqueeze(dim)
    if reduction == REDUCTION_MEAN:
        return -picked * (grad_output / total_weight)
    return -picked * grad_output


def embedding_dense_backward(grad_output: torch.Tensor, indices: torch.Tensor, num_weights: int,
                             padding_idx: int, scale_grad_by_freq: bool) -> torch.Tensor:
    rows = indices.reshape(-1)
    if padding_idx >= 0:
        rows = torch.where(rows == padding_idx, -1, rows)
    one_hot = _one_hot(rows, num_weights, 1, 2, grad_output.dtype)  # (positions, num_weights)
    grads = grad_output.reshape(rows.shape[0], -1)
    if scale_grad_by_freq:
        counts = one_hot.sum(0).clamp(min=1)
        one_hot = one_hot / counts
    return one_hot.t() @ grads


# sqrt(2/pi): torch-mlir's gelu(approximate="tanh") carries it as 0.797724 (5e-5 off at x = 1.3).
GELU_BETA = 0.7978845608028654
GELU_KAPPA = 0.044715


def _opmath(x: torch.Tensor) -> torch.Tensor:
    # torch computes half-precision activations in float32 and rounds once.
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def gelu(self: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    if approximate != "tanh":
        return aten.gelu.default(self, approximate=approximate)
    x = _opmath(self)
    inner = GELU_BETA * (x + GELU_KAPPA * (x * x * x))
    return (0.5 * x * (1.0 + torch.tanh(inner))).to(self.dtype)


def gelu_backward(grad_output: torch.Tensor, self: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    if approximate != "tanh":
        return aten.gelu_backward.default(grad_output, self, approximate=approximate)
    x, dy = _opmath(self), _opmath(grad_output)
    x_sq = x * x
    tanh_inner = torch.tanh(GELU_BETA * (x + GELU_KAPPA * (x_sq * x)))
    left_derivative = 0.5 * (1.0 + tanh_inner)
    right_derivative = 0.5 * x * (1.0 - tanh_inner * tanh_inner) * GELU_BETA * (1.0 + 3.0 * GELU_KAPPA * x_sq)
    return (dy * (left_derivative + right_derivative)).to(self.dtype)


def _arg_extreme(op: torch._ops.OpOverload) -> Callable:
    # torch-mlir cannot lower argmax/argmin of a 0-d tensor (a `torch.constant.bool` survives);
    # its answer is the index into the one-element vector.
    def rewrite(self: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
        if self.dim() == 0:
            return op(self.reshape(1), 0)
        return op(self, dim, keepdim)

    return rewrite


def roll(self: torch.Tensor, shifts: list[int], dims: list[int] = ()) -> torch.Tensor:
    # torch-mlir has no lowering of roll: two slices concatenated per rolled dim.
    if not dims:
        return roll(self.reshape(-1), shifts, [0]).reshape(self.shape)
    out = self
    for shift, dim in zip(shifts, dims):
        n = out.shape[dim]
        shift %= n
        if shift:
            out = torch.cat([out.narrow(dim, n - shift, shift), out.narrow(dim, 0, n - shift)], dim)
    return out if out is not self else self.clone()


def _zero_d_reduction(op: torch._ops.OpOverload) -> Callable:
    # torch-mlir cannot lower a dim reduction of a 0-d tensor; over its one element it is the element.
    def rewrite(self: torch.Tensor, dim: int | list[int] | None = None, keepdim: bool = False) -> torch.Tensor:
        if self.dim() == 0:
            return op(self.reshape(1), [0] if isinstance(dim, (list, tuple)) or dim is None else 0, keepdim).reshape(())
        return op(self, dim, keepdim)

    return rewrite


def prod_dim(self: torch.Tensor, dim: int, keepdim: bool = False, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    # torch-mlir cannot lower prod.dim_int of a 0-d tensor either (masked.prod reaches it).
    if self.dim() == 0:
        return aten.prod.dim_int(self.reshape(1), 0, keepdim, dtype=dtype).reshape(())
    return aten.prod.dim_int(self, dim, keepdim, dtype=dtype)


def _zero_d_extreme(op: torch._ops.OpOverload) -> Callable:
    # max.dim / min.dim of a 0-d tensor: torch-mlir cannot lower it; the element and index 0.
    def rewrite(self: torch.Tensor, dim: int, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        if self.dim() == 0:
            return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
        return op(self, dim, keepdim)

    return rewrite


def _fextreme(pick: Callable) -> Callable:
    # fmax/fmin ignore a NaN operand; torch-mlir's own lowering breaks on broadcast operands.
    def rewrite(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        return torch.where(torch.isnan(self), other, torch.where(torch.isnan(other), self, pick(self, other)))

    return rewrite


def hypot(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    # Scaled by the larger magnitude so the squares cannot overflow, as std::hypot.
    a, b = torch.abs(_opmath(self)), torch.abs(_opmath(other))
    big, small = torch.maximum(a, b), torch.minimum(a, b)
    ratio = torch.where(big == 0, 0.0, small / big)
    return (big * torch.sqrt(1.0 + ratio * ratio)).to(torch.result_type(self, other))


def signbit(self: torch.Tensor) -> torch.Tensor:
    if not self.is_floating_point():
        return self < 0
    # -0.0 has its sign bit set: 1 / -0.0 = -inf.
    return torch.where(self == 0, torch.reciprocal(self) < 0, self < 0)


def copysign(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    dtype = torch.result_type(self, other)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    magnitude = torch.abs(self.to(dtype))
    return torch.where(signbit(other), -magnitude, magnitude)


def angle(self: torch.Tensor) -> torch.Tensor:
    x = self if self.is_floating_point() else self.to(torch.get_default_dtype())
    return torch.where(torch.isnan(x), x, torch.where(x < 0, pymath.pi, 0.0).to(x.dtype))


def addmv(self: torch.Tensor, mat: torch.Tensor, vec: torch.Tensor, *, beta: float = 1, alpha: float = 1) -> torch.Tensor:
    product = torch.mv(mat, vec)
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # self is ignored, NaN included
        return product.expand(torch.broadcast_shapes(self.shape, product.shape)).clone()
    return product + (self if beta == 1 else self * beta)


def _promoted_comparison(op: torch._ops.OpOverload) -> Callable:
    # torch compares in the promoted dtype: a 0-d float32 operand (a scalar parameter) against a
    # bfloat16 tensor is rounded to bfloat16 first (x <= 0.3 holds for x = bf16(0.3)); torch-mlir
    # compares in float32 instead.
    def rewrite(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        common = torch.result_type(self, other)
        return op(self.to(common), other.to(common))

    return rewrite


def _shrunk(self: torch.Tensor, lambd: float | torch.Tensor) -> torch.Tensor:
    """Where hardshrink/softshrink pass the gradient: outside [-lambd, lambd] (NaN included)."""
    return ~((self >= -lambd) & (self <= lambd))


def shrink_backward(grad_output: torch.Tensor, self: torch.Tensor, lambd: float | torch.Tensor) -> torch.Tensor:
    return torch.where(_shrunk(self, lambd), grad_output, 0).to(grad_output.dtype)


def hardshrink(self: torch.Tensor, lambd: float | torch.Tensor = 0.5) -> torch.Tensor:
    return torch.where(_shrunk(self, lambd), self, 0).to(self.dtype)


def softshrink(self: torch.Tensor, lambd: float | torch.Tensor = 0.5) -> torch.Tensor:
    # x * 0 keeps a NaN, as the CPU kernel's `a * 0`.
    return torch.where(self > lambd, self - lambd, torch.where(self < -lambd, self + lambd, self * 0)).to(self.dtype)


def prelu_kernel(self: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return torch.where(self > 0, self, weight * self)


def prelu_kernel_backward(grad_output: torch.Tensor, self: torch.Tensor,
                          weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # The weight's gradient in the broadcast shape: autograd sums it down to the weight's shape.
    positive = self > 0
    return torch.where(positive, grad_output, weight * grad_output), torch.where(positive, 0, self * grad_output)


def linalg_cross(self: torch.Tensor, other: torch.Tensor, *, dim: int = -1) -> torch.Tensor:
    a, b = torch.broadcast_tensors(self, other)
    a0, a1, a2 = (a.narrow(dim, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(dim, i, 1) for i in range(3))
    return torch.cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def repeat(self: torch.Tensor, repeats: list[int]) -> torch.Tensor:
    # torch-mlir's repeat lowering divides by zero in the compile worker (SIGFPE): each repeated
    # dim becomes an expanded leading copy axis, flattened into it.
    sizes = [1] * (len(repeats) - self.dim()) + list(self.shape)
    spread, expanded, flat = [], [], []
    for count, size in zip(repeats, sizes):
        spread += [1, size]
        expanded += [count, size]
        flat.append(count * size)
    return self.reshape(spread).expand(expanded).reshape(flat).clone()


def eye(n: int, m: int | None = None, *, dtype: torch.dtype | None = None, **_: object) -> torch.Tensor:
    # torch-mlir's eye lowering crashes the compile worker: ones where the row equals the column.
    columns = n if m is None else m
    rows = torch.arange(n).unsqueeze(-1)
    return (rows == torch.arange(columns)).to(dtype or torch.get_default_dtype())


RETRACED: dict[torch._ops.OpOverload, Callable] = {
    aten.argmax.default: _arg_extreme(aten.argmax.default),
    aten.argmin.default: _arg_extreme(aten.argmin.default),
    aten.gelu.default: gelu,
    aten.gelu_backward.default: gelu_backward,
    aten.nll_loss_forward.default: nll_loss_forward,
    aten.nll_loss_backward.default: nll_loss_backward,
    # nll_loss_forward/backward take any trailing dims: classes are dim 1 from two dims up.
    aten.nll_loss2d_forward.default: nll_loss_forward,
    aten.nll_loss2d_backward.default: nll_loss_backward,
    aten.hardshrink_backward.default: shrink_backward,
    aten.softshrink_backward.default: shrink_backward,
    aten.softshrink.default: softshrink,
    aten.hardshrink.default: hardshrink,
    aten._prelu_kernel.default: prelu_kernel,
    aten._prelu_kernel_backward.default: prelu_kernel_backward,
    aten.linalg_cross.default: linalg_cross,
    aten.repeat.default: repeat,
    aten.embedding_dense_backward.default: embedding_dense_backward,
    **{op: _promoted_comparison(op) for op in (aten.eq.Tensor, aten.ne.Tensor, aten.lt.Tensor, aten.le.Tensor,
                                                aten.gt.Tensor, aten.ge.Tensor)},
    aten.roll.default: roll,
    **{op: _zero_d_reduction(op) for op in (aten.amax.default, aten.amin.default, aten.all.dim, aten.any.dim,
                                             aten.all.dims, aten.any.dims)},
    aten.prod.dim_int: prod_dim,
    aten.eye.default: eye,
    aten.eye.m: eye,
    aten.max.dim: _zero_d_extreme(aten.max.dim),
    aten.min.dim: _zero_d_extreme(aten.min.dim),
    aten.fmax.default: _fextreme(torch.maximum),
    aten.fmin.default: _fextreme(torch.minimum),
    aten.hypot.default: hypot,
    aten.signbit.default: signbit,
    aten.copysign.Tensor: copysign,
    aten.angle.default: angle,
    aten.addmv.default: addmv,
    **MASKED,
    **DIVISION,
    **HALF_REDUCTIONS,
    **INDEXING,
    **INTEGER,
    **POWERS,
    **RECURRENT,
    **FLOATING,
    **RESAMPLING,
    **SPECIAL,
}

# Batch norm's rewrites live with the facts about its running statistics.
RETRACED.update(_BATCH_NORM)
RETRACED.update(_NORMALIZATION)  # layer / group norm backwards: every gradient, whatever the mask

# Convolutions as GEMMs and scatter-free pooling backwards: every stride / padding / dilation / groups;
# addcdiv/addcmul taking `value` as a kernel parameter.
RETRACED.update(_CONVOLUTION)
RETRACED.update(_POOLING)
RETRACED.update(_SCALED_POINTWISE)  # value as a kernel parameter (plan.PARAMETER_RETRACES)
