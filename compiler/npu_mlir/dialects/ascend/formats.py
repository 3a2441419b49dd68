"""The data formats of DESIGN.md section 4: aclFormat numbers, logical rank, storage shape.

Pure Python so the runtime glue, the emitters and the verifiers share one table. In IR a format
rides on the tensor type as its encoding (`tensor<64x32xf16, #ascend.format<"FRACTAL_NZ">>`):
the shape stays the *logical* one, the encoding says how it is laid out in device memory, and
`storage_shape` gives the padded physical shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from ...errors import INVALID_VALUE, CompilerError


class FormatError(CompilerError, ValueError):
    """A logical shape the format cannot take (its rank)."""

    code = INVALID_VALUE


@dataclass(frozen=True)
class Format:
    name: str
    acl_id: int
    # Logical rank the format applies to; None means any rank (ND) and -2 means "at least 2".
    rank: int | None


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("ND", 2, None),
        Format("NCHW", 0, 4),
        Format("NHWC", 1, 4),
        Format("NC1HWC0", 3, 4),
        Format("FRACTAL_Z", 4, 4),
        Format("FRACTAL_NZ", 29, -2),
        Format("NCDHW", 30, 5),
        Format("NDC1HWC0", 32, 5),
        Format("FRACTAL_Z_3D", 33, 5),
    )
}
FORMAT_NAMES = tuple(FORMATS)
# Formats whose storage differs from the row-major logical layout.
PHYSICAL_FORMATS = ("NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ", "NDC1HWC0", "FRACTAL_Z_3D")
C0 = 16


def rank_error(fmt: str, rank: int) -> str | None:
    """Return why a logical tensor of `rank` cannot take format `fmt`, or None when it can."""
    want = FORMATS[fmt].rank
    if want is None or want == rank or (want == -2 and rank >= 2):
        return None
    need = "at least 2" if want == -2 else str(want)
    return f"format {fmt} needs a tensor of rank {need}, got rank {rank}"


def storage_shape(fmt: str, shape: list[int], bit_width: int = 16) -> list[int]:
    """Return the padded physical shape of a logical `shape` stored in `fmt`."""
    if err := rank_error(fmt, len(shape)):
        raise FormatError(err)
    c = lambda n: ceil(n / C0)
    match fmt:
        case "NC1HWC0":
            n, ch, h, w = shape
            return [n, c(ch), h, w, C0]
        case "NDC1HWC0":
            n, ch, d, h, w = shape
            return [n, d, c(ch), h, w, C0]
        case "FRACTAL_Z":
            co, ci, kh, kw = shape
            return [c(ci) * kh * kw, c(co), C0, C0]
        case "FRACTAL_Z_3D":
            co, ci, d, kh, kw = shape
            return [d * c(ci) * kh * kw, c(co), C0, C0]
        case "FRACTAL_NZ":
            *batch, m, n = shape
            # int8 fractals are 16x32: 512 bytes per fractal whatever the dtype.
            c0 = 32 if bit_width == 8 else C0
            return [*batch, ceil(n / c0), c(m), C0, c0]
    return list(shape)
