"""Overflow detection as torch_npu has it on a 910B: INF_NAN mode by default (the flag functions
refuse, npu_check_overflow looks at the tensor), FORCE_OVERFLOW_CHECK=1 (the flag armed in INF_NAN
mode) and saturation mode (INF_NAN_MODE_FORCE_DISABLE=1: results saturate, the flag is armed).
The mode is read from the environment at device initialization; the tests rerun that step."""

import os
import subprocess
import sys
import warnings
from unittest import mock

import torch

import torch_npu
import torch_npu.npu.utils as utils
from torch_npu.npu import overflow
from torch_npu.testing.testcase import TestCase, run_tests


def run_script(source: str, **env: str) -> str:
    """Runs ``source`` in a fresh process (the mode is read at device initialization); its stdout."""
    done = subprocess.run([sys.executable, "-c", source], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        raise AssertionError(done.stderr[-3000:])
    return done.stdout


class TestCheckOverFlow(TestCase):
    # The default INF_NAN mode, torch_npu's own example of npu_check_overflow.

    def test_check_over_flow(self):
        a = torch.Tensor([65535]).npu().half()
        a = a + a
        ret = utils.npu_check_overflow(a)
        self.assertTrue(ret)
        self.assertFalse(utils.npu_check_overflow(torch.Tensor([65504]).npu().half()))
        self.assertTrue(utils.npu_check_overflow(float("nan")))

    def test_inf_nan_mode_is_the_default(self):
        self.assertTrue(utils.is_support_inf_nan())
        self.assertFalse(utils.is_force_overflow_check())
        self.assertTrue(torch.isinf(torch.exp(torch.tensor([12.0], dtype=torch.float16).npu())).cpu().all())

    def test_the_flag_functions_refuse_without_the_flag(self):
        with self.assertRaisesRegex(RuntimeError, r"please use npu_check_overflow[\s\S]*ERR00007"):
            torch_npu.npu.get_npu_overflow_flag()
        with self.assertWarnsRegex(UserWarning, "clear_npu_overflow_flag is useless"):
            torch_npu.npu.clear_npu_overflow_flag()
        with self.assertRaisesRegex(TypeError, "ERR00002"):
            utils.npu_check_overflow("inf")


class TestForceOverflowCheck(TestCase):
    # FORCE_OVERFLOW_CHECK=1, read by the switch device initialization runs (as if set before it).

    def setUp(self):
        super().setUp()
        with mock.patch.dict(os.environ, {"FORCE_OVERFLOW_CHECK": "1"}):
            overflow._set_mode_from_environment()

    def tearDown(self):
        overflow._set_mode_from_environment()
        super().tearDown()

    def test_flag_set_by_an_fp16_overflow_and_cleared(self):
        a = torch.tensor([65504.0, 1.0], dtype=torch.float16).npu()
        utils.clear_npu_overflow_flag()
        a * 0.5
        self.assertFalse(utils.get_npu_overflow_flag())
        b = a + a  # 65504 + 65504 overflows fp16
        self.assertTrue(torch.isinf(b.cpu()[0]))  # INF_NAN mode: the result keeps its inf
        self.assertTrue(utils.get_npu_overflow_flag())
        self.assertTrue(utils.get_npu_overflow_flag())  # sticky
        utils.clear_npu_overflow_flag()
        self.assertFalse(utils.get_npu_overflow_flag())
        torch.log(torch.tensor([-1.0]).npu())  # nan
        self.assertTrue(utils.get_npu_overflow_flag())
        utils.clear_npu_overflow_flag()
        with warnings.catch_warnings():  # hermite_polynomial_h has no npu kernel: it runs on the CPU fallback
            warnings.simplefilter("ignore")
            torch.special.hermite_polynomial_h(torch.tensor([1e30, 0.5]).npu(), 3)  # 8 x^3 overflows to inf
        self.assertTrue(utils.get_npu_overflow_flag())
        utils.clear_npu_overflow_flag()
        torch.tensor([1e5]).npu().half()  # a cast on the device overflows as a kernel does
        self.assertTrue(utils.get_npu_overflow_flag())

    def test_npu_check_overflow_reads_and_clears_the_flag(self):
        self.assertTrue(utils.is_support_inf_nan())
        self.assertTrue(utils.is_force_overflow_check())
        utils.clear_npu_overflow_flag()
        a = torch.Tensor([65535]).npu().half()
        a = a + a
        self.assertTrue(utils.npu_check_overflow(a))
        self.assertFalse(utils.get_npu_overflow_flag())  # cleared by the check

    def test_set_after_the_imports_before_the_first_npu_op(self):
        # torch_npu's documented get_npu_overflow_flag example, in a script that sets the
        # variable after the imports, as torch_npu's own tests do. Its overflow happens in the
        # cast already (65535 has no float16 value); its `a = a + a` is left out so that the
        # script needs no kernel compile.
        out = run_script(
            "import os, warnings, torch, torch_npu\n"
            "os.environ['FORCE_OVERFLOW_CHECK'] = '1'\n"
            "warnings.simplefilter('error')\n"
            "a = torch.Tensor([65535]).npu().half()\n"
            "ret = torch_npu.npu.get_npu_overflow_flag()\n"
            "torch_npu.npu.clear_npu_overflow_flag()\n"
            "print(ret, torch_npu.npu.get_npu_overflow_flag())\n")
        self.assertEqual(out.split(), ["True", "False"])


class TestSaturationMode(TestCase):
    # INF_NAN_MODE_FORCE_DISABLE=1 (with INF_NAN_MODE_ENABLE=0), as torch_npu's environment docs set it.

    def setUp(self):
        super().setUp()
        with mock.patch.dict(os.environ, {"INF_NAN_MODE_ENABLE": "0", "INF_NAN_MODE_FORCE_DISABLE": "1"}):
            overflow._set_mode_from_environment()

    def tearDown(self):
        overflow._set_mode_from_environment()
        super().tearDown()

    def test_results_saturate_and_set_the_flag(self):
        self.assertFalse(utils.is_support_inf_nan())
        utils.clear_npu_overflow_flag()
        self.assertEqual(torch.exp(torch.tensor([12.0], dtype=torch.float16).npu()).item(), 65504.0)
        self.assertTrue(utils.get_npu_overflow_flag())
        utils.clear_npu_overflow_flag()
        self.assertEqual(torch.sqrt(torch.tensor([-1.0], dtype=torch.float16).npu()).item(), 0.0)
        self.assertTrue(utils.get_npu_overflow_flag())
        utils.clear_npu_overflow_flag()
        a = torch.Tensor([65535]).npu().half()
        a = a + a
        self.assertEqual(a.item(), 65504.0)
        self.assertTrue(utils.npu_check_overflow(a))  # the flag, cleared by the check
        self.assertFalse(utils.get_npu_overflow_flag())

    def test_inf_nan_mode_enable_0_alone_is_refused(self):
        with mock.patch.dict(os.environ, {"INF_NAN_MODE_ENABLE": "0"}):
            with self.assertRaisesRegex(RuntimeError, r"export INF_NAN_MODE_FORCE_DISABLE=1[\s\S]*ERR00001"):
                overflow._set_mode_from_environment()


if __name__ == "__main__":
    run_tests()
