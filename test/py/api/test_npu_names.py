"""torch_npu's torch.npu names beyond torch.cuda's core: semantics and bad input."""

import json
import warnings

import pytest
import torch

import torch_npu


def test_typed_tensor_and_storage_classes():
    t = torch.npu.FloatTensor(2, 3)
    assert t.shape == (2, 3) and t.dtype == torch.float32 and t.device.type == "npu"
    assert isinstance(t, torch.npu.FloatTensor) and not isinstance(t, torch.npu.HalfTensor)
    assert not isinstance(torch.ones(2), torch.npu.FloatTensor)
    d = torch.npu.LongTensor([1, 2, 3])
    assert d.dtype == torch.int64 and d.cpu().tolist() == [1, 2, 3]
    assert isinstance(torch.ones(2, device="npu", dtype=torch.bfloat16), torch.npu.BFloat16Tensor)
    s = torch.npu.IntStorage(4)
    assert isinstance(s, torch.npu.IntStorage) and s.device.type == "npu" and s.size() == 4
    assert list(torch.npu.ByteStorage([1, 2]).cpu()) == [1, 2]


def test_deprecated_cached_aliases_warn_and_equal_reserved():
    x = torch.empty(1 << 20, device="npu")
    with pytest.warns(FutureWarning):
        assert torch.npu.memory_cached() == torch.npu.memory_reserved()
    with pytest.warns(FutureWarning):
        assert torch.npu.max_memory_cached() == torch.npu.max_memory_reserved()
    with pytest.warns(FutureWarning):
        torch.npu.reset_max_memory_cached()
    assert torch.npu.max_memory_reserved() == torch.npu.memory_reserved()
    del x
    torch.npu.empty_virt_addr_cache()
    torch.npu.ipc_collect()


def test_peer_access_uce_and_stress_detect():
    assert torch.npu.can_device_access_peer(0, 1) and not torch.npu.can_device_access_peer(0, 0)
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.can_device_access_peer(0, 100)
    assert torch.npu.check_uce_in_memory(0) == 0
    assert torch.npu.stress_detect() == 0
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.stress_detect(mode=7)


def test_device_and_stream_limits():
    props = torch.npu.get_device_properties(2)
    assert torch.npu.get_device_limit(2) == {"cube_core_num": props.cube_core_num,
                                             "vector_core_num": props.vector_core_num}
    torch.npu.set_device_limit(2, 12, -1)
    assert torch.npu.get_device_limit(2) == {"cube_core_num": 12, "vector_core_num": props.vector_core_num}
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.set_device_limit(2, 1000)
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.set_device_limit(2, "8")
    s = torch.npu.Stream(device=2)
    assert torch.npu.get_stream_limit(s)["cube_core_num"] == 12
    torch.npu.set_stream_limit(s, 4, 8)
    assert torch.npu.get_stream_limit(s) == {"cube_core_num": 4, "vector_core_num": 8}
    torch.npu.reset_stream_limit(s)
    assert torch.npu.get_stream_limit(s)["cube_core_num"] == 12
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.set_stream_limit("stream", 4)


def test_simulator_ignored_options_validate_and_record():
    torch.npu.set_option({"ACL_OP_COMPILER_CACHE_MODE": "enable", "ACL_AICORE_NUM": 24})
    assert torch.npu.get_option("ACL_AICORE_NUM") == "24"
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.set_option(["ACL_PRECISION_MODE"])
    # torch_npu's own checks: an unknown name, a value outside an option's list
    with pytest.raises(RuntimeError, match="invalid npu option name:ACL_OP_SELECT_IMPL[\s\S]*ERR00001"):
        torch.npu.set_option({"ACL_OP_SELECT_IMPL": "high_precision"})
    with pytest.raises(ValueError, match=r"value of ACL_PRECISION_MODE should be in \['allow_fp32_to_fp16', "
                                         r"'must_keep_origin_dtype'\] but got allow_fp32_to_fp32[\s\S]*ERR00001"):
        torch.npu.set_option({"ACL_PRECISION_MODE": "allow_fp32_to_fp32"})
    with pytest.raises(ValueError, match="ACL_AICORE_NUM"):
        torch.npu.set_option({"ACL_AICORE_NUM": 0})
    assert torch.npu.get_option("ACL_PRECISION_MODE") is None  # nothing of a refused call applied
    torch.npu.set_option({"MM_BMM_ND_ENABLE": "disable"})
    assert torch.npu.get_mm_bmm_format_nd() is False
    torch.npu.set_compile_mode(jit_compile=True)
    assert not torch.npu.is_jit_compile_false()
    torch.npu.set_compile_mode(jit_compile=False)
    assert torch.npu.is_jit_compile_false()
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.set_compile_mode(jit_compile="yes")
    torch.npu.set_mm_bmm_format_nd(False)
    assert torch.npu.get_mm_bmm_format_nd() is False
    torch.npu.set_mm_bmm_format_nd(True)
    torch.npu.set_task_queue_enable(1)
    assert torch.npu.get_task_queue_enable() == 1
    torch.npu.set_task_queue_enable(2)
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.set_task_queue_enable(5)
    torch.npu.use_compatible_impl(True)
    assert torch.npu.are_compatible_impl_enabled()
    torch.npu.use_compatible_impl(False)
    assert torch.npu.CubeMathType.USE_HF32 == 3
    assert torch.npu.matmul.allow_hf32 is False and torch.npu.conv.allow_hf32 is True
    torch.npu.matmul.allow_hf32 = True
    assert torch.npu.matmul.allow_hf32
    torch.npu.matmul.allow_hf32 = False
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.conv.allow_hf32 = 1


