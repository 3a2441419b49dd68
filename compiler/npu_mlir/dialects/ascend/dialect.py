"""The `ascend` dialect object, its attributes and the base class every ascend op derives from.

Attributes (custom IRDL attributes, each with one or two builtin parameters):
  #ascend.format<"FRACTAL_NZ">          a data format (formats.FORMAT_NAMES); used as a tensor
                                        type's encoding and in memref types
  #ascend.memspace<"ub">                a memory space: gm, l1, l0a, l0b, l0c, ub; used as a
                                        memref memory space (no memory space means gm)
  #ascend.target<"Ascend910B1", {...}>  the hardware model (hardware/soc.py) as a dictionary,
                                        stored on the module as `ascend.target`

Ops print in generic form only (an ext/IRDL limitation). Ops with one optional or variadic group
of operands (or results) are built without `operandSegmentSizes`: the group is whatever is left
after the fixed operands, so hand-written IR stays readable.
IRDL binds all values of one variadic group to a single type, so a variadic group must be
homogeneous: `ascend.launch` spreads its heterogeneous arguments over up to 24 groups and its
results over up to 16, and `ascend.yield` its values over up to 16, one group per run of equal
types, with `operandSegmentSizes` / `resultSegmentSizes` (kernel_ops.py).
"""

# No `from __future__ import annotations`: ext reads op fields from live annotations.

import types
from typing import Any

from torch_mlir import ir
from torch_mlir.dialects.ext import AttributeDef, Dialect, OperandDef, RegionDef, ResultDef
from torch_mlir.dialects.irdl import Variadicity

from ...hardware.soc import ASCEND910B1, Soc
from .formats import FORMAT_NAMES

MEMORY_SPACES = ("gm", "l1", "l0a", "l0b", "l0c", "ub")


def _one_of(*names: str) -> Any:
    """An IRDL constraint accepting exactly the StringAttrs `names`."""
    alias = None
    for name in names:
        lit = types.GenericAlias(ir.StringAttr, (name,))
        alias = lit if alias is None else alias | lit
    return alias


class Ascend(Dialect, name="ascend"):
    pass


class FormatAttr(Ascend.Attribute, name="format"):
    value: _one_of(*FORMAT_NAMES)

    @classmethod
    def of(cls, name: str) -> "FormatAttr":
        return cls.get(ir.StringAttr.get(name))

    @property
    def name(self) -> str:
        return ir.StringAttr(self.value).value


class MemSpaceAttr(Ascend.Attribute, name="memspace"):
    value: _one_of(*MEMORY_SPACES)

    @classmethod
    def of(cls, name: str) -> "MemSpaceAttr":
        return cls.get(ir.StringAttr.get(name))

    @property
    def name(self) -> str:
        return ir.StringAttr(self.value).value


class TargetAttr(Ascend.Attribute, name="target"):
    chip: ir.StringAttr
    spec: ir.DictAttr

    @classmethod
    def from_soc(cls, soc: Soc) -> "TargetAttr":
        def attr(v: object) -> ir.Attribute:
            if isinstance(v, str):
                return ir.StringAttr.get(v)
            if isinstance(v, float):
                return ir.FloatAttr.get_f64(v)
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)

        values = {k: attr(v) for k, v in soc.to_dict().items() if k != "name"}
        return cls.get(ir.StringAttr.get(soc.name), ir.DictAttr.get(values))

    def soc(self) -> Soc:
        spec = ir.DictAttr(self.spec)
        values = {}
        for named in spec:
            a = named.attr
            values[named.name] = (
                ir.StringAttr(a).value if isinstance(a, ir.StringAttr)
                else ir.FloatAttr(a).value if isinstance(a, ir.FloatAttr)
                else ir.IntegerAttr(a).value
            )
        return Soc.from_dict({"name": ir.StringAttr(self.chip).value, **values})


TARGET_ATTR = "ascend.target"


def module_soc(module: ir.Operation) -> Soc:
    """The hardware model attached to `module` by ascend-attach-target (910B1 when absent)."""
    attrs = module.attributes
    if TARGET_ATTR in attrs and isinstance(attrs[TARGET_ATTR], TargetAttr):
        return attrs[TARGET_ATTR].soc()
    return ASCEND910B1


