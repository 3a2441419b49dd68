"""Errors in user code under torch.compile(backend="npu-mlir") raise what eager npu raises: the same
exception type for a bad shape (Dynamo's shape check while tracing words it as for any device), the
same exception for a Python error, and for an index out of range the
device-side assertion at the next synchronization, with its ERR code; the device stays usable."""

import re

import pytest
import torch

import torch_npu  # noqa: F401


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _eager_and_compiled_error(fn, *args) -> tuple[BaseException, BaseException]:
    errors = []
    for run in (fn, torch.compile(fn, backend="npu-mlir", dynamic=False)):
        with pytest.raises(Exception) as info:
            run(*args)
            torch.npu.synchronize()
        errors.append(info.value)
    return errors[0], errors[1]


def test_matmul_shape_mismatch_raises_as_eager():
    eager, compiled = _eager_and_compiled_error(lambda a, b: (a @ b).relu(), torch.randn(2, 3).npu(),
                                                torch.randn(4, 5).npu())
    # Dynamo checks shapes while tracing, as for CUDA or CPU tensors: the meta kernel's message in a
    # TorchRuntimeError (a RuntimeError), where eager names the same shapes with its ERR code.
    assert isinstance(compiled, type(eager))
    assert str(eager).startswith("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)") and "ERR01001" in str(eager)
    assert "a and b must have same reduction dim, but got [2, 3] X [4, 5]" in str(compiled)


@pytest.mark.parametrize("fn, make, says", [
    (lambda a, b: (a + b).relu(), lambda: (torch.randn(3, 4), torch.randn(5, 4)),
     "Attempting to broadcast a dimension of length 5"),
    (lambda a: a.view(5, 3).relu(), lambda: (torch.randn(3, 4),), "shape '[5, 3]' is invalid for input of size 12"),
    (lambda a, b: torch.cat([a, b], 0).relu(), lambda: (torch.randn(3, 4), torch.randn(3, 5)),
     "Sizes of tensors must match except in dimension 0"),
    (lambda a: a.add_(1), lambda: (torch.randn(3).requires_grad_(),),
     "a leaf Variable that requires grad is being used in an in-place operation"),
], ids=["broadcast", "view", "cat", "leaf-inplace"])
def test_bad_calls_raise_as_eager(fn, make, says):
    # caught while Dynamo traces on fake tensors, as for CUDA tensors: a RuntimeError as eager's,
    # naming the same fault; the device stays usable
    args = [a.npu().detach().requires_grad_(a.requires_grad) for a in make()]
    eager, compiled = _eager_and_compiled_error(fn, *args)
    assert isinstance(eager, RuntimeError) and isinstance(compiled, type(eager)), (eager, compiled)
    assert says in str(compiled), str(compiled)
    torch.testing.assert_close((torch.ones(4).npu() * 2).cpu(), torch.full((4,), 2.0))


def test_python_error_in_compiled_code_raises_as_eager():
    def fn(x):
        y = x * 2
        if y.shape[0] != 3:
            raise ValueError("expected 3 rows")
        return y

    eager, compiled = _eager_and_compiled_error(fn, torch.randn(4, 2).npu())
    assert type(compiled) is ValueError and str(compiled) == str(eager)


def test_index_out_of_range_fails_at_sync_with_the_eager_error_code():
    table = torch.randn(6, 4)
    bad = torch.tensor([1, 9])

    def fn(weight, idx):
        return torch.nn.functional.embedding(idx, weight) * 2

    eager, compiled = _eager_and_compiled_error(fn, table.npu(), bad.npu())
    code = re.search(r"ERR\d{5}", str(eager))
    assert code is not None and "device-side assertion failed" in str(eager)
    assert type(compiled) is type(eager) and code.group(0) in str(compiled)
    good = torch.tensor([5, 0])
    out = torch.compile(fn, backend="npu-mlir", dynamic=False)(table.npu(), good.npu())
    torch.testing.assert_close(out.cpu(), fn(table, good))
