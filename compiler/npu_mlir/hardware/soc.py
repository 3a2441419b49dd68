"""The hardware model of the simulated Ascend 910B1 (DESIGN.md section 3).

One frozen dataclass, so passes can read capacities and alignments without a running device and
two compiles with the same model are guaranteed to see the same numbers. `ascend-attach-target`
stores it on the module as `#ascend.target<...>`; `ascend-tile` and `ascend-plan-memory` read it
back with `Soc.from_dict`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# Bytes of one cube fractal and the (rows, cols) of a fractal per element bit width: the cube unit
# always consumes 512-byte blocks, so narrower types get more columns.
FRACTAL_BYTES = 512
_FRACTAL_SHAPES = {32: (16, 8), 16: (16, 16), 8: (16, 32)}


@dataclass(frozen=True)
class Soc:
    """Capacities, alignments and rates of one NPU model; all sizes in bytes."""

    name: str = "Ascend910B1"
    cube_cores: int = 24
    vector_cores: int = 48
    vector_per_cube: int = 2
    hbm_bytes: int = 64 * GIB
    l2_bytes: int = 192 * MIB
    l1_bytes: int = 512 * KIB
    l0a_bytes: int = 64 * KIB
    l0b_bytes: int = 64 * KIB
    l0c_bytes: int = 128 * KIB
    ub_bytes: int = 192 * KIB
    ub_align: int = 32
    l1_align: int = 32
    l0_align: int = 512
    vector_repeat_bytes: int = 256
    # Per-core sustained rates in bytes per cycle.
    gm_bw: int = 32
    l2_read_bw: int = 110
    l1_to_l0a_bw: int = 512
    l1_to_l0b_bw: int = 256
    ub_to_gm_bw: int = 64
    cube_clock_ghz: float = 1.85

    def fractal_shape(self, bit_width: int) -> tuple[int, int]:
        """Return the (rows, cols) of one cube fractal for elements of `bit_width` bits."""
        if bit_width not in _FRACTAL_SHAPES:
            raise ValueError(
                f"ERR03007 GRAPH the cube unit has no fractal for {bit_width}-bit elements; "
                "cast to fp16, bf16, fp32 or int8 first"
            )
        return _FRACTAL_SHAPES[bit_width]

    def capacity(self, space: str) -> int:
        """Return the bytes of one core's buffer in memory space `space` (gm is the HBM)."""
        return {
            "gm": self.hbm_bytes,
            "l1": self.l1_bytes,
            "l0a": self.l0a_bytes,
            "l0b": self.l0b_bytes,
            "l0c": self.l0c_bytes,
            "ub": self.ub_bytes,
        }[space]

    def alignment(self, space: str) -> int:
        """Return the byte alignment a buffer in `space` must have."""
        return {"gm": self.ub_align, "l1": self.l1_align, "ub": self.ub_align}.get(
            space, self.l0_align
        )

    def cores(self, core_type: str) -> int:
        """Return how many cores a kernel of `core_type` (aiv, aic, mix) can spread over."""
        return {"aiv": self.vector_cores, "aic": self.cube_cores, "mix": self.cube_cores}[
            core_type
        ]

    def to_dict(self) -> dict[str, int | float | str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, int | float | str]) -> Soc:
        """Build a model from `to_dict` output; unknown keys are an error, missing ones default."""
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(
                f"ERR03003 GRAPH unknown target fields {sorted(unknown)}; "
                f"expected a subset of {sorted(known)}"
            )
        return cls(**values)


ASCEND910B1 = Soc()
