"""Device records the stream workers do not run: hccl collectives and synchronous aclrtMemcpy,
and the labels of every (device, stream) lane, in torch.profiler and torch_npu.profiler output."""

import ctypes
import csv
import os

import pytest
import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

import torch_npu
import torch_npu.profiler as tp
from chrome_trace_schema import check, load

ACL_MEMCPY_DEVICE_TO_HOST = 2


@pytest.fixture(scope="module")
def group():
    """A one-rank hccl group: its collectives take the whole transport path (ready event, Gloo, waiter)."""
    dist.init_process_group("hccl", store=dist.HashStore(), rank=0, world_size=1)
    t = torch.ones(256).npu()
    dist.all_reduce(t)  # warm the transport and the fill kernel
    torch.npu.synchronize()
    yield
    dist.destroy_process_group()


def export(prof, tmp_path):
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    return check(load(path))


def collectives(events):
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
            and e["args"].get("task type") == "HCCL"]


def test_each_collective_is_a_device_record_of_its_host_op_on_its_stream(group, tmp_path):
    t = torch.ones(256).npu()
    out = torch.empty(256).npu()
    side = torch.npu.Stream()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
        dist.all_reduce(t)
        dist.all_reduce(t, async_op=True).wait()
        dist.broadcast(t, src=0)
        dist.all_gather_into_tensor(out, t)
        with torch.npu.stream(side):
            dist.all_reduce(t)
        torch.npu.synchronize()
    torch.testing.assert_close(out.cpu(), torch.ones(256))
    events = export(prof, tmp_path)
    records = sorted(collectives(events), key=lambda e: e["ts"])
    assert [r["name"] for r in records] == ["hcom_allReduce_", "hcom_allReduce_", "hcom_broadcast_",
                                          "hcom_allGather_", "hcom_allReduce_"]
    cpu_ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op"}
    expected_ops = ["c10d::allreduce_", "c10d::allreduce_", "c10d::broadcast_", "c10d::_allgather_base_",
                    "c10d::allreduce_"]
    for record, op_name in zip(records, expected_ops):
        parent = cpu_ops[record["args"]["correlation"]]
        assert parent["name"] == record["args"]["op name"] == op_name
        assert parent["ts"] <= record["ts"] and record["pid"] == 0
        assert record["args"]["bytes"] == t.nbytes
    assert [r["tid"] for r in records] == [0, 0, 0, 0, side.stream_id]
    # Each record is linked to its host op in FunctionEvents too (key_averages' device time),
    # after the event that orders the collective behind the stream's queued work.
    ops = [e for e in prof.events() if e.name == "c10d::allreduce_"]
    assert len(ops) == 3 and all([k.name for k in e.kernels] == ["EventRecord", "hcom_allReduce_"] for e in ops)


def test_torch_npu_profiler_lists_collectives_and_their_communication_time(group, tmp_path):
    t = torch.ones(4096).npu()
    with tp.profile(activities=[tp.ProfilerActivity.CPU, tp.ProfilerActivity.NPU],
                    on_trace_ready=tp.tensorboard_trace_handler(str(tmp_path))):
        for _ in range(2):
            dist.all_reduce(t * 2)
        torch.npu.synchronize()
    (result,) = [d for d in os.listdir(tmp_path) if d.endswith("_ascend_pt")]
    out = tmp_path / result / "ASCEND_PROFILER_OUTPUT"
    with open(out / "kernel_details.csv", newline="", encoding="utf-8") as f:
        kernels = list(csv.DictReader(f))
    hcom = [k for k in kernels if k["Name"] == "hcom_allReduce_"]
    assert len(hcom) == 2 and all(k["Type"] == "c10d::allreduce_" for k in hcom)
    with open(out / "step_trace_time.csv", newline="", encoding="utf-8") as f:
        (step,) = list(csv.DictReader(f))
    communication = float(step["Communication"])
    assert communication > 0
    exposed, overlapped = float(step["Communication(Not Overlapped)"]), float(step["Overlapped"])
    assert exposed + overlapped == pytest.approx(communication, abs=1e-2)
    names = [e["name"] for e in check(load(out / "trace_view.json")) if e.get("ph") == "X"]
    assert names.count("hcom_allReduce_") == 2


