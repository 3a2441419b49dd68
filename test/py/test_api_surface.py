"""The Python surface: __all__ matches each module's exports, torch.npu aliases, amp, tensor/module methods, ERR codes."""

import inspect
import types

import pytest
import torch

import torch_npu
import torch_npu.distributed.count_matrix_all_to_all
import torch_npu.npu.amp.autocast_mode
import torch_npu.npu.amp.grad_scaler
import torch_npu.npu.devices
import torch_npu.npu.initialization
import torch_npu.npu.random
import torch_npu.npu.streams
import torch_npu.optim.npu_fused_adam
import torch_npu.optim.npu_fused_optim_base
import torch_npu.utils.combined_tensors
import torch_npu.utils.error_code
from torch_npu.npu import (
    backend_config,
    blas,
    deterministic,
    device_checks,
    device_control,
    dump,
    external_event,
    external_stream,
    graphs,
    host_memory,
    limits,
    mem_pool,
    memory_aliases,
    npu_runtime,
    obfuscation,
    options,
    overflow,
    pluggable_allocator,
    sync_launch_stream,
    typed_tensors,
)
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error, pta_error

OWN_MODULES = [
    torch_npu.npu.devices,
    torch_npu.npu.initialization,
    torch_npu.npu.random,
    torch_npu.npu.streams,
    torch_npu.npu.amp.autocast_mode,
    torch_npu.npu.amp.grad_scaler,
    torch_npu.optim.npu_fused_adam,
    torch_npu.optim.npu_fused_optim_base,
    torch_npu.utils.combined_tensors,
    torch_npu.utils.error_code,
    backend_config,
    blas,
    deterministic,
    device_checks,
    device_control,
    dump,
    external_event,
    external_stream,
    graphs,
    host_memory,
    limits,
    mem_pool,
    memory_aliases,
    npu_runtime,
    obfuscation,
    options,
    overflow,
    pluggable_allocator,
    sync_launch_stream,
    typed_tensors,
    torch_npu.distributed.count_matrix_all_to_all,
]


@pytest.mark.parametrize("module", OWN_MODULES, ids=lambda m: m.__name__)
def test_all_lists_exactly_the_public_names_defined_in_the_module(module):
    defined = {
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and not isinstance(obj, types.ModuleType)
        and getattr(obj, "__module__", module.__name__) == module.__name__
        and (inspect.isfunction(obj) or inspect.isclass(obj) or name in module.__all__)
    }
    assert set(module.__all__) == defined


@pytest.mark.parametrize("package", [torch_npu.npu, torch_npu.npu.amp, torch_npu.optim, torch_npu.utils])
def test_package_all_names_resolve_and_cover_the_public_callables(package):
    for name in package.__all__:
        assert hasattr(package, name), name
    public = {
        n for n, o in vars(package).items() if not n.startswith("_") and not isinstance(o, types.ModuleType)
    }
    assert public <= set(package.__all__)
    assert len(package.__all__) == len(set(package.__all__))


def test_torch_npu_is_the_registered_device_module():
    assert torch.npu is torch_npu.npu
    assert torch._C._get_privateuse1_backend_name() == "npu"
    for name in ["is_available", "device_count", "current_device", "device", "_lazy_init",
                 "get_amp_supported_dtype", "manual_seed_all", "memory_allocated", "Stream", "Event"]:
        assert hasattr(torch.npu, name), name


def test_graph_and_mem_pool_names_are_torch_cuda_s():
    for name in ["NPUGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables",
                 "MemPool", "use_mem_pool"]:
        assert name in torch.npu.__all__ and hasattr(torch.npu, name), name
    assert torch.npu.NPUGraph.__module__ == "torch_npu.npu.graphs"


def test_generated_tensor_and_module_methods():
    t = torch.ones(2)
    assert not t.is_npu and t.npu().is_npu
    m = torch.nn.Linear(2, 2).npu()
    assert m.weight.is_npu
    assert torch.device("npu:1").type == "npu" and torch.device("npu:1").index == 1
    s = torch.UntypedStorage(8, device="npu")
    assert s.device.type == "npu"


def test_autocast_casts_matmuls_down_and_keeps_fp32_ops():
    assert torch.npu.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.npu.is_bf16_supported()
    a, b = torch.randn(4, 4, device="npu"), torch.randn(4, 4, device="npu")
    with torch.autocast("npu", dtype=torch.bfloat16):
        mm = a @ b
        soft = torch.log_softmax(mm, dim=1)
    assert mm.dtype == torch.bfloat16 and soft.dtype == torch.float32
    with torch.npu.amp.autocast():
        lin = torch.nn.functional.linear(a, b)
    assert lin.dtype == torch.float16
    torch.testing.assert_close(mm.float().cpu(), (a.cpu() @ b.cpu()), atol=0.1, rtol=0.02)


