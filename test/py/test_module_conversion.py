"""Module.npu() / .to("npu") keep each Parameter object, as .cuda() does.

Torch re-points a Parameter in place (param.data = converted) only when it deems the two tensor
types shallow-copy compatible; otherwise it builds a new Parameter per module, which unties
weights shared across modules (GPT-2's wte / lm_head) and detaches optimizers built before the move.
"""

import torch
import torch_npu  # noqa: F401


class TiedLM(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 8)
        self.mix = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 32, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.mix(self.embed(tokens))))


def test_npu_and_cpu_keep_tied_weights_tied() -> None:
    model = TiedLM()
    weight = model.embed.weight
    for move in (lambda m: m.npu(), lambda m: m.cpu(), lambda m: m.to("npu"), lambda m: m.to("cpu")):
        move(model)
        assert model.head.weight is model.embed.weight
        assert model.embed.weight is weight  # the same Parameter object, re-pointed
    assert len(list(model.parameters())) == 3


def test_tied_weight_gradient_sums_both_uses_as_on_cpu() -> None:
    torch.manual_seed(0)
    cpu = TiedLM()
    npu = TiedLM()
    npu.load_state_dict(cpu.state_dict())
    npu.npu()
    tokens = torch.randint(0, 32, (4, 6))
    for model, device in ((cpu, "cpu"), (npu, "npu")):
        logits = model(tokens.to(device))
        torch.nn.functional.cross_entropy(logits.reshape(-1, 32), tokens.to(device).reshape(-1)).backward()
    for (name, p), (_, q) in zip(cpu.named_parameters(), npu.named_parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, msg=name)


def test_an_optimizer_built_before_the_move_steps_the_npu_parameters() -> None:
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model.npu()
    before = model.weight.detach().cpu().clone()
    model(torch.ones(3, 4, device="npu")).sum().backward()
    opt.step()
    assert model.weight.device.type == "npu"
    torch.testing.assert_close(model.weight.detach().cpu(), before - 0.5 * 3.0 * torch.ones(2, 4))


def test_parameter_data_assignment_across_devices() -> None:
    p = torch.nn.Parameter(torch.randn(3))
    p.data = torch.ones(3, device="npu")
    assert p.device.type == "npu" and isinstance(p, torch.nn.Parameter)
    p.data = torch.zeros(3)
    assert p.device.type == "cpu"
    torch.testing.assert_close(p.detach(), torch.zeros(3))
