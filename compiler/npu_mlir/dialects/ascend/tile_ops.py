"""Tile-level ascend ops: the per-core program `ascend-lower-tiles` writes inside a kernel.

Buffers are memrefs whose memory space is an #ascend.memspace (none = gm); tiles of gm tensors
are plain memref.subview results. Copies and compute move whole memrefs, so tile offsets and
sizes live in standard subview ops where every MLIR pass understands them.
  block_idx / block_num -> index      this core's block index / the launch's block_dim
  alloc {space, bytes, depth}         a queue of `depth` buffers of `bytes` each (depth 2 = double
                                      buffering); the result is one buffer of that queue
  copy_in(gm, ub|l1)  copy_out(ub, gm)            MTE2 / MTE3 moves
  load_l0(l1, l0a|l0b) {transpose}                MTE1 move into the cube's operand buffers
  mmad(a l0a, b l0b, c l0c) {init}                c = a@b when init else c += a@b
  fixpipe(l0c, gm|ub)                             cube result out, with dtype conversion
  vunary/vbinary/vternary/vcast/vcompare/vselect  elementwise on ub buffers, kinds as the
  vreduce {kind, dims}/vbroadcast {dims}/vdup      tensor-level ops of the same name
  set_flag/wait_flag {src_pipe, dst_pipe, event_id}, barrier {pipe}   pipe synchronisation
"""

# No `from __future__ import annotations`: ext reads op fields from live annotations.

from typing import Any

from torch_mlir import ir
from torch_mlir.dialects.ext import Operand, Result

from ...hardware.soc import ASCEND910B1
from .dialect import AscendOp, MemSpaceAttr, module_soc
from .shaped import element_type, is_scalar, memref_space, num_bytes
from .tensor_ops import BINARY_KINDS, COMPARE_PREDICATES, REDUCE_KINDS, TERNARY_KINDS, UNARY_KINDS

PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL")
MemRef = ir.MemRefType


def _spaces_error(values: dict[str, ir.Value], allowed: dict[str, tuple[str, ...]]) -> str | None:
    for name, v in values.items():
        if not isinstance(v.type, MemRef):
            if is_scalar(v.type) and "scalar" in allowed[name]:
                continue
            return f"{name} must be a memref, got {v.type}"
        space = memref_space(v.type)
        if space not in allowed[name]:
            return f"{name} is in memory space {space}; expected {' or '.join(allowed[name])}"
    return None


def _same_elements_error(a: ir.Value, b: ir.Value, check_elt: bool = True) -> str | None:
    ta, tb = a.type, b.type
    if ta.has_static_shape and tb.has_static_shape and _count(ta) != _count(tb):
        return f"element counts differ: {ta.shape} vs {tb.shape}"
    if check_elt and ta.element_type != tb.element_type:
        return f"element types differ: {ta.element_type} vs {tb.element_type}"
    return None


def _count(t: ir.ShapedType) -> int:
    n = 1
    for d in t.shape:
        n *= d
    return n


class BlockIdxOp(AscendOp, name="block_idx"):
    result: Result[ir.IndexType]


class BlockNumOp(AscendOp, name="block_num"):
    result: Result[ir.IndexType]


class AllocOp(AscendOp, name="alloc"):
    space: MemSpaceAttr
    bytes: ir.IntegerAttr
    depth: ir.IntegerAttr
    result: Result[MemRef]

    def check(self):
        # The enclosing module's target, the default model for a detached op.
        module = self.operation.parent
        while module is not None and module.name != "builtin.module":
            module = module.parent
        soc = module_soc(module) if module is not None else ASCEND910B1
        space, size, depth = MemSpaceAttr(self.attributes["space"]).name, self.attr_int("bytes"), self.attr_int("depth")
        if space == "gm":
            return "allocates on-chip buffers only; gm memory comes from the host"
        if memref_space(self.result.type) != space:
            return f"result memory space {memref_space(self.result.type)} differs from space {space}"
        if depth not in (1, 2):
            return f"depth {depth} must be 1 or 2 (double buffering)"
        if size % soc.alignment(space):
            return f"{size} bytes is not a multiple of the {soc.alignment(space)}-byte {space} alignment"
        if self.result.type.has_static_shape and num_bytes(self.result.type) > size:
            return f"result needs {num_bytes(self.result.type)} bytes but the buffer has {size}"
        if size * depth > soc.capacity(space):
            return f"{depth} x {size} bytes exceed the {soc.capacity(space)}-byte {space}"
        return None


class _Move(AscendOp):
    src: Operand[MemRef]
    dst: Operand[MemRef]
    # Allowed memory spaces; class constants, not annotated (annotations are op fields).
    SRC = ()
    DST = ()
    SAME_ELT = True

    def check(self):
        return _spaces_error({"src": self.src, "dst": self.dst}, {"src": self.SRC, "dst": self.DST}) or (
            _same_elements_error(self.src, self.dst, self.SAME_ELT)
        )


class CopyInOp(_Move, name="copy_in"):
    SRC, DST = ("gm",), ("ub", "l1")


class CopyOutOp(_Move, name="copy_out"):
    SRC, DST = ("ub",), ("gm",)


class LoadL0Op(_Move, name="load_l0"):
    transpose: ir.IntegerAttr
    SRC, DST = ("l1",), ("l0a", "l0b")


class FixpipeOp(_Move, name="fixpipe"):
    SRC, DST, SAME_ELT = ("l0c",), ("gm", "ub"), False


