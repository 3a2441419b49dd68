"""Modeled Ascend 910B time of a compiled kernel, from its tiling record and soc.py's rates.

The simulated device runs kernels on host threads, so its durations say nothing about a
real chip. This model estimates what the same tiled kernel would take on a 910B1:

  cores   = min(block_dim, cores of its core type)       24 AIC for cube, 48 AIV for vector
  MTE2    = bytes read from GM  / (cores * gm_bw  * clock)            GM -> local buffers
  MTE3    = bytes written to GM / (cores * ub_to_gm_bw * clock)       local buffers -> GM
  cube    = 2*batch*m*n*k / (cores * 2*16*16*c * clock)   one 16 x c x 16 fractal mmad per
            cycle per AIC, c = 16 for fp16/bf16, 8 for fp32, 32 for int8 (soc.fractal_shape)
  vector  = elements * vector ops * elem bytes / (cores * vector_repeat_bytes * clock)
  HBM     = (bytes read + written) / 1.6 TB/s             the cores share the 910B's HBM2e
  time    = max(MTE2, MTE3, cube, vector, HBM)            double buffering overlaps the pipes

Bytes are the kernel's GM tensors (function_type), each moved once; launch overhead and
L2 hits are not modeled. A pipe's share (its time / the kernel's time) is what
AiCMetrics.PipeUtilization reports as aic_*/aiv_* ratios.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from math import prod
from pathlib import Path

from npu_mlir.hardware.dtypes import DTYPES
from npu_mlir.hardware.soc import ASCEND910B1, Soc

__all__ = ["KernelModelTime", "model_kernel", "modeled_kernels"]

_TENSOR = re.compile(r"tensor<([0-9x]*?)x?(f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8)>")
_BITS = {t.mlir: 8 * t.bytes for t in DTYPES}
# The 910B's HBM2e bandwidth (published figure); soc.py's rates are per core, and 48 cores at
# gm_bw would read faster than the memory can deliver.
HBM_BYTES_PER_S = 1.6e12
_VECTOR_OPS = ("ascend.unary", "ascend.binary", "ascend.ternary", "ascend.cast", "ascend.compare",
               "ascend.select", "ascend.reduce")


@dataclass(frozen=True)
class KernelModelTime:
    """A kernel's modeled 910B time and each pipe's busy time, in microseconds."""

    us: float
    pipes: dict[str, float]
    core_type: str

    def share(self, pipe: str) -> float:
        return self.pipes.get(pipe, 0.0) / self.us if self.us > 0 else 0.0


def _tensors(text: str) -> list[tuple[int, int]]:
    """(elements, bits) of each ranked tensor type in `text`; 0-d tensors are scalars, skipped."""
    out = []
    for dims, dtype in _TENSOR.findall(text):
        if dims:
            out.append((prod(int(d) for d in dims.split("x") if d), _BITS[dtype]))
    return out


def _int_attr(text: str, name: str) -> int | None:
    m = re.search(rf"\b{name} = (\d+) : i64", text)
    return int(m.group(1)) if m else None


def model_kernel(tiled_mlir: str, soc: Soc = ASCEND910B1) -> KernelModelTime | None:
    """Model one tiled `ascend.kernel` (its printed form); None if the text has no kernel attributes."""
    attrs_at = tiled_mlir.rfind("}) {")
    signature = re.search(r"function_type = \((.*?)\) -> (\(.*?\)|tensor<[^>]*>)", tiled_mlir[attrs_at:])
    core = re.search(r'core_type = "(\w+)"', tiled_mlir[attrs_at:])
    if attrs_at < 0 or signature is None or core is None:
        return None
    block_dim = _int_attr(tiled_mlir[attrs_at:], "block_dim") or 1
    cores = min(block_dim, soc.cores(core.group(1)))
    clock = soc.cube_clock_ghz * 1e9
    inputs, outputs = _tensors(signature.group(1)), _tensors(signature.group(2))
    read = sum(n * bits // 8 for n, bits in inputs)
    written = sum(n * bits // 8 for n, bits in outputs)
    pipes = {"mte2": read / (cores * soc.gm_bw * clock), "mte3": written / (cores * soc.ub_to_gm_bw * clock),
             "hbm": (read + written) / HBM_BYTES_PER_S}
    tiling = tiled_mlir[attrs_at:]
    if 'kind = "matmul"' in tiling:
        m, n, k = (_int_attr(tiling, d) or 1 for d in ("m", "n", "k"))
        batch = _int_attr(tiling, "batch") or 1
        bits = inputs[0][1] if inputs else 16
        _, cols = soc.fractal_shape(bits if bits in (8, 16, 32) else 32)
        pipes["cube"] = 2.0 * batch * m * n * k / (cores * 2 * 16 * 16 * cols * clock)
    body = tiled_mlir[:attrs_at]
    vector_ops = sum(body.count(f'"{op}"') for op in _VECTOR_OPS)
    if vector_ops:
        elements, bits = max(inputs + outputs, default=(0, 32))
        pipes["vector"] = elements * vector_ops * (bits // 8) / (cores * soc.vector_repeat_bytes * clock)
    return KernelModelTime(us=max(pipes.values()) * 1e6, pipes={p: t * 1e6 for p, t in pipes.items()},
                           core_type=core.group(1))


def modeled_kernels(symbols: set[str], cache_dir: Path | None = None) -> dict[str, KernelModelTime]:
    """The model of each kernel in `symbols` found in the kernel cache (default $TORCH_NPU_KERNEL_CACHE).

    Launch symbols carry a content hash, so a symbol names one kernel in every compiler
    version's directory; only directories holding one of the symbols' memos (or objects) are read.
    """
    if cache_dir is None:
        from torch_npu.eager.disk_cache import cache_root

        cache_dir = cache_root()
    wanted = {s for s in symbols if s}
    models: dict[str, KernelModelTime] = {}
    if not wanted or not Path(cache_dir).is_dir():
        return models
    versions = sorted((d for d in Path(cache_dir).iterdir() if d.is_dir()), key=lambda d: -d.stat().st_mtime)
    for version in versions:  # newest first: usually the current compiler's directory holds them all
        if wanted <= models.keys():
            break
        names = os.listdir(version)
        # <symbol>_<hash>.json is each kernel's memo (its .so may be a library linked with others)
        if not any(name.endswith((".so", ".json")) and name.rsplit("_", 1)[0] in wanted - models.keys()
                   for name in names):
            continue
        for name in names:
            if not name.startswith("entry-"):
                continue
            try:
                text = (version / name).read_text()
                if not any(f'"symbol": "{s}"' in text for s in wanted - models.keys()):
                    continue
                record = json.loads(text)
            except (OSError, json.JSONDecodeError):
                continue  # an entry another process is writing
            for source in record.get("kernel", {}).get("sources", []):
                model = model_kernel(source.get("tiled_mlir") or "")
                if source.get("symbol") in wanted and model is not None:
                    models[source["symbol"]] = model
    return models
