"""References of the fused optimizer steps: one kernel per combined buffer per step (torch_npu.optim),
and the per-tensor steps of torch's fused=True Adam / AdamW / SGD (also what torch_npu.optim's
NpuFusedAdam, NpuFusedAdamW and NpuFusedSGD run over their combined buffers).

Each takes a dtype's combined parameter, gradient and state buffers (flat, contiguous; or, for
torch.optim's fused path, one tensor's) and returns their updated values, which
csrc/aten/FusedOptimOps.cpp writes straight back into the buffers (in place, one multi-tensor launch
per buffer or dtype group). A result the caller does not keep is an empty tensor: nothing writes it.
Hyperparameters and the per-step bias corrections are `float` (kernel parameters: a new learning
rate or step does not recompile). Math is float32 whatever the storage dtype, rounded once per result,
so float16 and bfloat16 parameters lose no precision between the update's terms.
Plain torch (listed in references/__init__.py): no torch_npu import.
"""

from __future__ import annotations

import torch


def _twins(x: torch.Tensor, a, y: torch.Tensor, b, b_negated, count: int) -> list[torch.Tensor]:
    """x*a + y*b, `count` times from different ops (1 to 3) with the same bits: x*a - y*b_negated and
    x*a - (-(y*b)), where b_negated is -b computed from the same parameters (negation commutes with
    round-to-nearest). One can be a result while another feeds another result."""
    forms = [lambda: x * a + y * b, lambda: x * a - y * b_negated, lambda: x * a - (-(y * b))]
    return [form() for form in forms[:count]]


