"""torch_npu.testing, used the way torch_npu projects write their op tests."""

import subprocess
import sys
import unittest

import numpy as np
import torch

import torch_npu
from torch_npu.testing.common_utils import (
    SupportedDevices,
    create_common_tensor,
    create_dtype_tensor,
    freeze_rng_state,
    get_npu_device,
    skipIfUnsupportMultiNPU,
)
from torch_npu.testing.decorator import Dtypes, Formats, instantiate_tests
from torch_npu.testing.testcase import TestCase, run_tests


class TestAdd(TestCase):
    def cpu_op_exec(self, input1, input2):
        return torch.add(input1, input2).numpy()

    def npu_op_exec(self, input1, input2):
        return torch.add(input1, input2).to("cpu").numpy()

    def test_add_shape_format_fp32(self):
        shape_format = [[np.float32, 0, (4, 3)], [np.float32, 2, (2, 3, 4)], [np.float32, 3, (2, 16, 4, 4)]]
        for item in shape_format:
            cpu_input1, npu_input1 = create_common_tensor(item, -10, 10)
            cpu_input2, npu_input2 = create_common_tensor(item, -10, 10)
            self.assertRtolEqual(self.cpu_op_exec(cpu_input1, cpu_input2), self.npu_op_exec(npu_input1, npu_input2))

    def test_add_fp16_uses_the_half_tolerance(self):
        cpu_input, npu_input = create_common_tensor([np.float16, 2, (8, 8)], -1, 1)
        self.assertRtolEqual(cpu_input.float().mul(3).half(), (npu_input * 3).cpu())

    def test_assert_rtol_equal_fails_on_a_wrong_result(self):
        cpu_input, npu_input = create_common_tensor([np.float32, 2, (64,)], 1, 2)
        with self.assertRaises(AssertionError):
            self.assertRtolEqual(cpu_input, (npu_input + 0.5).cpu())
        with self.assertRaisesRegex(AssertionError, "dtype error"):
            self.assertRtolEqual(cpu_input.numpy(), cpu_input.double().numpy())

    def test_assert_equal_over_devices_numbers_and_sequences(self):
        x = torch.randn(3, 4)
        self.assertEqual(x.npu(), x)
        self.assertEqual([x.npu(), 2.0, (1, 2)], [x, 2.0 + 1e-7, (1, 2)])
        self.assertEqual(x.sum().npu(), float(x.sum()), prec=1e-4)
        self.assertEqual(x.numpy(), x.npu())
        self.assertEqual({"a": x.npu()}, {"a": x})
        with self.assertRaises(AssertionError):
            self.assertEqual(x.npu(), x + 1e-3)
        self.assertEqual(x.npu(), x + 1e-3, prec=1e-2)
        self.assertNotEqual(x.npu(), x + 1)

    def test_exact_dtype_checks_dtypes(self):
        x = torch.ones(3)
        self.assertEqual(x.half().npu(), x)
        with self.assertRaises(AssertionError):
            self.assertEqual(x.half().npu(), x, exact_dtype=True)

    def test_precision_property(self):
        self.assertEqual(self.precision, 1e-5)
        self.precision = 0.5
        self.assertEqual(torch.tensor(1.0), torch.tensor(1.4))

    def test_setup_seeds_every_generator(self):
        first = (torch.rand(3), np.random.rand(2))
        self.setUp()
        second = (torch.rand(3), np.random.rand(2))
        self.assertEqual(first[0], second[0])
        self.assertEqual(first[1], second[1])

    def test_create_dtype_tensor(self):
        cpu, npu = create_dtype_tensor((5, 6), torch.float, npu_format=2, no_zero=True)
        self.assertEqual(npu.device.type, "npu")
        self.assertRtolEqual(cpu, npu.cpu())
        self.assertTrue(bool((cpu != 0).all()))
        cpu_int, npu_int = create_dtype_tensor((7,), torch.int32, min_value=0, max_value=3)
        self.assertEqual(cpu_int.dtype, torch.int32)
        self.assertTrue(bool(((cpu_int >= 0) & (cpu_int <= 3)).all()))
        self.assertRtolEqual(cpu_int, npu_int.cpu())

    def test_freeze_rng_state(self):
        with freeze_rng_state():
            a = torch.rand(4)
        self.assertEqual(torch.rand(4), a)

    def test_expect_inline(self):
        self.assertExpectedInline(str(torch.ones(2, dtype=torch.int32, device="npu").cpu().tolist()), """[1, 1]""")

    @SupportedDevices(["Ascend910B"])
    def test_runs_on_the_simulated_910b(self):
        self.assertTrue(torch.npu.get_device_name().startswith("Ascend910B"))
        self.assertEqual(get_npu_device(), "npu:0")

    @SupportedDevices(["Ascend310P"])
    def test_skipped_on_other_socs(self):
        self.fail("must not run on an Ascend910B")

    @skipIfUnsupportMultiNPU(2)
    def test_two_npus(self):
        self.assertEqual(torch.ones(2, device="npu:1").cpu(), torch.ones(2))

    @skipIfUnsupportMultiNPU(1000)
    def test_skipped_without_enough_npus(self):
        self.fail("must be skipped")


@instantiate_tests
class TestFormatsAndDtypes(TestCase):
    @Dtypes(torch.float, torch.half)
    @Formats(0, 2)
    def test_abs(self, device, dtype, npu_format):
        cpu, npu = create_dtype_tensor((2, 3, 4, 4), dtype, npu_format)
        self.assertEqual(npu.device.type, device)
        self.assertRtolEqual(cpu.float().abs().to(dtype), torch.abs(npu).cpu())


class TestInstantiation(unittest.TestCase):
    def test_one_test_per_combination(self):
        names = sorted(n for n in vars(TestFormatsAndDtypes) if n.startswith("test_abs"))
        self.assertEqual(names, ["test_abs_float16_0", "test_abs_float16_2", "test_abs_float32_0", "test_abs_float32_2"])

    def test_importing_testcase_initializes_no_device(self):
        code = ("import torch, torch_npu.testing.testcase, torch_npu.testing.common_utils, "
                "torch_npu.testing.decorator, torch_npu.testing.common_distributed; "
                "print(torch.npu.is_initialized())")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.stdout.strip(), "False", out.stderr)


class TestCollectEnv(TestCase):
    def test_versions_name_the_simulator_and_compiler(self):
        from torch_npu.utils.collect_env import get_cann_version, get_pretty_env_info

        version = get_cann_version()
        self.assertIn("simulated Ascend910B runtime", version)
        self.assertIn("npu_mlir compiler", version)
        self.assertEqual(torch_npu.npu.utils.get_cann_version("CANN"), version)
        self.assertEqual(torch_npu.npu.utils.get_cann_version("NOPE"), "")
        self.assertIn("Ascend910B1", get_pretty_env_info())

    def test_inf_nan_support_and_weak_ref(self):
        self.assertTrue(torch_npu.npu.utils.is_support_inf_nan())
        self.assertEqual(torch_npu.npu.utils.get_soc_version(), 220)  # c10_npu::SocVersion::Ascend910B1
        self.assertTrue(torch_npu.npu.utils.is_bf16_supported())
        x = torch.arange(6, dtype=torch.float32, device="npu").reshape(2, 3)[:, 1:]
        weak = torch_npu._C._weak_ref_tensor(x)
        self.assertEqual(weak.data_ptr(), x.data_ptr())
        self.assertEqual(weak.stride(), x.stride())
        self.assertEqual(weak.cpu(), x.cpu())


if __name__ == "__main__":
    run_tests()