class AscendOp(Ascend.Operation):
    """Base of all ascend ops: `check()` returns an error message or None.

    Verifier messages follow MLIR's "'op.name' op <message>" form so `expected-error` lines read
    like upstream ones. A Python exception in a verifier becomes a diagnostic, never a traceback.
    """

    @classmethod
    def __init_subclass__(cls, **kwargs):
        own_init = cls.__dict__.get("__init__")  # ext's hook overwrites it
        super().__init_subclass__(**kwargs)
        if kwargs.get("name"):
            if own_init is not None:
                cls.__init__ = own_init
            else:
                _install_builder(cls)

    def check(self) -> str | None:
        return None

    def verify_invariants(self) -> bool:
        try:
            err = self._missing_attribute() or self.check()
        except Exception as exc:  # a malformed op must not crash the host process
            err = f"could not be verified: {type(exc).__name__}: {exc}"
        if err:
            self.location.emit_error(f"'{self.OPERATION_NAME}' op {err}")
            return False
        return True

    def _missing_attribute(self) -> str | None:
        for f in self._fields:
            if isinstance(f, AttributeDef) and f.name not in self.attributes:
                return f"needs attribute '{f.name}'"
        return None

    def attr_str(self, name: str) -> str:
        return ir.StringAttr(self.attributes[name]).value

    def attr_int(self, name: str) -> int:
        return ir.IntegerAttr(self.attributes[name]).value

    def attr_bool(self, name: str) -> bool:
        return bool(ir.BoolAttr(self.attributes[name]).value)

    def attr_ints(self, name: str) -> list[int]:
        return list(ir.DenseI64ArrayAttr(self.attributes[name]))


def _install_builder(cls: type) -> None:
    """Replace ext's generated builder and accessors of op class `cls`.

    - No segment-size attributes: at most one operand group and one result group may be
      optional or variadic, and its size is what is left after the single ones.
    - An explicitly passed false BoolAttr is kept (ext's builder tests attributes for
      truthiness and would replace `false` by the default, or drop it).
    """
    operands = [f for f in cls._fields if isinstance(f, OperandDef)]
    results = [f for f in cls._fields if isinstance(f, ResultDef)]
    attrs = [f for f in cls._fields if isinstance(f, AttributeDef)]
    for group in (operands, results):
        if sum(f.variadicity != Variadicity.single for f in group) > 1:
            raise TypeError(f"{cls.__name__}: more than one variable-size group")
    signature = cls.__init__.__signature__

    def flatten(values: list) -> list:
        flat = []
        for v in values:
            if isinstance(v, (ir.Value, ir.Type)):
                flat.append(v)
            elif v is not None:
                flat.extend(v)
        return flat

    def __init__(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        self = a["self"]
        ir.OpView.__init__(
            self,
            cls.OPERATION_NAME,
            cls._ODS_REGIONS,
            None,
            None,
            attributes={f.name: a[f.name] if a[f.name] is not None else f.process_attr(None) for f in attrs},
            results=flatten([f.process_type(a[f.name]) for f in results]),
            operands=flatten([a[f.name] for f in operands]),
            successors=None,
            regions=len([f for f in cls._fields if isinstance(f, RegionDef)]) or None,
            loc=a["loc"],
            ip=a["ip"],
        )

    __init__.__signature__ = signature
    cls.__init__ = __init__
    cls._ODS_OPERAND_SEGMENTS = None
    cls._ODS_RESULT_SEGMENTS = None
    _install_accessors(cls, operands, "operands")
    _install_accessors(cls, results, "results")


def _install_accessors(cls: type, group: list, where: str) -> None:
    for i, f in enumerate(group):

        def get(self, i=i, f=f):
            values = list(getattr(self.operation, where))
            extra = len(values) - sum(g.variadicity == Variadicity.single for g in group)
            start = sum(1 if g.variadicity == Variadicity.single else extra for g in group[:i])
            if f.variadicity == Variadicity.single:
                return values[start]
            chunk = values[start : start + extra]
            if f.variadicity == Variadicity.optional:
                return chunk[0] if chunk else None
            return chunk

        setattr(cls, f.name, property(get))
