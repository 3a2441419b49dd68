"""Environment report, as torch_npu's ``python -m torch_npu.utils.collect_env``.

There is no CANN toolkit here: :func:`get_cann_version` names what stands in for it,
the simulated Ascend runtime and the npu_mlir compiler (with its kernel-cache version,
which changes whenever the compiler's sources do).
"""

import sys
from collections import namedtuple
from importlib import metadata

import torch
from torch.utils import collect_env as torch_collect_env

__all__ = ["SystemEnv", "get_cann_version", "get_env_info", "get_pretty_env_info", "main"]

SystemEnv = namedtuple(
    "SystemEnv",
    ["torch_version", "torch_npu_version", "cann_version", "device_name", "device_count", "python_version",
     "os", "caching_allocator_config"],
)


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def get_cann_version() -> str:
    """Return the stand-in for the CANN version: the simulated runtime's and the compiler's versions."""
    from torch_npu.eager.disk_cache import compiler_version

    return (f"simulated Ascend910B runtime (npurt {_package_version('torch_npu')}), "
            f"npu_mlir compiler {compiler_version()} on torch-mlir {_package_version('torch-mlir')}")


def get_env_info() -> SystemEnv:
    """Collect the report's fields (queries the device table, initializes no device)."""
    import os

    count = torch.npu.device_count()
    return SystemEnv(
        torch_version=torch.__version__,
        torch_npu_version=_package_version("torch_npu"),
        cann_version=get_cann_version(),
        device_name=torch.npu.get_device_name(0) if count else "no NPU visible",
        device_count=count,
        python_version=sys.version.replace("\n", " "),
        os=torch_collect_env.get_os(torch_collect_env.run),
        caching_allocator_config=os.environ.get("PYTORCH_NPU_ALLOC_CONF", ""),
    )


def get_pretty_env_info() -> str:
    """Return :func:`get_env_info` as "field: value" lines."""
    info = get_env_info()
    return "\n".join(f"{field.replace('_', ' ')}: {value}" for field, value in info._asdict().items())


def main() -> None:
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
