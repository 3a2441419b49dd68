"""The kernel ABI of the simulated device: argument specs, the entry function and the C wrapper.

A compiled kernel is called by the runtime as
    int32_t <symbol>(const void* args, uint32_t blockIdx, uint32_t blockDim)
(`aclrtKernelFunc` in runtime/include/npurt/acl_rt.h). `args` is a packed array of 8-byte slots in
this order: one data pointer per input tensor, one per output tensor, then one value per scalar
parameter (a double or an int64). Tensor data is addressed through the shape and element strides
recorded at compile time, so a transposed input is read correctly without a copy.

Two pieces of IR implement it:
- `entry_function_text`: a tensor-level function `<symbol>_body(memref..., block_idx) -> tensors`
  that wraps the user function. Inputs arrive as memrefs with their exact strided layout (a plain
  tensor argument would bufferize to an identity layout and ignore strides); a scalar parameter is
  a 0-d memref that points into its own argument slot, so the computation reads it like a tensor.
  Booleans cross the boundary as bytes: LLVM packs vectors of i1 into bits in memory.
- `wrapper_text`: the exported LLVM-dialect function that unpacks `args` into the memref
  descriptors of the lowered body and returns 0. Written in MLIR so that building a kernel needs no
  C compiler except the final link.
"""

from __future__ import annotations

from dataclasses import dataclass

from npu_mlir.hardware.dtypes import SCALAR_PARAM_TYPES, SIM_TYPES
from npu_mlir.errors import SimCompileError

# A kernel whose body checks device-side assertions (device_assert.py) records a failure in this
# word of its module (1: NPURT_KERNEL_ASSERT_FAILED in acl_rt.h); the wrapper returns it, read and
# cleared, as the launch's status.
STATUS_SYMBOL = "npu_assert_status"
STATUS_GLOBAL = f"llvm.mlir.global internal @{STATUS_SYMBOL}(0 : i32) {{addr_space = 0 : i32}} : i32"

