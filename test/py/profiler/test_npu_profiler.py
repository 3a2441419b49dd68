"""torch_npu.profiler: its public names, the *_ascend_pt files and their headers, bad input."""

import csv
import json
import os
import re
import socket

import pytest
import torch

import torch_npu
import torch_npu.profiler as tp
from chrome_trace_schema import check, load

OUTPUT_FILES = {"trace_view.json", "operator_details.csv", "kernel_details.csv", "op_statistic.csv",
                "step_trace_time.csv"}
MEMORY_FILES = {"memory_record.csv", "operator_memory.csv"}
HEADERS = {
    "operator_details.csv": "Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),"
                            "Device Self Duration(us),Device Total Duration(us),"
                            "Device Self Duration With AICore(us),Device Total Duration With AICore(us)",
    "kernel_details.csv": "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
                          "Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,"
                          "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
                          "Output Formats,Context ID,Modeled 910B Duration(us)",
    "op_statistic.csv": "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),"
                        "Ratio(%)",
    "step_trace_time.csv": "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,"
                           "Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing",
    "memory_record.csv": "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
                         "Stream Ptr,Device Type",
    "operator_memory.csv": "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),"
                           "Duration(us),Active Duration(us),Allocation Total Allocated(MB),"
                           "Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),"
                           "Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type",
}


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).npu()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(32, 16).npu()
    for _ in range(2):
        step(net, opt, x)
    torch.npu.synchronize()
    return net, opt, x


def step(net, opt, x):
    opt.zero_grad()
    net(x).square().mean().backward()
    opt.step()


@pytest.fixture(scope="module")
def result(model, tmp_path_factory):
    """One scheduled training run under torch_npu.profiler, written by tensorboard_trace_handler."""
    net, opt, x = model
    out = tmp_path_factory.mktemp("prof")
    with tp.profile(activities=[tp.ProfilerActivity.CPU, tp.ProfilerActivity.NPU],
                    schedule=tp.schedule(1, 2, 1, 1),  # wait=1, active=2, warmup=1, repeat=1
                    on_trace_ready=tp.tensorboard_trace_handler(str(out)), profile_memory=True,
                    record_shapes=True, experimental_config=tp._ExperimentalConfig()) as prof:
        for _ in range(5):
            step(net, opt, x)
            prof.step()
    dirs = [d for d in os.listdir(out) if d.endswith("_ascend_pt")]
    assert len(dirs) == 1
    return prof, out / dirs[0]


def test_public_names_match_torch_npu():
    assert set(tp.__all__) == {"profile", "ProfilerActivity", "schedule", "tensorboard_trace_handler",
                               "ProfilerAction", "_ExperimentalConfig", "supported_activities",
                               "supported_profiler_level", "supported_ai_core_metrics", "supported_export_type",
                               "ProfilerLevel", "AiCMetrics", "ExportType", "HostSystem", "dynamic_profile"}
    assert all(hasattr(tp, name) for name in tp.__all__)
    assert tp.supported_activities() == {tp.ProfilerActivity.CPU, tp.ProfilerActivity.NPU}
    assert tp.supported_profiler_level() == {"Level_none", "Level0", "Level1", "Level2"}
    assert tp.supported_export_type() == {tp.ExportType.Text}
    assert tp.supported_ai_core_metrics() == {tp.AiCMetrics.AiCoreNone, tp.AiCMetrics.PipeUtilization}
    assert tp.AiCMetrics.PipeUtilization == "ACL_AICORE_PIPE_UTILIZATION"
    assert torch_npu.profiler is tp


def test_schedule_takes_torch_npu_positional_order():
    s = tp.schedule(1, 2, 1)  # wait, active, warmup
    actions = [s(i) for i in range(5)]
    assert actions == [tp.ProfilerAction.NONE, tp.ProfilerAction.WARMUP, tp.ProfilerAction.RECORD,
                       tp.ProfilerAction.RECORD_AND_SAVE, tp.ProfilerAction.NONE]


def test_result_directory_layout(result):
    _, root = result
    assert re.fullmatch(re.escape(f"{socket.gethostname()}_{os.getpid()}_") + r"\d{17}_ascend_pt", root.name)
    assert {"profiler_info.json", "profiler_metadata.json", "ASCEND_PROFILER_OUTPUT"} <= set(os.listdir(root))
    assert set(os.listdir(root / "ASCEND_PROFILER_OUTPUT")) == OUTPUT_FILES | MEMORY_FILES
    for name, header in HEADERS.items():
        with open(root / "ASCEND_PROFILER_OUTPUT" / name, encoding="utf-8") as f:
            assert f.readline().rstrip("\r\n") == header, name
    info = json.loads((root / "profiler_info.json").read_text())
    assert info["config"]["common_config"]["schedule"] == {"wait": 1, "active": 2, "warmup": 1, "repeat": 1,
                                                           "skip_first": 0}
    assert info["config"]["common_config"]["profile_memory"] is True
    assert info["config"]["experimental_config"]["_profiler_level"] == "Level0"
    assert "ENV_VARIABLES" in json.loads((root / "profiler_metadata.json").read_text())