def test_grad_scaler_steps_on_npu():
    model = torch.nn.Linear(4, 1).npu()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.npu.amp.GradScaler(init_scale=1024.0)
    loss = model(torch.randn(8, 4, device="npu")).pow(2).mean()
    scaler.scale(loss).backward()
    before = model.weight.detach().cpu().clone()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0
    assert not torch.equal(before, model.weight.detach().cpu())


def test_err_code_text_matches_the_cpp_side():
    assert pta_error(ErrCode.NOT_SUPPORT) == "ERR00007 PTA feature not supported"
    assert npu_error(SubModule.OPS, ErrCode.ACL) == "ERR01100 OPS call acl api failed"
    with pytest.raises(RuntimeError, match="ERR00007 PTA feature not supported"):
        # the C++ text for the same code, from a Python-visible error
        torch.npu.set_sync_debug_mode(2)
        try:
            torch.ones(1, device="npu").item()
        finally:
            torch.npu.set_sync_debug_mode(0)


def test_python_side_errors_carry_codes():
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.Event(enable_timing=True, interprocess=True)  # as torch.cuda: interprocess events take no timestamps
    with pytest.raises(ValueError, match="ERR00001"):
        torch.npu.current_stream("cpu")


# Issue 14: torch_npu's names beyond torch.cuda's core, and torch_npu.testing. Each must stay.
TORCH_NPU_NAMES = """
host_empty_cache host_memory_stats host_memory_stats_as_nested_dict reset_accumulated_host_memory_stats
reset_peak_host_memory_stats memory_cached max_memory_cached reset_max_memory_cached empty_virt_addr_cache
ipc_collect can_device_access_peer check_uce_in_memory stress_detect set_device_limit get_device_limit
set_stream_limit reset_stream_limit get_stream_limit set_option CubeMathType set_aoe set_compile_mode
is_jit_compile_false set_mm_bmm_format_nd get_mm_bmm_format_nd set_task_queue_enable get_task_queue_enable
use_compatible_impl are_compatible_impl_enabled matmul conv set_dump init_dump finalize_dump mstx
set_deterministic_level enable_deterministic_with_backward disable_deterministic_with_backward ExternalStream
BoolStorage ByteStorage ShortStorage LongStorage IntStorage HalfStorage CharStorage DoubleStorage FloatStorage
BFloat16Storage BoolTensor ByteTensor CharTensor DoubleTensor FloatTensor HalfTensor IntTensor LongTensor
ShortTensor BFloat16Tensor _get_device_index NPUPluggableAllocator change_current_allocator get_allocator_backend
utilization set_op_timeout_ms get_npu_overflow_flag clear_npu_overflow_flag stop_device restart_device SyncLaunchStream
ExternalEvent current_blas_handle obfuscation_initialize obfuscation_finalize obfuscation_calculate npurt
MemPool use_mem_pool
""".split()

TESTING_NAMES = {
    "torch_npu.testing.testcase": ["TestCase", "run_tests"],
    "torch_npu.testing.common_utils": [
        "create_common_tensor", "create_dtype_tensor", "SupportedDevices", "freeze_rng_state", "set_npu_device",
        "get_npu_device", "skipIfUnsupportMultiNPU", "PERF_TEST_ENABLE", "PerfBaseline", "iter_indices",
        "is_iterable", "check_operators_in_prof", "test_2args_broadcast",
    ],
    "torch_npu.testing.common_distributed": ["skipIfUnsupportMultiNPU", "skip_if_lt_x_npu", "with_comms", "TEST_SKIPS"],
    "torch_npu.testing.decorator": ["Dtypes", "Formats", "instantiate_tests"],
    "torch_npu.utils.collect_env": ["get_cann_version", "get_pretty_env_info", "main"],
    "torch_npu.npu.utils": ["is_support_inf_nan", "get_cann_version", "npu_check_overflow", "is_force_overflow_check",
                            "get_npu_overflow_flag", "clear_npu_overflow_flag", "get_soc_version", "is_bf16_supported"],
}


@pytest.mark.parametrize("name", TORCH_NPU_NAMES)
def test_torch_npu_name_exists(name):
    assert hasattr(torch.npu, name), name


@pytest.mark.parametrize("module_name", sorted(TESTING_NAMES))
def test_testing_and_utils_names_exist(module_name):
    import importlib

    module = importlib.import_module(module_name)
    for name in TESTING_NAMES[module_name]:
        assert hasattr(module, name), f"{module_name}.{name}"


def test_distributed_extras_exist():
    import torch_npu.distributed

    for name in ("all_to_all_vc", "all_gather_into_tensor_uneven", "reduce_scatter_tensor_uneven"):
        assert callable(getattr(torch_npu.distributed, name)), name


def test_extension_names_exist():
    assert callable(torch_npu._C._weak_ref_tensor) and callable(torch_npu.erase_stream)
    assert torch.npu.get_device_name().startswith("Ascend910B")
    assert hasattr(torch.npu.Stream, "npu_stream")
    assert hasattr(torch.npu.get_device_properties(0), "uuid")