def _pair(x: torch.Tensor, a, y: torch.Tensor, b, b_negated, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(x*a + y*b, its twin): distinct ops only when the result is `state`'s float32 value itself
    (a float16 / bfloat16 result is a cast, so the update reads the uncast value anyway)."""
    first, *rest = _twins(x, a, y, b, b_negated, 2 if state.dtype == torch.float32 else 1)
    return first, rest[0] if rest else first


def _pair_sum(x: torch.Tensor, a, y: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(x*a + y, its twin x*a - (-y)), as _pair."""
    first = x * a + y
    return first, (x * a - (-y) if state.dtype == torch.float32 else first)


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
    sq, sq_read = _pair(square_avg.float(), rho, g * g, 1 - rho, rho - 1, square_avg)
    delta = (acc_delta.float() + eps).sqrt() / (sq_read + eps).sqrt() * g
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
    # Results that the update reads come in twins (see _twins): the kernel then splits over the cores.
    sq, sq_read = _pair(square_avg.float(), alpha, g * g, 1 - alpha, alpha - 1, square_avg)
    ga = grad_avg.float()
    if centered:
        ga, ga_read = _pair(ga, alpha, g, 1 - alpha, alpha - 1, grad_avg)
        var = sq_read - ga_read * ga_read
    else:
        var = sq_read
    avg = (var + eps).sqrt() if tf_style else var.sqrt() + eps
    buf = momentum_buffer.float()
    if not use_momentum:
        p = p - lr * g / avg
    elif tf_style and lr_in_momentum:
        buf, buf_read = _pair_sum(buf, momentum, lr * g / avg, momentum_buffer)
        p = p - buf_read
    else:
        buf, buf_read = _pair_sum(buf, momentum, g / avg, momentum_buffer)
        p = p - lr * buf_read
    return (p.to(param.dtype), sq.to(square_avg.dtype), ga.to(grad_avg.dtype) if centered else _dropped(grad_avg, 1),
            buf.to(momentum_buffer.dtype) if use_momentum else _dropped(momentum_buffer, 2))


def _npu_fused_bert_adam(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                         clip_coef: torch.Tensor, lr: float, beta1: float, beta2: float, eps: float,
                         weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(param, exp_avg, exp_avg_sq, clipped grad) after BERT's Adam step: no bias correction, decoupled decay
    added to the update, the gradient first scaled by clip_coef (a device scalar: min(1, max_norm / norm))."""
    clip = clip_coef.reshape(()).float()
    # The clipped gradient is a result: it is -((-grad) * clip) and the moments read its twin
    # (-grad) * (-clip) - one shared -grad, so both stay in one kernel - and the update reads the
    # moments' twins (see _twins): the kernel splits over the cores.
    if grad.dtype == torch.float32:
        negated = -grad
        g, g_read = -(negated * clip), negated * (-clip)
    else:
        g = g_read = grad.float() * clip
    m, m_read = _pair(exp_avg.float(), beta1, g_read, 1 - beta1, beta1 - 1, exp_avg)
    v, v_read = _pair(exp_avg_sq.float(), beta2, g_read * g_read, 1 - beta2, beta2 - 1, exp_avg_sq)
    p = param.float()
    update = m_read / (v_read.sqrt() + eps) + weight_decay * p
    return (p - lr * update).to(param.dtype), m.to(exp_avg.dtype), v.to(exp_avg_sq.dtype), g.to(grad.dtype)


def _npu_fused_lamb_moments(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                            grad_divisor: torch.Tensor, beta1: float, beta2: float, eps: float,
                            weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(exp_avg, exp_avg_sq, float32 Adam step) of LAMB; the gradient is divided by grad_divisor (a device
    scalar: the global gradient norm when it exceeds 1). The per-parameter trust ratio is applied after."""
    g = grad.float() / grad_divisor.reshape(()).float()
    m, m_read = _pair(exp_avg.float(), beta1, g, 1 - beta1, beta1 - 1, exp_avg)
    v, v_read = _pair(exp_avg_sq.float(), beta2, g * g, 1 - beta2, beta2 - 1, exp_avg_sq)
    adam_step = m_read / (v_read.sqrt() + eps) + weight_decay * param.float()
    return m.to(exp_avg.dtype), v.to(exp_avg_sq.dtype), adam_step


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
# - a result never feeds another: the update reads moments recomputed by other (bit-identical) ops,
#   since the simulator splits a kernel over blocks only when its results are independent.


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
    # Unscaled, the results are the moments themselves: the update (and max_exp_avg_sq) read twins.
    twins = 1 if scaled else 3 if amsgrad else 2
    m, *m_read = _twins(exp_avg.float(), beta1, g, 1 - beta1, beta1 - 1, min(twins, 2))
    v, *v_other = _twins(exp_avg_sq.float(), beta2, g * g, 1 - beta2, beta2 - 1, twins)
    m_read = m_read[0] if m_read else m
    v_read = v_other[0] if v_other else v
    v_max = torch.maximum(max_exp_avg_sq.float(), v_other[-1] if v_other else v) if amsgrad else v
    v_max_read = torch.maximum(max_exp_avg_sq.float(), v_read) if amsgrad else v_read
    p = p - step_size * (m_read / (v_max_read.sqrt() * inv_bc2_sqrt + eps))
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
    # Unscaled, the buffer is a result itself: the update reads a twin of it.
    distinct = not scaled and use_momentum
    g_read = g = (g_in := g) + weight_decay * p
    if distinct and is_first_step:
        g_read = weight_decay * p - (-g_in)
    buf = momentum_buffer.float()
    if use_momentum:
        if is_first_step:
            buf, buf_read = g, g_read
        else:
            buf, *rest = _twins(buf, momentum, g, 1 - dampening, dampening - 1, 2 if distinct else 1)
            buf_read = rest[0] if rest else buf
        g_read = g_read + momentum * buf_read if nesterov else buf_read
    p = p - lr * g_read
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


REFERENCES = {
    "_npu_fused_adadelta": _npu_fused_adadelta,
    "_npu_fused_rmsprop": _npu_fused_rmsprop,
    "_npu_fused_bert_adam": _npu_fused_bert_adam,
    "_npu_fused_lamb_moments": _npu_fused_lamb_moments,
    "_npu_fused_adam_tensor_step": _npu_fused_adam_tensor_step,
    "_npu_fused_sgd_tensor_step": _npu_fused_sgd_tensor_step,
}