def test_kernel_details_match_the_trace(result):
    _, root = result
    out = root / "ASCEND_PROFILER_OUTPUT"
    events = check(load(out / "trace_view.json"))
    tasks = [e for e in events if e.get("cat") in {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}]
    kernels = rows(out / "kernel_details.csv")
    assert len(kernels) == len(tasks) > 0
    assert {k["Step Id"] for k in kernels} == {"2", "3"}  # the two recorded steps
    compiled = [k for k in kernels if k["Accelerator Core"] == "AI_CORE"]
    assert compiled and all(k["Name"].startswith("npu_sim_") and k["Type"].startswith("aten::") for k in compiled)
    first, second = ([k["Name"] for k in compiled if k["Step Id"] == s] for s in ("2", "3"))
    assert first == second  # the same kernels, once per call, each step
    assert all(float(k["Duration(us)"]) >= 0 and float(k["Wait Time(us)"]) >= 0 for k in kernels)
    stats = rows(out / "op_statistic.csv")
    assert sum(int(r["Count"]) for r in stats) == len(kernels)
    assert abs(sum(float(r["Ratio(%)"]) for r in stats) - 100.0) < 0.5
    steps = rows(out / "step_trace_time.csv")
    assert [r["Step"] for r in steps] == ["2", "3"]
    assert all(float(r["Computing"]) > 0 and float(r["Stage"]) >= float(r["Computing"]) for r in steps)


def test_operator_details_carry_device_time(result):
    _, root = result
    ops = rows(root / "ASCEND_PROFILER_OUTPUT" / "operator_details.csv")
    addmm = [r for r in ops if r["Name"] == "aten::addmm"]
    assert addmm and all(float(r["Device Self Duration(us)"]) > 0 for r in addmm)
    assert all(float(r["Host Total Duration(us)"]) >= float(r["Host Self Duration(us)"]) >= 0 for r in ops)
    assert all(float(r["Device Total Duration(us)"]) >= float(r["Device Self Duration(us)"]) for r in ops)
    assert any(r["Input Shapes"] == "32,16;8,16" or r["Input Shapes"].startswith("8;32,16") for r in addmm)


