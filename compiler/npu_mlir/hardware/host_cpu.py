"""The host CPU the sim's kernels run on: its feature flags, read once from /proc/cpuinfo.

The sim's code generator targets the host (the LLVM JIT's host machine), so the tile sizes
(targets/sim/schedule.py), the bf16 dot-product path (targets/sim/bf16_dot.py) and the kernel
cache key (targets/sim/cache.py) all follow these flags. Plain Python: the user's process reads
it without loading MLIR.
"""

from __future__ import annotations

import os
from functools import cache


@cache
def flags() -> frozenset[str]:
    """The `flags` line of /proc/cpuinfo (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def isa() -> str:
    """The flags as one sorted string, or the machine name where they are unknown (a cache key)."""
    return " ".join(sorted(flags())) or os.uname().machine
