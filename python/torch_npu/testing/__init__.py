"""torch_npu.testing: the test helpers torch_npu projects write their tests with.

``from torch_npu.testing.testcase import TestCase, run_tests`` starts most such test
files; importing :mod:`torch_npu.testing.testcase` initializes no NPU (device calls
happen in ``setUpClass`` and in the tests themselves).
"""
