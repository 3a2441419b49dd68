"""nn.LSTM, nn.GRU and their cells train on npu as on CPU: aten hands their pointwise half to
_thnn_fused_lstm_cell / _thnn_fused_gru_cell on an accelerator, which had no npu kernel (every
LSTM / GRU raised NotImplementedError); decompositions/recurrent.py compiles them and their backwards."""

from __future__ import annotations

import copy

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

_MODULES = {
    "lstm": lambda bias: torch.nn.LSTM(5, 4, num_layers=2, batch_first=True, bias=bias),
    "gru": lambda bias: torch.nn.GRU(5, 4, num_layers=2, batch_first=True, bias=bias),
    "lstm_cell": lambda bias: torch.nn.LSTMCell(5, 4, bias=bias),
    "gru_cell": lambda bias: torch.nn.GRUCell(5, 4, bias=bias),
}


def _loss(module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    out = module(x)
    out = out[0] if isinstance(out, tuple) else out
    return (out * torch.linspace(-1, 1, out.shape[-1], device=x.device)).sum()


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("name", sorted(_MODULES))
def test_recurrent_module_matches_cpu(name, bias, eager_stats):
    torch.manual_seed(0)
    cpu = _MODULES[name](bias)
    npu = copy.deepcopy(cpu).to("npu")
    x = torch.randn(3, 5) if name.endswith("cell") else torch.randn(2, 6, 5)
    loss_cpu, loss_npu = _loss(cpu, x), _loss(npu, x.npu())
    loss_cpu.backward()
    loss_npu.backward()
    torch.testing.assert_close(loss_npu.cpu(), loss_cpu, rtol=1e-5, atol=1e-5)
    for (pname, p_cpu), p_npu in zip(cpu.named_parameters(), npu.parameters()):
        torch.testing.assert_close(p_npu.grad.cpu(), p_cpu.grad, rtol=1e-4, atol=1e-5, msg=pname)
    assert_no_fallback()
