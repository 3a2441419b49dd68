"""References of the fused optimizer steps: one kernel per combined buffer per step (torch_npu.optim),
and the per-tensor steps of torch's fused=True Adam / AdamW / SGD (also what torch_npu.optim's
NpuFusedAdam, NpuFusedAdamW and NpuFusedSGD run over their combined buffers), and the lerp of
torch.optim's foreach Adam.

Each takes a dtype's combined parameter, gradient and state buffers (flat, contiguous; or, for
torch.optim's fused path, one tensor's) and returns their updated values, which
csrc/aten/FusedOptimOps.cpp writes straight back into the buffers (in place, one multi-tensor launch
per buffer or dtype group). A result the caller does not keep is an empty tensor: nothing writes it.
Hyperparameters and the per-step bias corrections are `float` (kernel parameters: a new learning
rate or step does not recompile). Math is float32 whatever the storage dtype, rounded once per result,
so float16 and bfloat16 parameters lose no precision between the update's terms. A result may feed
another (the update reads the moments it returns): the simulator's block split recomputes that slice.
Plain torch (listed in references/__init__.py): no torch_npu import.
"""

from __future__ import annotations

import torch


def _average(x: torch.Tensor, a, y: torch.Tensor, b) -> torch.Tensor:
    """x*a + y*b: a running average's update."""
    return x * a + y * b


def _dropped(like: torch.Tensor, rank: int) -> torch.Tensor:
    """An empty result: each dropped result of a step gets its own rank, so two are never one value
    (which the launch list would copy into the other)."""
    return like.new_empty((0,) * rank)