# Element types the simulated device computes on (MLIR spelling -> bytes per element in memory).
ELEMENT_BYTES = {t.mlir: t.bytes for t in SIM_TYPES}
SCALAR_TYPES = SCALAR_PARAM_TYPES


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument or result: static shape, MLIR element type, element strides."""

    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...] | None = None  # None = contiguous (row-major)

    def contiguous_strides(self) -> tuple[int, ...]:
        strides, step = [], 1
        for size in reversed(self.shape):
            strides.append(step)
            step *= max(size, 1)
        return tuple(reversed(strides))

    @property
    def layout_strides(self) -> tuple[int, ...]:
        return self.strides if self.strides is not None else self.contiguous_strides()

    @property
    def is_contiguous(self) -> bool:
        return self.strides is None or tuple(self.strides) == self.contiguous_strides()

    def tensor_type(self) -> str:
        return _shaped("tensor", self.shape, self.dtype)

    def memref_type(self) -> str:
        storage = "i8" if self.dtype == "i1" else self.dtype
        base = _shaped("memref", self.shape, storage)
        if self.is_contiguous:
            return base
        return f"{base[:-1]}, strided<[{', '.join(map(str, self.strides))}]>>"


def _shaped(kind: str, shape: tuple[int, ...], dtype: str) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"{kind}<{dims}{dtype}>"


def check_spec(spec: TensorSpec, what: str) -> None:
    if spec.dtype not in ELEMENT_BYTES:
        raise SimCompileError(f"{what} has element type {spec.dtype}, which the simulated device does not "
                              f"support; supported: {', '.join(ELEMENT_BYTES)}", code="ERR03002")
    if any(d < 0 for d in spec.shape):
        raise SimCompileError(f"{what} has a dynamic shape {spec.shape}; compile one kernel per static shape",
                              code="ERR03007")
    if spec.strides is not None and len(spec.strides) != len(spec.shape):
        raise SimCompileError(f"{what}: {len(spec.strides)} strides for rank {len(spec.shape)}", code="ERR03001")


def entry_function_text(symbol: str, callee: str, inputs: list[TensorSpec], scalar_flags: list[bool],
                        outputs: list[TensorSpec]) -> str:
    """The tensor-level entry `<symbol>_body` that calls `callee` on memref-backed tensors."""
    params, body, call_args = [], [], []
    for i, (spec, is_scalar) in enumerate(zip(inputs, scalar_flags)):
        params.append(f"%m{i}: {spec.memref_type()}")
        body.append(f"%t{i} = bufferization.to_tensor %m{i} restrict : {spec.memref_type()} to "
                    f"{_shaped('tensor', spec.shape, 'i8' if spec.dtype == 'i1' else spec.dtype)}")
        if spec.dtype == "i1":
            body.append(_convert_bool(f"%t{i}", f"%b{i}", spec.shape, "i8", "i1", "arith.trunci"))
            call_args.append(f"%b{i}")
        else:
            call_args.append(f"%t{i}")
    params.append("%block_idx: index")
    in_types = ", ".join(s.tensor_type() for s in inputs)
    out_types = ", ".join(s.tensor_type() for s in outputs)
    results = f"%r:{len(outputs)} = " if outputs else ""  # a kernel of checks only returns nothing
    body.append(f"{results}func.call @{callee}({', '.join(call_args)}) : ({in_types}) -> ({out_types})")
    returned, ret_types = [], []
    for j, spec in enumerate(outputs):
        if spec.dtype == "i1":
            body.append(_convert_bool(f"%r#{j}", f"%o{j}", spec.shape, "i1", "i8", "arith.extui"))
            returned.append(f"%o{j}")
            ret_types.append(_shaped("tensor", spec.shape, "i8"))
        else:
            returned.append(f"%r#{j}")
            ret_types.append(spec.tensor_type())
    body.append(f"return {', '.join(returned)} : {', '.join(ret_types)}" if returned else "return")
    lines = "\n    ".join(body)
    return (f"func.func @{symbol}_body({', '.join(params)}) -> ({', '.join(ret_types)}) {{\n    {lines}\n}}")


def _convert_bool(src: str, dst: str, shape: tuple[int, ...], from_t: str, to_t: str, op: str) -> str:
    rank = len(shape)
    dims = ", ".join(f"d{k}" for k in range(rank))
    ident = f"affine_map<({dims}) -> ({dims})>"
    iters = ", ".join(['"parallel"'] * rank)
    src_t, dst_t = _shaped("tensor", shape, from_t), _shaped("tensor", shape, to_t)
    tmp = dst.replace("%", "%e_")
    return (f"{tmp} = tensor.empty() : {dst_t}\n    "
            f"{dst} = linalg.generic {{indexing_maps = [{ident}, {ident}], iterator_types = [{iters}]}} "
            f"ins({src} : {src_t}) outs({tmp} : {dst_t}) {{\n    ^bb0(%x: {from_t}, %y: {to_t}):\n"
            f"      %c = {op} %x : {from_t} to {to_t}\n      linalg.yield %c : {to_t}\n    }} -> {dst_t}")


def wrapper_text(symbol: str, inputs: list[TensorSpec], scalar_flags: list[bool], outputs: list[TensorSpec],
                 asserts: bool = False) -> str:
    """The exported `aclrtKernelFunc` that unpacks the slot array into memref descriptors; with
    `asserts` it returns the body's device-assertion status word (device_assert.py), read and cleared."""
    lines = ["%zero = llvm.mlir.constant(0 : i32) : i32"]
    call_args, call_types = [], []
    constants: dict[int, str] = {}

    def const(v: int) -> str:
        if v not in constants:
            name = f"%k{len(constants)}"
            lines.append(f"{name} = llvm.mlir.constant({v} : i64) : i64")
            constants[v] = name
        return constants[v]

    def slot_ptr(slot: int) -> str:
        name = f"%slot{slot}"
        lines.append(f"{name} = llvm.getelementptr %args[{slot}] : (!llvm.ptr) -> !llvm.ptr, i64")
        return name

    def descriptor(ptr: str, spec: TensorSpec) -> None:
        call_args.extend([ptr, ptr, const(0)])
        call_args.extend(const(d) for d in spec.shape)
        call_args.extend(const(s) for s in spec.layout_strides)
        call_types.extend(["!llvm.ptr", "!llvm.ptr"] + ["i64"] * (1 + 2 * len(spec.shape)))

    def data_ptr(slot: int) -> str:
        name = f"%data{slot}"
        lines.append(f"{name} = llvm.load {slot_ptr(slot)} : !llvm.ptr -> !llvm.ptr")
        return name

    tensor_inputs = [i for i, s in enumerate(scalar_flags) if not s]
    scalar_inputs = [i for i, s in enumerate(scalar_flags) if s]
    slot_of = {idx: n for n, idx in enumerate(tensor_inputs)}
    first_scalar_slot = len(tensor_inputs) + len(outputs)
    slot_of.update({idx: first_scalar_slot + n for n, idx in enumerate(scalar_inputs)})
    for i, spec in enumerate(inputs):
        ptr = slot_ptr(slot_of[i]) if scalar_flags[i] else data_ptr(slot_of[i])
        descriptor(ptr, spec)
    lines.append("%bidx = llvm.zext %blockIdx : i32 to i64")
    call_args.append("%bidx")
    call_types.append("i64")
    for j, spec in enumerate(outputs):
        descriptor(data_ptr(len(tensor_inputs) + j), spec if spec.dtype != "i1" else TensorSpec(spec.shape, "i8"))
    lines.append(f"llvm.call @{symbol}_body({', '.join(call_args)}) : ({', '.join(call_types)}) -> ()")
    if asserts:
        lines.append(f"%status_word = llvm.mlir.addressof @{STATUS_SYMBOL} : !llvm.ptr")
        lines.append("%status = llvm.atomicrmw xchg %status_word, %zero seq_cst : !llvm.ptr, i32")
        lines.append("llvm.return %status : i32")
    else:
        lines.append("llvm.return %zero : i32")
    body = "\n  ".join(lines)
    # The declarations let the wrapper parse on its own; only the definition (last op) is kept.
    return ((STATUS_GLOBAL + "\n" if asserts else "") + f"llvm.func @{symbol}_body({', '.join(call_types)})\n"
            f"llvm.func @{symbol}(%args: !llvm.ptr, %blockIdx: i32, %blockDim: i32) -> i32 {{\n  {body}\n}}")
