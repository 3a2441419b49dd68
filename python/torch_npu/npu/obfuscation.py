"""The PMCC model-obfuscation calls: ``torch.npu.obfuscation_initialize`` / ``_calculate`` /
``_finalize``, with torch_npu's signatures.

On real hardware these talk over a socket to the PMCC (Privacy & Model Confidential
Computing) engine, whose client application runs in the normal OS and hands tensors to a
trusted application in the TEE, which obfuscates them. The engine is a separate deployment
(SDK, certificates, registered obfuscation factors); where it is not deployed, every call
fails with CANN error 507018. The simulator has no TEE and no PMCC engine, so it behaves as a
machine without the deployment: the arguments are checked as torch_npu checks them (TypeError
/ ValueError with ERR codes), then the call raises RuntimeError with 507018 and ERR00009.
Nothing is obfuscated and no handle is made up.
"""

import torch

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["obfuscation_calculate", "obfuscation_finalize", "obfuscation_initialize"]

# CANN's code for a call to the PMCC engine on a machine where it is not deployed.
PMCC_NOT_DEPLOYED = 507018
_OBFUSCATABLE = (torch.float16, torch.float32, torch.bfloat16, torch.int8)


def _int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}\n" + pta_error(ErrCode.TYPE))
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}\n" + pta_error(ErrCode.VALUE))
    return value


def _coefficient(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"obf_coefficient must be a float, got {type(value).__name__}\n" + pta_error(ErrCode.TYPE))
    if not 0.0 < float(value) <= 1.0:
        raise ValueError(f"obf_coefficient must be in (0.0, 1.0], got {value}\n" + pta_error(ErrCode.VALUE))
    return float(value)


def _int32_tensor(name: str, value: object) -> torch.Tensor:
    if not isinstance(value, torch.Tensor) or value.dtype != torch.int32:
        raise TypeError(f"{name} must be an int32 Tensor (the value obfuscation_initialize returned)\n"
                        + pta_error(ErrCode.TYPE))
    return value


def _not_deployed(call: str) -> RuntimeError:
    return RuntimeError(f"{call}: the PMCC obfuscation engine is not deployed (error {PMCC_NOT_DEPLOYED}, as on a "
                        "machine without the PMCC deployment); the simulated device has no TEE to run it, so no "
                        "tensor is obfuscated\n" + pta_error(ErrCode.UNAVAIL))


def obfuscation_initialize(hidden_size: int, tp_rank: int, cmd: int, data_type: torch.dtype,
                           model_obf_seed_id: int, data_obf_seed_id: int, thread_num: int,
                           obf_coefficient: float = 1.0) -> torch.Tensor:
    r"""Open the connection to the PMCC engine and set up obfuscation of tensors whose last
    dimension is ``hidden_size`` (1-10000 when ``cmd`` is 1 or 2, else 0), for tensor-parallel
    rank ``tp_rank``, of dtype ``data_type``, with the registered seeds and ``thread_num``
    engine threads. On hardware it returns the socket's fd as an int32 Tensor; here it raises
    (see the module docstring)."""
    _int("cmd", cmd, 0)
    _int("hidden_size", hidden_size, 1 if cmd in (1, 2) else 0, 10000 if cmd in (1, 2) else 0)
    _int("tp_rank", tp_rank, 0)
    if data_type not in _OBFUSCATABLE:
        raise TypeError(f"data_type must be one of {_OBFUSCATABLE}, got {data_type}\n" + pta_error(ErrCode.TYPE))
    _int("model_obf_seed_id", model_obf_seed_id, 0)
    _int("data_obf_seed_id", data_obf_seed_id, 0)
    _int("thread_num", thread_num, 1)
    _coefficient(obf_coefficient)
    raise _not_deployed("obfuscation_initialize")


def obfuscation_calculate(fd: torch.Tensor, x: torch.Tensor, param: torch.Tensor,
                          obf_coefficient: float = 1.0) -> torch.Tensor:
    r"""Send ``x`` (last dimension the initialized hidden size) to the engine and return its
    obfuscated copy, same shape and dtype. Here it raises (see the module docstring)."""
    _int32_tensor("fd", fd)
    if not isinstance(x, torch.Tensor) or x.dtype not in _OBFUSCATABLE:
        raise TypeError(f"x must be a Tensor of one of {_OBFUSCATABLE}\n" + pta_error(ErrCode.TYPE))
    _int32_tensor("param", param)
    _coefficient(obf_coefficient)
    raise _not_deployed("obfuscation_calculate")


def obfuscation_finalize(fd_to_close: torch.Tensor) -> torch.Tensor:
    r"""Close the connection ``fd_to_close`` names. Here it raises (see the module docstring)."""
    _int32_tensor("fd_to_close", fd_to_close)
    raise _not_deployed("obfuscation_finalize")