def test_set_aoe_creates_and_records_the_dump_dir(tmp_path):
    torch.npu.set_aoe(str(tmp_path / "aoe"))
    assert (tmp_path / "aoe").is_dir()
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.set_aoe(3)


def test_dump_writes_each_ops_inputs_and_outputs(tmp_path):
    config = tmp_path / "acl.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(tmp_path / "dump"), "dump_mode": "all",
                                           "dump_list": []}}))
    a = torch.arange(4.0).npu()
    torch.npu.init_dump()
    try:
        torch.npu.set_dump(str(config))
        b = a * 2
    finally:
        torch.npu.finalize_dump()
    c = b + 1  # after finalize: not dumped
    files = sorted((tmp_path / "dump").iterdir())
    records = [torch.load(f) for f in files]
    mul = [r for r in records if r["op"] == "aten.mul.Tensor"]
    assert len(mul) == 1 and all(r["op"] != "aten.add.Tensor" for r in records)
    torch.testing.assert_close(mul[0]["inputs"][0], torch.arange(4.0))
    torch.testing.assert_close(mul[0]["outputs"][0], torch.arange(4.0) * 2)
    assert c.cpu().tolist() == [1.0, 3.0, 5.0, 7.0]
    with pytest.raises(RuntimeError, match="ERR00009"):
        torch.npu.set_dump(str(config))
    torch.npu.init_dump()
    try:
        with pytest.raises(ValueError, match="ERR00003"):
            torch.npu.set_dump(str(tmp_path / "missing.json"))
    finally:
        torch.npu.finalize_dump()


def test_mstx_ranges_are_recorded():
    before = len(torch.npu.mstx.records())
    torch.npu.mstx.mark("step")
    rid = torch.npu.mstx.range_start("fwd", torch.npu.current_stream())
    torch.npu.mstx.range_end(rid)
    mark, rng = torch.npu.mstx.records()[before:]
    assert mark["kind"] == "mark" and mark["message"] == "step"
    assert rng["message"] == "fwd" and rng["end_ns"] >= rng["start_ns"]
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.mstx.range_end(rid)
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.mstx.mark(3)


def test_deterministic_level():
    try:
        torch.npu.set_deterministic_level(1)
        assert torch.are_deterministic_algorithms_enabled() and torch.npu.get_deterministic_level() == 1
        with pytest.raises(ValueError, match="ERR00003"):
            torch.npu.set_deterministic_level(3)
        x = torch.npu.disable_deterministic_with_backward(torch.ones(1))
        assert not torch.are_deterministic_algorithms_enabled() and x.item() == 1
        torch.npu.enable_deterministic_with_backward(x)
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.npu.set_deterministic_level(0)
    assert not torch.are_deterministic_algorithms_enabled()


def test_stream_handle_external_stream_and_reprs():
    s = torch.npu.Stream()
    assert isinstance(s.npu_stream, int) and s.npu_stream != 0
    ext = torch.npu.ExternalStream(s.npu_stream)
    assert ext == s and ext.npu_stream == s.npu_stream
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.ExternalStream(12345)
    assert repr(s).startswith("<torch_npu.npu.Stream")
    assert repr(torch.npu.Event()).startswith("<torch_npu.npu.Event")