class MmadOp(AscendOp, name="mmad"):
    a: Operand[MemRef]
    b: Operand[MemRef]
    c: Operand[MemRef]
    init: ir.IntegerAttr

    def check(self):
        values = {"a": self.a, "b": self.b, "c": self.c}
        if err := _spaces_error(values, {"a": ("l0a",), "b": ("l0b",), "c": ("l0c",)}):
            return err
        a, b, c = self.a.type.shape, self.b.type.shape, self.c.type.shape
        if len(a) != 2 or len(b) != 2 or len(c) != 2:
            return "operands must be rank-2 (M,K) x (K,N) -> (M,N) tiles"
        if a[1] != b[0] or c != [a[0], b[1]]:
            return f"tile shapes {a} x {b} -> {c} do not form a matrix product"
        return None


def _vector_check(op: AscendOp, ins: dict[str, ir.Value], kinds: tuple[str, ...] | None,
                  kind_attr: str = "kind", check_elt: bool = True) -> str | None:
    if kinds is not None and (kind := op.attr_str(kind_attr)) not in kinds:
        return f"unknown {kind_attr} '{kind}'; expected one of {', '.join(kinds)}"
    allowed = {name: ("ub", "scalar") for name in ins} | {"dst": ("ub",)}
    if err := _spaces_error(ins | {"dst": op.dst}, allowed):
        return err
    for v in ins.values():
        if isinstance(v.type, MemRef) and (err := _same_elements_error(v, op.dst, check_elt)):
            return err
    return None


class VUnaryOp(AscendOp, name="vunary"):
    src: Operand[MemRef]
    dst: Operand[MemRef]
    kind: ir.StringAttr

    def check(self):
        return _vector_check(self, {"src": self.src}, UNARY_KINDS)


class VBinaryOp(AscendOp, name="vbinary"):
    lhs: Operand[Any]
    rhs: Operand[Any]
    dst: Operand[MemRef]
    kind: ir.StringAttr

    def check(self):
        return _vector_check(self, {"lhs": self.lhs, "rhs": self.rhs}, BINARY_KINDS)


class VTernaryOp(AscendOp, name="vternary"):
    a: Operand[Any]
    b: Operand[Any]
    c: Operand[Any]
    dst: Operand[MemRef]
    kind: ir.StringAttr

    def check(self):
        return _vector_check(self, {"a": self.a, "b": self.b, "c": self.c}, TERNARY_KINDS)


class VCastOp(AscendOp, name="vcast"):
    src: Operand[MemRef]
    dst: Operand[MemRef]

    def check(self):
        return _vector_check(self, {"src": self.src}, None, check_elt=False)


class VCompareOp(AscendOp, name="vcompare"):
    lhs: Operand[Any]
    rhs: Operand[Any]
    dst: Operand[MemRef]
    predicate: ir.StringAttr

    def check(self):
        if str(element_type(self.dst.type)) != "i1":
            return "dst must hold i1"
        return _vector_check(self, {"lhs": self.lhs, "rhs": self.rhs}, COMPARE_PREDICATES, "predicate", False)


class VSelectOp(AscendOp, name="vselect"):
    cond: Operand[MemRef]
    true_value: Operand[Any]
    false_value: Operand[Any]
    dst: Operand[MemRef]

    def check(self):
        return _vector_check(self, {"true_value": self.true_value, "false_value": self.false_value}, None) or (
            _vector_check(self, {"cond": self.cond}, None, check_elt=False)
        )


class VReduceOp(AscendOp, name="vreduce"):
    src: Operand[MemRef]
    dst: Operand[MemRef]
    kind: ir.StringAttr
    dims: Any

    def check(self):
        if (kind := self.attr_str("kind")) not in REDUCE_KINDS:
            return f"unknown kind '{kind}'; expected one of {', '.join(REDUCE_KINDS)}"
        rank, dims = self.src.type.rank, self.attr_ints("dims")
        if not dims or any(d < 0 or d >= rank for d in dims):
            return f"reduce dims {dims} out of range for a rank-{rank} buffer"
        return _spaces_error({"src": self.src, "dst": self.dst}, {"src": ("ub",), "dst": ("ub",)})


class VBroadcastOp(AscendOp, name="vbroadcast"):
    src: Operand[MemRef]
    dst: Operand[MemRef]
    dims: Any

    def check(self):
        if self.src.type.rank + len(self.attr_ints("dims")) != self.dst.type.rank:
            return "src rank plus the added dims must equal dst rank"
        return _spaces_error({"src": self.src, "dst": self.dst}, {"src": ("ub",), "dst": ("ub",)})


class VDupOp(AscendOp, name="vdup"):
    scalar: Operand[Any]
    dst: Operand[MemRef]

    def check(self):
        if not is_scalar(self.scalar.type) or self.scalar.type != element_type(self.dst.type):
            return "scalar must have the dst element type"
        return _spaces_error({"dst": self.dst}, {"dst": ("ub",)})


class _Flag(AscendOp):
    src_pipe: ir.StringAttr
    dst_pipe: ir.StringAttr
    event_id: ir.IntegerAttr

    def check(self):
        for name in ("src_pipe", "dst_pipe"):
            if (pipe := self.attr_str(name)) not in PIPES:
                return f"unknown {name} '{pipe}'; expected one of {', '.join(PIPES)}"
        if not 0 <= self.attr_int("event_id") < 8:
            return "event_id must be in [0, 8)"
        return None


class SetFlagOp(_Flag, name="set_flag"):
    pass


class WaitFlagOp(_Flag, name="wait_flag"):
    pass


class BarrierOp(AscendOp, name="barrier"):
    pipe: ir.StringAttr

    def check(self):
        pipe = self.attr_str("pipe")
        return None if pipe in PIPES else f"unknown pipe '{pipe}'; expected one of {', '.join(PIPES)}"