def _npu_fused_adadelta(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor, acc_delta: torch.Tensor,
                        lr: float, rho: float, eps: float,
                        weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Adadelta: the step is the gradient scaled by RMS(past steps) / RMS(gradients)."""
    p = param.float()
    g = grad.float() + weight_decay * p
    sq = _average(square_avg.float(), rho, g * g, 1 - rho)
    delta = (acc_delta.float() + eps).sqrt() / (sq + eps).sqrt() * g
    acc = acc_delta.float() * rho + delta * delta * (1 - rho)
    return (p - lr * delta).to(param.dtype), sq.to(square_avg.dtype), acc.to(acc_delta.dtype)


def _npu_fused_rmsprop(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor, grad_avg: torch.Tensor,
                       momentum_buffer: torch.Tensor, lr: float, alpha: float, eps: float, weight_decay: float,
                       momentum: float, centered: bool, use_momentum: bool, tf_style: bool, decoupled_decay: bool,
                       lr_in_momentum: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """RMSprop as torch.optim.RMSprop, or (tf_style) as TensorFlow: eps inside the square root, optional
    decoupled weight decay and the learning rate folded into the momentum buffer.

    grad_avg / momentum_buffer are only read when centered / use_momentum (callers pass any buffer of
    the right shape otherwise); their results are empty then.
    """
    p, g = param.float(), grad.float()
    if tf_style and decoupled_decay:
        p = p * (1 - weight_decay)
    else:
        g = g + weight_decay * p
    sq = _average(square_avg.float(), alpha, g * g, 1 - alpha)
    ga = grad_avg.float()
    if centered:
        ga = _average(ga, alpha, g, 1 - alpha)
        var = sq - ga * ga
    else:
        var = sq
    avg = (var + eps).sqrt() if tf_style else var.sqrt() + eps
    buf = momentum_buffer.float()
    if not use_momentum:
        p = p - lr * g / avg
    elif tf_style and lr_in_momentum:
        buf = buf * momentum + lr * g / avg
        p = p - buf
    else:
        buf = buf * momentum + g / avg
        p = p - lr * buf
    return (p.to(param.dtype), sq.to(square_avg.dtype), ga.to(grad_avg.dtype) if centered else _dropped(grad_avg, 1),
            buf.to(momentum_buffer.dtype) if use_momentum else _dropped(momentum_buffer, 2))


def _npu_fused_bert_adam(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                         clip_coef: torch.Tensor, lr: float, beta1: float, beta2: float, eps: float,
                         weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(param, exp_avg, exp_avg_sq, clipped grad) after BERT's Adam step: no bias correction, decoupled decay
    added to the update, the gradient first scaled by clip_coef (a device scalar: min(1, max_norm / norm))."""
    g = grad.float() * clip_coef.reshape(()).float()
    m = _average(exp_avg.float(), beta1, g, 1 - beta1)
    v = _average(exp_avg_sq.float(), beta2, g * g, 1 - beta2)
    p = param.float()
    update = m / (v.sqrt() + eps) + weight_decay * p
    return (p - lr * update).to(param.dtype), m.to(exp_avg.dtype), v.to(exp_avg_sq.dtype), g.to(grad.dtype)


def _npu_fused_lamb_moments(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                            grad_divisor: torch.Tensor, beta1: float, beta2: float, eps: float,
                            weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(exp_avg, exp_avg_sq, float32 Adam step) of LAMB; the gradient is divided by grad_divisor (a device
    scalar: the global gradient norm when it exceeds 1). The per-parameter trust ratio is applied after."""
    g = grad.float() / grad_divisor.reshape(()).float()
    m = _average(exp_avg.float(), beta1, g, 1 - beta1)
    v = _average(exp_avg_sq.float(), beta2, g * g, 1 - beta2)
    adam_step = m / (v.sqrt() + eps) + weight_decay * param.float()
    return m.to(exp_avg.dtype), v.to(exp_avg_sq.dtype), adam_step


def _npu_fused_adamp_moments(grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor, beta1: float,
                             beta2: float, eps: float, bias_correction2_sqrt: float,
                             nesterov: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(exp_avg, exp_avg_sq, float32 step before AdamP's projection): Adam's moments, the step
    numerator / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps), its numerator Nesterov's when asked."""
    g = grad.float()
    m = _average(exp_avg.float(), beta1, g, 1 - beta1)
    v = _average(exp_avg_sq.float(), beta2, g * g, 1 - beta2)
    numer = m * beta1 + g * (1 - beta1) if nesterov else m
    return m.to(exp_avg.dtype), v.to(exp_avg_sq.dtype), numer / (v.sqrt() / bias_correction2_sqrt + eps)


def _npu_fused_adamp_update(param: torch.Tensor, perturb: torch.Tensor, wd_ratio: torch.Tensor, lr: float,
                            weight_decay: float, step_size: float) -> torch.Tensor:
    """The parameter after AdamP's step: decayed by lr * weight_decay * wd_ratio (per element: each
    parameter's ratio), minus step_size times the projected step; float32, rounded once."""
    p = param.float()
    return (p * (1 - lr * weight_decay * wd_ratio) - step_size * perturb).to(param.dtype)


# torch.optim's fused=True path (aten::_fused_adam_ / _fused_adamw_ / _fused_sgd_), one multi-tensor launch
# per dtype group of these per-chunk steps (csrc/aten/FusedOptimOps.cpp): the step count is a device
# tensor, grad_scale divides the gradient (stored back unscaled) and a nonzero found_inf leaves every
# tensor as it was, as torch's CUDA kernels do - all without a host sync. Each chunk is one vector
# kernel over every state (one pass over memory, split over the cores, with AscendC), plus two
# one-element kernels for the bias corrections. What keeps it one split vector kernel:
# - `scaled` (compiled in) says whether grad_scale / found_inf exist; without them there is no
#   select and the gradient is not written. A result the caller drops is an empty tensor (no kernel
#   writes it, no buffer holds it): the unscaled gradient when not `scaled`, max_exp_avg_sq without
#   amsgrad.
# - found_inf is compared with `zeros` (a chunk of zeros the caller passes): a vector compare with a
#   scalar, so the skip mask is computed inside the kernel, not in a scalar kernel of its own.


def _adam_bias_corrections(step: torch.Tensor, lr, beta1, beta2) -> tuple[torch.Tensor, torch.Tensor]:
    """(lr / (1 - beta1^t), 1 / sqrt(1 - beta2^t)) as 0-d float32: computed on a one-element tensor
    (vector ops, AscendC's Power/Rsqrt) and read by the step's kernel as scalars. float32 pow of the
    float32-rounded beta: 1.3e-5 relative error for beta2 = 0.999 at t = 1 (torch's CUDA kernel uses double)."""
    t = step.reshape(1).float()
    step_size = lr / (1 - torch.pow(beta1, t))
    inv_bias_correction2_sqrt = (1 - torch.pow(beta2, t)).rsqrt()
    return step_size.reshape(()), inv_bias_correction2_sqrt.reshape(())


def _npu_fused_adam_tensor_step(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor,
                                exp_avg_sq: torch.Tensor, max_exp_avg_sq: torch.Tensor, step: torch.Tensor,
                                grad_scale: torch.Tensor, found_inf: torch.Tensor, zeros: torch.Tensor, lr: float,
                                beta1: float, beta2: float, weight_decay: float, eps: float, amsgrad: bool,
                                maximize: bool, decoupled_weight_decay: bool, scaled: bool) -> tuple[torch.Tensor, ...]:
    """(param, unscaled grad, exp_avg, exp_avg_sq, max_exp_avg_sq) after one Adam/AdamW step of torch's
    fused kernel; the grad result is empty unless `scaled`, max_exp_avg_sq's unless `amsgrad`."""
    step_size, inv_bc2_sqrt = _adam_bias_corrections(step, lr, beta1, beta2)
    unscaled = grad.float() * (1 / grad_scale.reshape(()).float()) if scaled else grad.float()
    g = -unscaled if maximize else unscaled
    p = param.float()
    if decoupled_weight_decay:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    m = _average(exp_avg.float(), beta1, g, 1 - beta1)
    v = _average(exp_avg_sq.float(), beta2, g * g, 1 - beta2)
    v_max = torch.maximum(max_exp_avg_sq.float(), v) if amsgrad else v
    p = p - step_size * (m / (v_max.sqrt() * inv_bc2_sqrt + eps))
    new = (p, unscaled, m, v, v_max)
    old = (param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq)
    if scaled:
        skip = zeros != found_inf.reshape(()).float()
        results = [torch.where(skip, o, n.to(o.dtype)) for o, n in zip(old, new)]
    else:
        results = [n.to(o.dtype) for o, n in zip(old, new)]
        results[1] = _dropped(grad, 1)
    if not amsgrad:
        results[4] = _dropped(max_exp_avg_sq, 2)
    return tuple(results)


def _npu_fused_sgd_tensor_step(param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor,
                               grad_scale: torch.Tensor, found_inf: torch.Tensor, zeros: torch.Tensor,
                               weight_decay: float, momentum: float, lr: float, dampening: float, nesterov: bool,
                               maximize: bool, is_first_step: bool, use_momentum: bool,
                               scaled: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(param, unscaled grad, momentum_buffer) after one SGD step of torch's fused kernel; the grad result
    is empty unless `scaled`, the buffer's unless `use_momentum`."""
    unscaled = grad.float() * (1 / grad_scale.reshape(()).float()) if scaled else grad.float()
    g = -unscaled if maximize else unscaled
    p = param.float()
    g = g + weight_decay * p
    buf = momentum_buffer.float()
    if use_momentum:
        buf = g if is_first_step else _average(buf, momentum, g, 1 - dampening)
        g = g + momentum * buf if nesterov else buf
    p = p - lr * g
    new = (p, unscaled, buf)
    old = (param, grad, momentum_buffer)
    if scaled:
        skip = zeros != found_inf.reshape(()).float()
        results = [torch.where(skip, o, n.to(o.dtype)) for o, n in zip(old, new)]
    else:
        results = [n.to(o.dtype) for o, n in zip(old, new)]
        results[1] = _dropped(grad, 1)
    if not use_momentum:
        results[2] = _dropped(momentum_buffer, 2)
    return tuple(results)


# torch.optim's foreach path: _foreach_lerp_.Scalar (Adam's first moment) as one vector kernel. aten's
# lerp decomposes into a select on the scalar weight, which leaves its kernel opaque (one block); here the
# host picks torch's formula for the weight (|weight| < 0.5 or not), compiled in, and the kernel has no select.


def _npu_lerp_scalar(self: torch.Tensor, end: torch.Tensor, weight: float, large_weight: bool) -> torch.Tensor:
    """torch.lerp(self, end, weight) for a number weight: self + weight * (end - self), or for
    |weight| >= 0.5 (`large_weight`) end - (end - self) * (1 - weight), as aten computes it; float32
    arithmetic for float16 / bfloat16, rounded once."""
    start, stop = self.float(), end.float()
    diff = stop - start
    result = stop - diff * (1 - weight) if large_weight else start + weight * diff
    return result.to(self.dtype)


REFERENCES = {
    "_npu_fused_adadelta": _npu_fused_adadelta,
    "_npu_fused_rmsprop": _npu_fused_rmsprop,
    "_npu_fused_bert_adam": _npu_fused_bert_adam,
    "_npu_fused_lamb_moments": _npu_fused_lamb_moments,
    "_npu_fused_adamp_moments": _npu_fused_adamp_moments,
    "_npu_fused_adamp_update": _npu_fused_adamp_update,
    "_npu_lerp_scalar": _npu_lerp_scalar,
    "_npu_fused_adam_tensor_step": _npu_fused_adam_tensor_step,
    "_npu_fused_sgd_tensor_step": _npu_fused_sgd_tensor_step,
}
