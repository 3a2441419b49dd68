"""torch.save / torch.load with npu tensors and map_location in both directions."""

import io

import torch

import torch_npu  # noqa: F401


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def test_npu_tensor_round_trips_onto_its_device():
    src = torch.randn(5, 3)
    loaded = _round_trip(src.to("npu:1"))
    assert loaded.device == torch.device("npu:1")
    assert torch.equal(loaded.cpu(), src)


def test_map_location_npu_to_cpu_and_cpu_to_npu():
    src = torch.randn(4, 4)
    to_cpu = _round_trip(src.npu(), map_location="cpu")
    assert to_cpu.device.type == "cpu" and torch.equal(to_cpu, src)
    to_npu = _round_trip(src, map_location="npu:1")
    assert to_npu.device == torch.device("npu:1") and torch.equal(to_npu.cpu(), src)
    remapped = _round_trip(src.npu(), map_location={"npu:0": "npu:1"})
    assert remapped.device == torch.device("npu:1")


def test_module_state_dict_round_trip():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)).npu()
    state = _round_trip(model.state_dict())
    assert all(v.device.type == "npu" for v in state.values())
    fresh = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    fresh.load_state_dict(_round_trip(model.state_dict(), map_location="cpu"))
    x = torch.randn(2, 4)
    assert torch.allclose(fresh(x), model(x.npu()).cpu())


def test_shared_storage_stays_shared_after_load():
    base = torch.arange(10, dtype=torch.float32).npu()
    a, b = _round_trip([base, base[2:5]])
    assert b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    assert torch.equal(b.cpu(), torch.tensor([2.0, 3.0, 4.0]))
