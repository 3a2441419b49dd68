"""ascend-attach-target: store the hardware model on the module as `ascend.target`.

Later passes (tiling, memory planning, emitters) read capacities and alignments from the module
rather than from a global, so one compiled module always says which chip it was built for. A
module that already carries a different chip is an error: silently retargeting would invalidate
tilings computed for the first one.
"""

from torch_mlir import ir

from ..dialects.ascend import TARGET_ATTR, TargetAttr, load_ascend
from ..hardware.soc import ASCEND910B1, Soc

# Models this compiler knows; more 910B variants differ only in core counts and would go here.
KNOWN_SOCS: dict[str, Soc] = {ASCEND910B1.name: ASCEND910B1}


def run(module: ir.Operation, *, chip: str = ASCEND910B1.name) -> bool:
    load_ascend(module.context)
    if chip not in KNOWN_SOCS:
        module.location.emit_error(
            f"ERR03007 GRAPH unknown chip '{chip}'; known: {', '.join(KNOWN_SOCS)}"
        )
        return False
    attrs = module.attributes
    if TARGET_ATTR in attrs:
        existing = attrs[TARGET_ATTR]
        if not isinstance(existing, TargetAttr):
            module.location.emit_error(f"'{TARGET_ATTR}' must be an #ascend.target, got {existing}")
            return False
        if ir.StringAttr(existing.chip).value != chip:
            module.location.emit_error(
                f"module is already built for {ir.StringAttr(existing.chip).value}, not {chip}; "
                "recompile from the torch-level module to change chips"
            )
            return False
        return True
    attrs[TARGET_ATTR] = TargetAttr.from_soc(KNOWN_SOCS[chip])
    return True
