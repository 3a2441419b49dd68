"""References of the fused optimizer steps: one kernel per combined buffer per step (torch_npu.optim),
and the per-tensor steps of torch's fused=True Adam / AdamW / SGD (also what torch_npu.optim's
NpuFusedAdam, NpuFusedAdamW and NpuFusedSGD run over their combined buffers).

Each takes a dtype's combined parameter, gradient and state buffers (flat, contiguous) and returns
their updated values: torch_npu.optim copies the parameter back and re-seats the states on the
results; csrc/aten/FusedOptimOps.cpp writes the per-tensor steps' results straight into the buffers.
Hyperparameters and the per-step bias corrections are `float` (kernel parameters: a new learning
rate or step does not recompile). Math is float32 whatever the storage dtype, rounded once per result,
so float16 and bfloat16 parameters lose no precision between the update's terms.
Plain torch (listed in references/__init__.py): no torch_npu import.
"""

from __future__ import annotations

import torch


def _adam_moments(grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor, beta1: float,
                  beta2: float) -> tuple[torch.Tensor, torch.Tensor]:
    m = exp_avg.float() * beta1 + grad * (1 - beta1)
    v = exp_avg_sq.float() * beta2 + grad * grad * (1 - beta2)
    return m, v


def _npu_fused_adadelta(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor, acc_delta: torch.Tensor,
                        lr: float, rho: float, eps: float,
                        weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Adadelta: the step is the gradient scaled by RMS(past steps) / RMS(gradients)."""
    p = param.float()
    g = grad.float() + weight_decay * p
    sq = square_avg.float() * rho + g * g * (1 - rho)
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
    the right shape otherwise, and ignore that result).
    """
    p, g = param.float(), grad.float()
    if tf_style and decoupled_decay:
        p = p * (1 - weight_decay)
    else:
        g = g + weight_decay * p
    sq = square_avg.float() * alpha + g * g * (1 - alpha)
    ga = grad_avg.float()
    if centered:
        ga = ga * alpha + g * (1 - alpha)
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
    return p.to(param.dtype), sq.to(square_avg.dtype), ga.to(grad_avg.dtype), buf.to(momentum_buffer.dtype)


def _npu_fused_bert_adam(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                         clip_coef: torch.Tensor, lr: float, beta1: float, beta2: float, eps: float,
                         weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(param, exp_avg, exp_avg_sq, clipped grad) after BERT's Adam step: no bias correction, decoupled decay
    added to the update, the gradient first scaled by clip_coef (a device scalar: min(1, max_norm / norm))."""
    g = grad.float() * clip_coef.reshape(()).float()
    m, v = _adam_moments(g, exp_avg, exp_avg_sq, beta1, beta2)
    p = param.float()
    update = m / (v.sqrt() + eps) + weight_decay * p
    return (p - lr * update).to(param.dtype), m.to(exp_avg.dtype), v.to(exp_avg_sq.dtype), g.to(grad.dtype)


def _npu_fused_lamb_moments(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                            grad_divisor: torch.Tensor, beta1: float, beta2: float, eps: float,
                            weight_decay: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(exp_avg, exp_avg_sq, float32 Adam step) of LAMB; the gradient is divided by grad_divisor (a device
    scalar: the global gradient norm when it exceeds 1). The per-parameter trust ratio is applied after."""
    g = grad.float() / grad_divisor.reshape(()).float()
    m, v = _adam_moments(g, exp_avg, exp_avg_sq, beta1, beta2)
    adam_step = m / (v.sqrt() + eps) + weight_decay * param.float()
    return m.to(exp_avg.dtype), v.to(exp_avg_sq.dtype), adam_step


# torch.optim's fused=True path (aten::_fused_adam_ / _fused_adamw_ / _fused_sgd_, one kernel per tensor):
# the step count is a device tensor, grad_scale divides the gradient (stored back unscaled) and a
# nonzero found_inf leaves every tensor as it was, as torch's CUDA kernels do - all without a host sync.
def _npu_fused_adam_tensor_step(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor,
                                exp_avg_sq: torch.Tensor, max_exp_avg_sq: torch.Tensor, step: torch.Tensor,
                                grad_scale: torch.Tensor, found_inf: torch.Tensor, lr: float, beta1: float,
                                beta2: float, weight_decay: float, eps: float, amsgrad: bool, maximize: bool,
                                decoupled_weight_decay: bool) -> tuple[torch.Tensor, ...]:
    """(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq) after one Adam/AdamW step of torch's fused kernel."""
    skip = found_inf.reshape(()) != 0
    unscaled = grad.float() / grad_scale.reshape(()).float()
    g = -unscaled if maximize else unscaled
    p = param.float()
    if decoupled_weight_decay:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    m, v = _adam_moments(g, exp_avg, exp_avg_sq, beta1, beta2)
    v_max = torch.maximum(max_exp_avg_sq.float(), v) if amsgrad else v
    t = step.reshape(()).float()
    bias_correction1 = 1 - torch.pow(beta1, t)
    bias_correction2_sqrt = (1 - torch.pow(beta2, t)).sqrt()
    p = p - (lr / bias_correction1) * (m / (v_max.sqrt() / bias_correction2_sqrt + eps))
    new = (p, unscaled, m, v, v_max)
    old = (param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq)
    # The flag expanded to the tensor's shape: the selects fuse into the step's one elementwise kernel.
    results = tuple(torch.where(skip.expand(o.shape), o, n.to(o.dtype)) for o, n in zip(old, new))
    if not amsgrad:  # the caller drops the fifth result: it need not read max_exp_avg_sq
        results = results[:4] + (v_max.to(max_exp_avg_sq.dtype),)
    return results


def _npu_fused_sgd_tensor_step(param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor,
                               grad_scale: torch.Tensor, found_inf: torch.Tensor, weight_decay: float,
                               momentum: float, lr: float, dampening: float, nesterov: bool, maximize: bool,
                               is_first_step: bool, use_momentum: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(param, grad, momentum_buffer) after one SGD step of torch's fused kernel."""
    skip = found_inf.reshape(()) != 0
    unscaled = grad.float() / grad_scale.reshape(()).float()
    g = -unscaled if maximize else unscaled
    p = param.float()
    g = g + weight_decay * p
    buf = momentum_buffer.float()
    if use_momentum:
        buf = g if is_first_step else buf * momentum + g * (1 - dampening)
        g = g + momentum * buf if nesterov else buf
    p = p - lr * g
    new = (p, unscaled, buf)
    old = (param, grad, momentum_buffer)
    # The flag expanded to the tensor's shape: the selects fuse into the step's one elementwise kernel.
    results = tuple(torch.where(skip.expand(o.shape), o, n.to(o.dtype)) for o, n in zip(old, new))
    if not use_momentum:  # the caller drops the third result: it need not read momentum_buffer
        results = results[:2] + (torch.zeros_like(momentum_buffer),)
    return results


REFERENCES = {
    "_npu_fused_adadelta": _npu_fused_adadelta,
    "_npu_fused_rmsprop": _npu_fused_rmsprop,
    "_npu_fused_bert_adam": _npu_fused_bert_adam,
    "_npu_fused_lamb_moments": _npu_fused_lamb_moments,
    "_npu_fused_adam_tensor_step": _npu_fused_adam_tensor_step,
    "_npu_fused_sgd_tensor_step": _npu_fused_sgd_tensor_step,
}
