"""The fused LSTM / GRU cell ops that nn.LSTM, nn.GRU and their cells call on an accelerator.

aten's lstm_cell / gru_cell compute the gate matmuls, then, on CUDA and PrivateUse1 alike, hand the
pointwise rest to `_thnn_fused_lstm_cell` / `_thnn_fused_gru_cell`, which have no CPU kernel: every
nn.LSTM and nn.GRU on npu raised NotImplementedError. Here they are the cells' pointwise math, one
kernel each, with the backward from the same workspace CUDA's kernels keep (the activated gates; for
GRU also hx and the hidden n gate). Imported by retrace.py.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def _biased(gates: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return gates if bias is None else gates + bias


def lstm_cell(input_gates: torch.Tensor, hidden_gates: torch.Tensor, cx: torch.Tensor,
              input_bias: torch.Tensor | None = None,
              hidden_bias: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(hy, cy, workspace): workspace holds the activated gates i, f, g, o."""
    gates = _biased(input_gates, input_bias) + _biased(hidden_gates, hidden_bias)
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    cy = f * cx + i * g
    return o * torch.tanh(cy), cy, torch.cat([i, f, g, o], 1)


def lstm_cell_backward(grad_hy: torch.Tensor | None, grad_cy: torch.Tensor | None, cx: torch.Tensor,
                       cy: torch.Tensor, workspace: torch.Tensor,
                       has_bias: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(grad of the gates, grad of cx, grad of the bias: the gates' grad summed over the batch)."""
    i, f, g, o = workspace.chunk(4, 1)
    grad_hy = torch.zeros_like(cy) if grad_hy is None else grad_hy
    tanh_cy = torch.tanh(cy)
    grad_c = grad_hy * o * (1 - tanh_cy * tanh_cy)
    if grad_cy is not None:
        grad_c = grad_c + grad_cy
    grad_gates = torch.cat([grad_c * g * i * (1 - i), grad_c * cx * f * (1 - f), grad_c * i * (1 - g * g),
                            grad_hy * tanh_cy * o * (1 - o)], 1)
    grad_bias = grad_gates.sum(0) if has_bias else torch.zeros_like(grad_gates[0])
    return grad_gates, grad_c * f, grad_bias


def gru_cell(input_gates: torch.Tensor, hidden_gates: torch.Tensor, hx: torch.Tensor,
             input_bias: torch.Tensor | None = None,
             hidden_bias: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(hy, workspace): workspace holds r, z, n, hx and the hidden n gate."""
    ir, ii, in_ = _biased(input_gates, input_bias).chunk(3, 1)
    hr, hi, hn = _biased(hidden_gates, hidden_bias).chunk(3, 1)
    r, z = torch.sigmoid(ir + hr), torch.sigmoid(ii + hi)
    n = torch.tanh(in_ + r * hn)
    return n + z * (hx - n), torch.cat([r, z, n, hx, hn], 1)


def gru_cell_backward(grad_hy: torch.Tensor, workspace: torch.Tensor,
                      has_bias: bool) -> tuple[torch.Tensor, ...]:
    """(grad of input gates, of hidden gates, of hx, of input bias, of hidden bias)."""
    r, z, n, hx, hn = workspace.chunk(5, 1)
    grad_n = grad_hy * (1 - z) * (1 - n * n)
    grad_r = grad_n * hn * r * (1 - r)
    grad_z = grad_hy * (hx - n) * z * (1 - z)
    grad_input = torch.cat([grad_r, grad_z, grad_n], 1)
    grad_hidden = torch.cat([grad_r, grad_z, grad_n * r], 1)
    if has_bias:
        return grad_input, grad_hidden, grad_hy * z, grad_input.sum(0), grad_hidden.sum(0)
    zeros = torch.zeros_like(grad_input[0])
    return grad_input, grad_hidden, grad_hy * z, zeros, zeros


RECURRENT: dict[torch._ops.OpOverload, object] = {
    aten._thnn_fused_lstm_cell.default: lstm_cell,
    aten._thnn_fused_lstm_cell_backward_impl.default: lstm_cell_backward,
    aten._thnn_fused_gru_cell.default: gru_cell,
    aten._thnn_fused_gru_cell_backward.default: gru_cell_backward,
}
