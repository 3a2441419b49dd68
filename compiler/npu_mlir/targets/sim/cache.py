"""Where built kernels live: torch_npu's one cache variable, read by the sim target and the disk cache.

The compiler is torch_npu's kernel builder, so the two share a directory: the sim target writes
its .so files there (npu-opt, tests), and torch_npu's disk cache keys its records under it.
Plain os/pathlib, so the user's process reads it without loading MLIR.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "TORCH_NPU_KERNEL_CACHE"


def cache_root() -> Path:
    """$TORCH_NPU_KERNEL_CACHE, else $XDG_CACHE_HOME/torch_npu/kernels (~/.cache by default)."""
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch_npu", "kernels")
    return Path(root)
