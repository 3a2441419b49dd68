"""torch.npu.make_graphed_callables (torch's test_graph_make_graphed_callables): two modules and
two functions graphed forward and backward train exactly as the same model run eagerly, with
dropout drawing the same numbers, with and without autocast; models sharing one pool; a module
without parameters taking a dict with an unused input."""

import copy

import pytest
import torch

import torch_npu  # noqa: F401


def _models(D_in, H, D_out):
    models = []
    for _ in range(2):
        section1 = torch.nn.Sequential(torch.nn.Linear(D_in, H), torch.nn.Dropout(p=0.1)).npu()
        section2 = torch.nn.Sequential(torch.nn.Linear(H, D_out), torch.nn.Dropout(p=0.2)).npu()
        models.append(torch.nn.Sequential(section1, section2))
    models[0].load_state_dict(models[1].state_dict())
    return models


@pytest.mark.parametrize("with_amp", [False, True], ids=["fp32", "autocast"])
def test_graph_make_graphed_callables(with_amp):
    torch.manual_seed(5)
    torch.npu.manual_seed(5)
    N, D_in, H, D_out = 4, 16, 8, 4
    model_graphed, model_control = _models(D_in, H, D_out)
    opt_graphed = torch.optim.SGD(model_graphed.parameters(), lr=0.1)
    opt_control = torch.optim.SGD(model_control.parameters(), lr=0.1)

    x = torch.randn(N, D_in, device="npu")
    h = torch.randn(N, H, device="npu", requires_grad=True)
    y_pred = torch.randn(N, D_out, device="npu", requires_grad=True)
    y = torch.randn(N, D_out, device="npu")
    loss_fn_control = torch.nn.functional.mse_loss
    relu_control = torch.nn.functional.relu

    # Four callables at once: two modules and two Python functions, in one pool.
    with torch.autocast("npu", enabled=with_amp, cache_enabled=False):
        model_graphed[0], model_graphed[1], relu_graphed, loss_fn_graphed = torch.npu.make_graphed_callables(
            (model_graphed[0], model_graphed[1], relu_control, loss_fn_control),
            ((x,), (h,), (y_pred,), (y_pred, y)),
        )

    real_inputs = [torch.rand_like(x) for _ in range(4)]
    real_targets = [torch.rand_like(y) for _ in range(4)]
    losses = {}
    for name, m, opt, relu, loss_fn in (
        ("graphed", model_graphed, opt_graphed, relu_graphed, loss_fn_graphed),
        ("control", model_control, opt_control, relu_control, loss_fn_control),
    ):
        # Same RNG state for both: dropout masks must be bitwise identical.
        torch.manual_seed(5)
        torch.npu.manual_seed(5)
        losses[name] = []
        for data, target in zip(real_inputs, real_targets):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("npu", enabled=with_amp, cache_enabled=False):
                out = relu(m(data))
                loss = loss_fn(out, target)
            loss.backward()
            opt.step()
            losses[name].append(loss.detach().cpu())

    torch.testing.assert_close(torch.stack(losses["graphed"]), torch.stack(losses["control"]))
    for p, pc in zip(model_graphed.parameters(), model_control.parameters()):
        torch.testing.assert_close(p.cpu(), pc.cpu())
    # Graphed in training mode: eval runs the modules eagerly.
    model_graphed.eval()
    model_control.eval()
    torch.testing.assert_close(model_graphed(real_inputs[0]).cpu(), model_control(real_inputs[0]).cpu())


def test_make_graphed_callables_refuses_the_autocast_cache():
    lin = torch.nn.Linear(4, 4).npu()
    with torch.autocast("npu", cache_enabled=True):
        with pytest.raises(RuntimeError, match="does not support the autocast caching"):
            torch.npu.make_graphed_callables(lin, (torch.randn(2, 4, device="npu"),))


def test_make_graphed_callables_checks_its_arguments():
    lin = torch.nn.Linear(4, 4).npu()
    with pytest.raises(AssertionError, match="must contain only Tensors"):
        torch.npu.make_graphed_callables(lin, (3,))
    lin.register_forward_hook(lambda *a: None)
    with pytest.raises(AssertionError, match="must not have hooks registered"):
        torch.npu.make_graphed_callables(lin, (torch.randn(2, 4, device="npu"),))


def test_graph_make_graphed_callables_same_pool():
    # torch's test of the same name: three models graphed into one pool keep their own parameters
    # and gradients and match their eager copies
    torch.manual_seed(5)
    models = [torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16)).npu()
              for _ in range(3)]
    mempool = torch.npu.graph_pool_handle()
    graphed_models = [torch.npu.make_graphed_callables(copy.deepcopy(m), (torch.randn(4, 8, device="npu"),),
                                                       pool=mempool) for m in models]
    for model, graphed in zip(models, graphed_models):
        x = torch.randn(4, 8, device="npu")
        y, yg = model(x), graphed(x)
        loss, loss_g = y.norm(), yg.norm()
        loss.backward()
        loss_g.backward()
        torch.testing.assert_close(yg.cpu(), y.cpu())
        torch.testing.assert_close(loss_g.cpu(), loss.cpu())
        for p, pg in zip(model.parameters(), graphed.parameters()):
            torch.testing.assert_close(pg.grad.cpu(), p.grad.cpu())
            assert p.data_ptr() != pg.data_ptr() and p.grad.data_ptr() != pg.grad.data_ptr()


class _Parameterless(torch.nn.Module):
    def forward(self, input_dict: dict) -> dict:
        x = input_dict["x"]
        idx = torch.arange(x.size(0), device=x.device).view(-1, 1).repeat(1, x.size(1))
        return {"output": torch.gather(x, 0, idx)}


@pytest.mark.parametrize("with_amp, allow_unused_input", [(False, True), (True, False)],
                         ids=["fp32-allow-unused", "autocast"])
def test_graph_make_graphed_callables_parameterless_nograd_module(with_amp, allow_unused_input):
    # torch's test of the same name: a module without parameters, dict inputs, one of them unused
    # and no input requiring grad: no backward graph, outputs as eager, eval runs eagerly
    torch.manual_seed(5)
    model_graphed = torch.nn.Sequential(_Parameterless().npu())
    model_control = torch.nn.Sequential(_Parameterless().npu())
    x = torch.randn(8, 6, device="npu")
    unused = torch.randn(8, 4, device="npu")
    with torch.autocast("npu", enabled=with_amp, cache_enabled=False):
        model_graphed[0] = torch.npu.make_graphed_callables(model_graphed[0], ({"x": x, "unused_input": unused},),
                                                            allow_unused_input=allow_unused_input)
    for data in [torch.rand_like(x) for _ in range(3)]:
        with torch.autocast("npu", enabled=with_amp, cache_enabled=False):
            out = model_graphed({"x": data, "unused_input": unused})["output"]
            ref = model_control({"x": data, "unused_input": unused})["output"]
        torch.testing.assert_close(out.cpu(), ref.cpu())
    model_graphed.eval()
    model_control.eval()
    torch.testing.assert_close(model_graphed({"x": x})["output"].cpu(), model_control({"x": x})["output"].cpu())