def test_memory_files_follow_the_allocator(result):
    _, root = result
    records = rows(root / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv")
    assert records and all(r["Component"] == "PTA" and r["Device Type"] == "NPU:0" for r in records)
    assert all(float(r["Total Reserved(MB)"]) >= float(r["Total Allocated(MB)"]) >= 0 for r in records)
    blocks = rows(root / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv")
    freed = [b for b in blocks if b["Release Time(us)"]]
    assert freed and all(float(b["Duration(us)"]) >= 0 and float(b["Size(KB)"]) > 0 for b in freed)
    assert any(b["Name"].startswith("aten::") for b in blocks)


def test_events_and_key_averages_work(result):
    prof, _ = result
    assert any(e.name == "aten::addmm" for e in prof.events())
    row = next(r for r in prof.key_averages() if r.key == "aten::addmm")
    assert row.self_device_time_total > 0


def test_level_none_collects_host_ops_only(model, tmp_path):
    net, opt, x = model
    with tp.profile(experimental_config=tp._ExperimentalConfig(profiler_level=tp.ProfilerLevel.Level_none)) as prof:
        step(net, opt, x)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    events = check(load(tmp_path / "t.json"))
    assert not [e for e in events if e.get("cat") == "kernel"] and any(e.get("cat") == "cpu_op" for e in events)


def test_mstx_ranges_are_in_the_trace_with_msprof_tx(model, tmp_path):
    net, opt, x = model
    with tp.profile(on_trace_ready=tp.tensorboard_trace_handler(str(tmp_path)),
                    experimental_config=tp._ExperimentalConfig(msprof_tx=True)) as prof:
        range_id = torch.npu.mstx.range_start("train_step", torch.npu.current_stream())
        step(net, opt, x)
        torch.npu.mstx.range_end(range_id)
        torch.npu.mstx.mark("after_step")
    with tp.profile() as quiet:  # without msprof_tx torch_npu collects no mstx data
        torch.npu.mstx.range_end(torch.npu.mstx.range_start("unseen"))
    names = [e.name for e in prof.events()]
    assert names.count("train_step") == 1 and names.count("after_step") == 1
    assert "unseen" not in [e.name for e in quiet.events()]
    span = next(e for e in prof.events() if e.name == "train_step")
    inside = [e for e in prof.events() if e.name == "aten::mm" and e.time_range.start >= span.time_range.start
              and e.time_range.end <= span.time_range.end]
    assert inside, "the step's matmuls run inside the mstx range"
    with open(os.path.join(prof.npu_result_dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), encoding="utf-8") as f:
        assert "train_step" in {e.get("name") for e in json.load(f)}


def test_bad_input_raises_with_error_codes():
    with pytest.raises(ValueError, match="ERR04003"):
        tp.schedule(-1, 1)
    with pytest.raises(ValueError, match="ERR04003"):
        tp.schedule(0, 0)
    with pytest.raises(ValueError, match="ERR04007"):
        tp._ExperimentalConfig(export_type=tp.ExportType.Db)
    with pytest.raises(ValueError, match="ERR04001"):
        tp._ExperimentalConfig(profiler_level="Level9")
    with pytest.raises(TypeError, match="ERR04002"):
        tp.profile(experimental_config=object())
    with pytest.raises(ValueError, match="ERR04001"):
        tp.profile(use_cuda=True)
    with pytest.warns(UserWarning, match="no hardware counters for aic_metrics"):
        tp._ExperimentalConfig(aic_metrics=tp.AiCMetrics.MemoryL0)


def test_dynamic_profile_starts_when_the_config_changes(model, tmp_path):
    net, opt, x = model
    watched, out = tmp_path / "cfg", tmp_path / "out"
    tp.dynamic_profile.init(str(watched))
    config_path = watched / "profiler_config.json"
    config = json.loads(config_path.read_text())
    assert config["activities"] == ["CPU", "NPU"]
    tp.dynamic_profile.step()  # unchanged config: nothing starts
    assert not out.exists()
    config.update(prof_dir=str(out), active=2, start_step=0)
    config_path.write_text(json.dumps(config))
    os.utime(config_path, ns=(1, 1))  # a different mtime even within the filesystem's resolution
    for _ in range(4):
        step(net, opt, x)
        tp.dynamic_profile.step()
    dirs = [d for d in os.listdir(out) if d.endswith("_ascend_pt")]
    assert len(dirs) == 1
    kernels = rows(out / dirs[0] / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    assert any(k["Accelerator Core"] == "AI_CORE" for k in kernels)


def test_kernels_carry_modeled_910b_time_and_pipe_shares(model, tmp_path):
    net, opt, x = model
    config = tp._ExperimentalConfig(profiler_level=tp.ProfilerLevel.Level1, aic_metrics=tp.AiCMetrics.PipeUtilization)
    with tp.profile(on_trace_ready=tp.tensorboard_trace_handler(str(tmp_path)), experimental_config=config):
        step(net, opt, x)
    out = next(tmp_path.glob("*_ascend_pt")) / "ASCEND_PROFILER_OUTPUT"
    kernels = [k for k in rows(out / "kernel_details.csv") if k["Accelerator Core"] == "AI_CORE"]
    assert kernels and all(float(k["Modeled 910B Duration(us)"]) > 0 for k in kernels)
    cube = [k for k in kernels if k["aic_mac_ratio"] != "N/A"]
    assert cube and all(0 < float(k["aic_mac_ratio"]) <= 1 for k in cube)  # the Linear layers' matmuls
    vector = [k for k in kernels if k["aiv_mte2_ratio"] != "N/A"]
    assert vector and all(max(float(k[c]) for c in ("aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio")) <= 1
                          for k in vector)
    lane = [e for e in check(load(out / "trace_view.json")) if e.get("cat") == "modeled_910b"]
    assert len(lane) == len(kernels) and all(e["tid"] == 1000 + int(k["Stream ID"]) for e, k in zip(lane, kernels))


def test_modeled_time_against_published_910b_figures():
    from torch_npu.profiler.modeled_time import model_kernel

    # 8192^3 fp16 matmul: 910B's published fp16 cube peak is ~313 TFLOPS (~3.5 ms).
    matmul = model_kernel('"ascend.matmul"\n}) {block_dim = 24 : i64, core_type = "aic", function_type = '
                          "(tensor<8192x8192xf16>, tensor<8192x8192xf16>) -> tensor<8192x8192xf16>, tiling = "
                          '{k = 8192 : i64, kind = "matmul", m = 8192 : i64, n = 8192 : i64}}')
    assert 0.5 < matmul.us / (2 * 8192**3 / 313e12 * 1e6) < 2
    # 64M-element fp32 add: bandwidth bound, 768 MB through ~1.6 TB/s of HBM (~480 us).
    add = model_kernel('"ascend.binary"\n}) {block_dim = 48 : i64, core_type = "aiv", function_type = '
                       "(tensor<67108864xf32>, tensor<67108864xf32>) -> tensor<67108864xf32>}")
    assert 0.5 < add.us / (3 * 4 * 2**26 / 1.6e12 * 1e6) < 2