def test_synchronous_acl_memcpy_is_a_memcpy_record(tmp_path):
    src = torch.arange(1000, dtype=torch.float32).npu()
    torch.npu.synchronize()
    dst = torch.empty(1000)
    acl = ctypes.CDLL(torch_npu._C.__file__)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
        rc = acl.aclrtMemcpy(ctypes.c_void_p(dst.data_ptr()), ctypes.c_size_t(dst.nbytes),
                             ctypes.c_void_p(src.data_ptr()), ctypes.c_size_t(src.nbytes),
                             ctypes.c_int(ACL_MEMCPY_DEVICE_TO_HOST))
    assert rc == 0
    torch.testing.assert_close(dst, src.cpu())
    events = export(prof, tmp_path)
    copies = [e for e in events if e.get("cat") == "gpu_memcpy"]
    assert [(c["name"], c["args"]["bytes"], c["pid"], c["tid"]) for c in copies] == [
        ("Memcpy DtoH", src.nbytes, 0, 0)]
    calls = [e["name"] for e in events if e.get("cat") == "privateuse1_runtime"]
    assert calls == ["aclrtMemcpy"]  # the synchronous call, not a queued copy
    assert copies[0]["ts"] >= min(e["ts"] for e in events if e.get("cat") == "privateuse1_runtime")


def test_every_device_and_stream_lane_is_labeled(tmp_path):
    if torch.npu.device_count() < 2:
        pytest.skip("needs two simulated devices")
    side = torch.npu.Stream(device=1)
    a, b = torch.randn(64).npu(0), torch.randn(64).npu(1)
    (a * 2, b * 2)
    torch.npu.synchronize(0), torch.npu.synchronize(1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
        a * 2
        with torch.npu.stream(side):
            b * 2
        torch.npu.synchronize(0), torch.npu.synchronize(1)
    events = export(prof, tmp_path)
    # Trace viewers keep the last metadata record of a name: that is the label they show.
    labels, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e["name"] == "process_labels":
            labels[e["pid"]] = e["args"]["labels"]
        if e.get("ph") == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    lanes = {(e["pid"], e["tid"]) for e in events if e.get("cat") == "kernel"}
    assert lanes == {(0, 0), (1, side.stream_id)}
    assert labels[0] == "NPU 0" and labels[1] == "NPU 1"
    assert all(threads[lane] == f"Stream {lane[1]}" for lane in lanes)


def test_collectives_with_the_profiler_off_leave_no_records(group):
    t = torch.ones(256).npu()
    assert not torch_npu._C._profiler_runtime_enabled()
    dist.all_reduce(t)
    dist.all_reduce(t, async_op=True).wait()
    dist.broadcast(t, src=0)
    torch.npu.synchronize()
    assert torch_npu._C._profiler_pending_records() == 0
    torch.testing.assert_close(t.cpu(), torch.ones(256))


def test_lccl_collectives_are_device_records_and_none_while_off(group, tmp_path):
    lccl = dist.new_group(backend="lccl")  # the one-rank world again, on the shared-memory backend
    try:
        t = torch.ones(256).npu()
        dist.all_reduce(t, group=lccl)  # warm
        torch.npu.synchronize()
        assert torch_npu._C._profiler_pending_records() == 0
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) as prof:
            dist.all_reduce(t, group=lccl)
            dist.broadcast(t, src=0, group=lccl)
            torch.npu.synchronize()
        records = sorted(collectives(export(prof, tmp_path)), key=lambda e: e["ts"])
        assert [r["name"] for r in records] == ["hcom_allReduce_", "hcom_broadcast_"]
        assert [r["args"]["op name"] for r in records] == ["c10d::allreduce_", "c10d::broadcast_"]
        assert all(r["args"]["bytes"] == t.nbytes and (r["pid"], r["tid"]) == (0, 0) for r in records)
    finally:
        dist.destroy_process_group(lccl)