def test_device_index_uuid_and_messages():
    assert torch_npu.npu._get_device_index("npu:3") == 3
    assert torch_npu.npu._get_device_index(torch.device("cpu"), allow_cpu=True) == -1
    assert torch_npu.npu._get_device_index(None, optional=True) == torch.npu.current_device()
    with pytest.raises(ValueError, match="Expected a npu device, but got: cpu"):
        torch.npu.current_stream("cpu")
    uuids = {torch.npu.get_device_properties(i).uuid for i in range(2)}
    assert len(uuids) == 2
    with pytest.raises(TypeError):
        torch.npu.set_per_process_memory_fraction("0.5")


def test_base_formats_are_accepted_on_other_ranks():
    x = torch.randn(4, 3).npu()
    y = torch_npu.npu_format_cast(x, 0)  # NCHW on a 2-D tensor: its base format, ND
    assert torch_npu.get_npu_format(y) == 2
    torch.testing.assert_close(y.cpu(), x.cpu())
    z = torch_npu.npu_format_cast(torch.randn(2, 3, 4, 5, 6).npu(), 0)
    assert torch_npu.get_npu_format(z) == 30
    with pytest.raises(RuntimeError, match="ERR00001"):
        torch_npu.npu_format_cast(x, 3)  # NC1HWC0 is an internal format: rank 4 only


def test_warnings_only_from_deprecated_names():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.npu.get_device_limit(0)
        torch.npu.memory_reserved()


def test_erase_stream_undoes_record_stream():
    side = torch.npu.Stream()
    x = torch.empty(1 << 18, device="npu")
    address = x.data_ptr()
    torch_npu._C._npu_sleep_on_stream(300)
    with torch.npu.stream(side):
        torch_npu._C._npu_sleep_on_stream(300)
    x.record_stream(side)
    torch_npu.erase_stream(x, side)
    del x  # no pending use on `side` any more: the block is reusable at once
    y = torch.empty(1 << 18, device="npu")
    assert y.data_ptr() == address
    with pytest.raises(TypeError, match="ERR00002"):
        torch_npu.erase_stream(torch.ones(1), side)
    torch.npu.synchronize()


def test_pluggable_allocator_functions_are_called(tmp_path):
    import subprocess
    import sys
    import textwrap

    source = tmp_path / "alloc.c"
    source.write_text(textwrap.dedent("""
        #include <stdlib.h>
        long allocs = 0, frees = 0;
        void* my_alloc(size_t size, int device, void* stream) { ++allocs; return aligned_alloc(512, (size + 511) / 512 * 512); }
        void my_free(void* ptr, size_t size, int device, void* stream) { ++frees; free(ptr); }
    """))
    library = tmp_path / "alloc.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    code = textwrap.dedent(f"""
        import ctypes, torch, torch_npu
        allocator = torch.npu.memory.NPUPluggableAllocator({str(library)!r}, "my_alloc", "my_free")
        torch.npu.memory.change_current_allocator(allocator)
        lib = ctypes.CDLL({str(library)!r})
        x = torch.full((1000,), 2.0, device="npu")
        y = (x.cpu() * 3).npu()
        print("ALLOCS", ctypes.c_long.in_dll(lib, "allocs").value >= 2, float(y.sum().cpu()) == 6000.0)
        del x, y
        print("FREES", ctypes.c_long.in_dll(lib, "frees").value >= 2, torch.npu.get_allocator_backend())
        try:
            torch.npu.memory.change_current_allocator(allocator)
        except RuntimeError as error:
            print("SWAP", "ERR00007" in str(error))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ALLOCS", "True", "True", "FREES", "True", "pluggable", "SWAP", "True"]


def test_allocator_swap_after_first_use_raises():
    torch.ones(1, device="npu")
    assert torch.npu.get_allocator_backend() == "native"
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.change_current_allocator("libfoo.so")


def test_param_data_assignment_between_npu_tensors():
    param = torch.nn.Parameter(torch.ones(3, device="npu"))
    other = torch.arange(4.0, device="npu")
    param.data = other
    assert param.shape == (4,) and param.data_ptr() == other.data_ptr() and param.requires_grad
    assert param.detach().cpu().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_contiguous_under_fake_tensor_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(2, 3, device="npu").t()
        y = x.contiguous()
    assert y.shape == (3, 2) and y.device.type == "npu" and y.is_contiguous() and not x.is_contiguous()
