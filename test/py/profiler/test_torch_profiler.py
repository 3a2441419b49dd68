"""torch.profiler sees npu work through the Kineto plug-in: kernels, copies, memory, device time."""

import json

import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile, schedule

import torch_npu
from chrome_trace_schema import check, load

DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}


def export(prof, tmp_path, name="trace.json"):
    path = tmp_path / name
    prof.export_chrome_trace(str(path))
    return check(load(path))


def device_tasks(events, category=None):
    return [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES
            and (category is None or e["cat"] == category)]


@pytest.fixture(scope="module")
def warm():
    """Compile the kernels the tests launch before any profile, so traces hold hits only."""
    x = torch.randn(32, 16).npu()
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).npu()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        train_step(model, opt, x)
    (x * 3).cpu()
    torch.npu.synchronize()
    return model, opt, x


def train_step(model, opt, x):
    opt.zero_grad()
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    return loss


def test_training_loop_kernels_have_names_streams_and_cpu_parents(warm, tmp_path):
    model, opt, x = warm
    traces = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU],
                 schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: traces.append(export(p, tmp_path))) as prof:
        for _ in range(4):
            train_step(model, opt, x)
            prof.step()
    assert len(traces) == 1
    events = traces[0]
    kernels = [k for k in device_tasks(events, "kernel") if k["args"]["task type"] == "AI_CORE"]
    launches = [e for e in events if e.get("cat") == "privateuse1_runtime" and e["name"] == "aclrtLaunchKernel"]
    assert kernels and len(kernels) == len(launches)
    cpu_ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op"}
    assert all(t["args"]["correlation"] in cpu_ops for t in device_tasks(events))  # every task has its op
    for k in kernels:
        assert k["name"].startswith("npu_sim_"), k["name"]  # the compiled symbol
        assert k["pid"] == 0 and k["tid"] == k["args"]["stream"] == 0  # device 0, default stream lane
        parent = cpu_ops[k["args"]["correlation"]]
        assert k["args"]["op name"] == parent["name"] and parent["name"].startswith("aten::")
        assert parent["ts"] <= k["ts"]  # queued by the op before it ran
    # The two recorded steps launch the same kernels, in the same order, once per call.
    names = [k["name"] for k in sorted(kernels, key=lambda k: k["ts"])]
    assert len(names) % 2 == 0 and names[: len(names) // 2] == names[len(names) // 2:]
    # FunctionEvents: each device kernel is attached to exactly the op that queued it.
    attached = [k.name for e in prof.events() if e.device_type == DeviceType.CPU for k in e.kernels
                if k.name.startswith("npu_sim_")]
    assert sorted(attached) == sorted(names)


def test_each_call_launches_once_on_the_current_stream(warm, tmp_path):
    _, _, x = warm
    side = torch.npu.Stream()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
        with torch.npu.stream(side):
            for _ in range(5):
                x * 3
        torch.npu.synchronize()
    muls = [e for e in prof.events() if e.name == "aten::mul"]
    assert len(muls) == 5 and all(len(e.kernels) == 1 for e in muls)
    assert len({e.kernels[0].name for e in muls}) == 1
    kernels = device_tasks(export(prof, tmp_path), "kernel")
    assert len(kernels) == 5
    assert all(k["args"]["stream"] == side.stream_id == k["tid"] for k in kernels)


def test_copies_and_zero_fills_are_memcpy_and_memset_events(warm, tmp_path):
    host = torch.randn(1000)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
        dev = host.npu()
        back = dev.cpu()
        dev.zero_()  # all-zero bytes: one memset task
    torch.testing.assert_close(back, host)
    assert not dev.cpu().any()
    events = export(prof, tmp_path)
    copies = device_tasks(events, "gpu_memcpy")
    assert [c["name"] for c in copies] == ["Memcpy HtoD", "Memcpy DtoH"]
    assert all(c["args"]["bytes"] == host.nbytes for c in copies)
    assert all(c["args"]["op name"] == "aten::_copy_from" for c in copies)
    memsets = device_tasks(events, "gpu_memset")
    assert [(m["name"], m["args"]["bytes"], m["args"]["op name"]) for m in memsets] == [
        ("Memset", host.nbytes, "aten::zero_")]


def test_key_averages_has_npu_device_time(warm):
    _, _, x = warm
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
        for _ in range(3):
            x * 3
        torch.npu.synchronize()
    row = next(r for r in prof.key_averages() if r.key == "aten::mul")
    assert row.count == 3 and row.self_device_time_total > 0
    assert "Self NPU" in prof.key_averages().table(row_limit=5)


def test_profile_memory_sees_the_caching_allocator(warm):
    _, _, x = warm
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU], profile_memory=True) as prof:
        y = x * 3
        del y
    sizes = [e.device_memory_usage for e in prof.events() if e.name == "[memory]" and e.device_memory_usage]
    assert -x.nbytes in sizes  # the result's block going back to the cache (outside any op)
    row = next(r for r in prof.key_averages() if r.key == "aten::mul")
    assert row.device_memory_usage == x.nbytes  # allocated inside the op


def test_legacy_autograd_profiler_times_ops_on_the_device(warm):
    # Big enough that the kernel outlasts the events' clock resolution (a 32x16 mul can read 0 us).
    x = torch.randn(1 << 20, device="npu")
    (x * 3).cpu()  # compiled before the profile
    with torch.autograd.profiler.profile(use_device="npu") as prof:
        (x * 3).cpu()
    row = next(r for r in prof.key_averages() if r.key == "aten::mul")
    assert row.device_time_total > 0


def test_cpu_only_profile_and_profiler_off_leave_no_device_records(warm, tmp_path):
    _, _, x = warm
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (x * 3).cpu()
    assert not device_tasks(export(prof, tmp_path))
    for _ in range(3):
        (x * 3).cpu()
    assert not torch_npu._C._profiler_runtime_enabled()
    assert torch_npu._C._profiler_pending_records() == 0


def test_gzipped_trace_has_flows_below_2_pow_53(warm, tmp_path):
    _, _, x = warm
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
        (x * 3).cpu()
    events = export(prof, tmp_path, "trace.json.gz")
    flows = [e for e in events if e.get("cat") == "ac2g"]
    assert flows and all(e["id"] < 2**53 for e in flows)
    metadata = json.dumps([e for e in events if e.get("ph") == "M"])
    assert "NPU 0" in metadata and "Stream 0" in metadata


def test_memory_timeline_of_the_npu_device(warm, tmp_path):
    model, opt, x = warm
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU], profile_memory=True,
                 record_shapes=True, with_stack=True) as prof:
        train_step(model, opt, x)
    prof.export_memory_timeline(str(tmp_path / "memory.json"), device="npu:0")
    times, sizes = json.loads((tmp_path / "memory.json").read_text())
    assert len(times) > 1 and len(sizes) == len(times)
    assert max(sum(row) for row in sizes) > 0  # bytes in use, by category, while the step ran
