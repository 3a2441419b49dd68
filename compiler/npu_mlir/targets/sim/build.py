"""The simulated-device target: compile a linalg-on-tensors function into a runnable kernel.

    kernel = compile_linalg(module, SimTiling(block_dim=8), scalar_inputs=[1])
    outputs = run_on_host(kernel, [x], scalars=[0.5])

`compile_linalg` lowers the module's public function through lowering.py and links it into a
shared object in the kernel cache (object.py); the result is a `CompiledKernel` whose `address()` is
an `aclrtKernelFunc` for the runtime's launch. The argument layout is documented in sim_abi.
Compiles are memoized on disk by a hash of the IR, the argument specs, the tiling and this
compiler's ABI version, so a second process loads the .so instead of compiling.

Inside `linking_together()` (a compile worker wraps each request in it) the kernels compiled are
lowered one by one but generated and linked as one module into one .so when the block ends: LLVM's
code generator and the linker cost ~25 ms and ~10 ms per call whatever the module's size, and a
launch list or a compiled graph holds several kernels (one module per LLVM -O level, object.py's
opt_level_for, each its own object file in the .so).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import math
import struct
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import torch
from torch_mlir import ir

from npu_mlir.hardware.dtypes import torch_to_mlir
from npu_mlir.targets.sim import abi as sim_abi
from npu_mlir.targets.sim.cache import compiler_fingerprint
from npu_mlir.targets.sim import lowering as sim_lowering
from npu_mlir.targets.sim import object as sim_object
from npu_mlir.targets.sim.abi import TensorSpec
from npu_mlir.errors import SimCompileError

# Bump when the generated code or the ABI changes: it keys the on-disk kernel cache.
SIM_ABI_VERSION = 1
SYMBOL_PREFIX = "npu_sim_"

TORCH_TO_MLIR = torch_to_mlir()
MLIR_TO_TORCH = {v: k for k, v in TORCH_TO_MLIR.items()}


@dataclass(frozen=True)
class SimTiling:
    """How a kernel is spread over the device: `block_dim` blocks (the split may use fewer)."""

    block_dim: int = 1


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel built for the simulated device.

    ABI slots, 8 bytes each: `inputs` data pointers, `outputs` data pointers, then `scalars`
    values (f64 as double, i64 as int64), in the order of the function's arguments.
    """

    so_path: str
    symbol: str
    block_dim: int
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    scalars: tuple[str, ...]
    compile_ms: float = 0.0
    from_cache: bool = False
    _fn: list = field(default_factory=list, compare=False, repr=False)

    def function(self) -> ctypes._CFuncPtr:
        if not self._fn:
            self._fn.append(sim_object.load_symbol(self.so_path, self.symbol))
        return self._fn[0]

    def address(self) -> int:
        """The `aclrtKernelFunc` pointer, for `aclrtLaunchKernel`."""
        return ctypes.cast(self.function(), ctypes.c_void_p).value

    def to_json(self) -> str:
        """Everything but the loaded library: what a compile worker sends back to the user process."""
        return json.dumps({"so_path": self.so_path, "symbol": self.symbol, "block_dim": self.block_dim,
                           "inputs": [_spec_dict(s) for s in self.inputs],
                           "outputs": [_spec_dict(s) for s in self.outputs],
                           "scalars": list(self.scalars), "compile_ms": self.compile_ms})

    @classmethod
    def from_json(cls, text: str) -> "CompiledKernel":
        d = json.loads(text)
        spec = lambda s: TensorSpec(tuple(s["shape"]), s["dtype"], tuple(s["strides"]) if s["strides"] else None)
        return cls(d["so_path"], d["symbol"], d["block_dim"], tuple(spec(s) for s in d["inputs"]),
                   tuple(spec(s) for s in d["outputs"]), tuple(d["scalars"]), d["compile_ms"], True)


def _spec_dict(spec: TensorSpec) -> dict:
    return {"shape": list(spec.shape), "dtype": spec.dtype, "strides": list(spec.strides) if spec.strides else None}


_tls = threading.local()


def _context() -> ir.Context:
    # One context per thread: contexts are not thread-safe, and creating one costs ~3 ms. Kernel
    # modules are small: MLIR's own thread pool costs more than it saves (~10% CPU per compile).
    if not hasattr(_tls, "context"):
        _tls.context = ir.Context()
        _tls.context.enable_multithreading(False)
    return _tls.context


def _spec_of(t: ir.Type) -> TensorSpec:
    shaped = ir.RankedTensorType(t)
    return TensorSpec(tuple(shaped.shape), str(shaped.element_type))


def _public_function(module: ir.Module, exclude: str = "") -> ir.Operation:
    funcs = [op.operation for op in module.body.operations if op.operation.name == "func.func"
             and "sym_visibility" not in op.operation.attributes and op.operation.regions[0].blocks
             and ir.StringAttr(op.operation.attributes["sym_name"]).value != exclude]
    if len(funcs) != 1:
        raise SimCompileError(f"expected one public function in the module, found {len(funcs)}", code="ERR03001")
    return funcs[0]


def compile_linalg(module: ir.Module | str, tiling: SimTiling | None = None, *, name: str = "kernel",
                   scalar_inputs: Sequence[int] = (),
                   input_strides: Sequence[tuple[int, ...] | None] | None = None,
                   cache_dir: Path | None = None) -> CompiledKernel:
    """Build the module's public function (linalg on tensors, static shapes) for the simulated device.

    `scalar_inputs` lists argument positions holding 0-d f64/i64 tensors that become scalar kernel
    parameters. `input_strides` gives element strides per argument (None = contiguous), so strided
    views are read in place. The shared object goes to `cache_dir` (default: sim_object.cache_dir()).
    Raises SimCompileError (ERR03xxx) when the function cannot be built.
    """
    tiling = tiling or SimTiling()
    text = str(module)
    with _context(), ir.Location.unknown():
        parsed = ir.Module.parse(text)
        func = _public_function(parsed)
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs = [_spec_of(t) for t in ftype.inputs]
        outputs = [_spec_of(t) for t in ftype.results]
    if input_strides is not None:
        inputs = [TensorSpec(s.shape, s.dtype, tuple(st) if st is not None else None)
                  for s, st in zip(inputs, input_strides)]
    flags = [i in set(scalar_inputs) for i in range(len(inputs))]
    for i, (spec, is_scalar) in enumerate(zip(inputs, flags)):
        sim_abi.check_spec(spec, f"argument {i}")
        if is_scalar and (spec.shape or spec.dtype not in sim_abi.SCALAR_TYPES):
            raise SimCompileError(f"argument {i} is marked scalar but is {spec.tensor_type()}; scalar "
                                  f"parameters must be 0-d {' or '.join(sim_abi.SCALAR_TYPES)}", code="ERR03001")
    for j, spec in enumerate(outputs):
        sim_abi.check_spec(spec, f"result {j}")

    key = hashlib.sha256(json.dumps([SIM_ABI_VERSION, compiler_fingerprint(), text, [repr(s) for s in inputs], flags,
                                     tiling.block_dim]).encode()).hexdigest()[:20]
    symbol = f"{SYMBOL_PREFIX}{_identifier(name)}_{key[:8]}"
    so_path = Path(cache_dir or sim_object.cache_dir()) / f"{symbol}_{key}.so"
    meta_path = so_path.with_suffix(".json")
    tensor_in = tuple(s for s, f in zip(inputs, flags) if not f)
    scalars = tuple(s.dtype for s, f in zip(inputs, flags) if f)
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        library = so_path.with_name(meta.get("library", so_path.name))  # a batch's library holds several kernels
        if library.exists():
            return CompiledKernel(str(library), symbol, meta["block_dim"], tensor_in, tuple(outputs), scalars, 0.0, True)
    batch: _LinkBatch | None = getattr(_tls, "batch", None)
    if batch is not None and key in batch.kernels:
        return batch.kernels[key]

    start = time.perf_counter()
    func_name = ir.StringAttr(func.attributes["sym_name"]).value
    module, block_dim = _lower(text, func_name, symbol, inputs, flags, outputs, tiling.block_dim)
    opt_level = sim_object.opt_level_for(module, sum(math.prod(spec.shape) for spec in inputs + outputs))
    if batch is not None and batch.accepts(so_path.parent):
        kernel = CompiledKernel(str(batch.library), symbol, block_dim, tensor_in, tuple(outputs), scalars,
                                (time.perf_counter() - start) * 1e3, False)
        batch.add(key, kernel, module, opt_level, meta_path)
        return kernel
    _generate([(module, opt_level)], symbol, so_path)
    meta_path.write_text(json.dumps({"block_dim": block_dim, "symbol": symbol}))
    elapsed = (time.perf_counter() - start) * 1e3
    return CompiledKernel(str(so_path), symbol, block_dim, tensor_in, tuple(outputs), scalars, elapsed, False)


class _LinkBatch:
    """Kernels lowered inside one `linking_together()` block, waiting for their common .so."""

    def __init__(self) -> None:
        self.kernels: dict[str, CompiledKernel] = {}  # by cache key: a kernel built twice in a block is one
        self.modules: list[tuple[str, ir.Module, int]] = []  # (symbol, its LLVM-dialect module, -O level)
        self.metas: list[tuple[Path, dict]] = []
        self.library: Path | None = None

    def accepts(self, directory: Path) -> bool:
        if self.library is None:
            self.library = directory / f"{SYMBOL_PREFIX}linked_{uuid.uuid4().hex[:20]}.so"
        return self.library.parent == directory

    def add(self, key: str, kernel: CompiledKernel, module: ir.Module, opt_level: int, meta_path: Path) -> None:
        self.kernels[key] = kernel
        self.modules.append((kernel.symbol, module, opt_level))
        self.metas.append((meta_path, {"block_dim": kernel.block_dim, "symbol": kernel.symbol,
                                       "library": self.library.name}))


@contextlib.contextmanager
def linking_together() -> Iterator[None]:
    """Kernels compiled by this thread inside the block share one code generation and one .so, built
    when the block ends (a kernel's library does not exist before: nothing inside may load one).
    Raises SimCompileError at the end when that build fails."""
    if getattr(_tls, "batch", None) is not None:  # nested: the outer block links
        yield
        return
    batch = _tls.batch = _LinkBatch()
    try:
        yield
    finally:
        _tls.batch = None
    if not batch.modules:
        return
    with _context(), ir.Location.unknown():
        # One module (and object file) per -O level, linked into one .so.
        levels = sorted({level for _, _, level in batch.modules})
        groups = [[(symbol, module) for symbol, module, level in batch.modules if level == opt] for opt in levels]
        parts = [(group[0][1] if len(group) == 1 else _merged(group), opt) for group, opt in zip(groups, levels)]
        _generate(parts, batch.modules[0][0] if len(batch.modules) == 1 else "linked kernels", batch.library)
    for meta_path, meta in batch.metas:
        meta_path.write_text(json.dumps(meta))


def _merged(modules: list[tuple[str, ir.Module]]) -> ir.Module:
    """One LLVM-dialect module of several kernels' modules. Each kernel's own symbols start with its
    (unique) symbol; each module's internal globals get that symbol as prefix, and the runtime helpers
    every module declares or defines alike (malloc, libm, MLIR's allocation wrappers) are kept once."""
    merged = ir.Module.create()
    for attr in modules[0][1].operation.attributes:  # data layout / target triple, if the lowering set them
        merged.operation.attributes[attr.name] = attr.attr
    seen: set[str] = set()

    def name_of(op: ir.Operation) -> str | None:
        return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else None

    for symbol, module in modules:
        ops = [op.operation for op in module.body.operations]
        for op in ops:
            name = name_of(op)
            linkage = str(op.attributes["linkage"]) if "linkage" in op.attributes else ""
            hidden = "internal" in linkage or "private" in linkage or "sym_visibility" in op.attributes
            # A declaration (math-to-libm's private `erf`, malloc) names a library symbol: never renamed.
            declared = op.name in ("llvm.func", "func.func") and not op.regions[0].blocks
            if name is not None and not name.startswith(symbol) and hidden and not declared:
                ir.SymbolTable.replace_all_symbol_uses(name, f"{symbol}_{name}", module.operation)
                ir.SymbolTable.set_symbol_name(op, f"{symbol}_{name}")
        for op in ops:
            name = name_of(op)
            if name is None or name.startswith(symbol):
                merged.body.append(op)
            elif name not in seen:
                seen.add(name)
                merged.body.append(op)
    return merged


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)[:40]


def _lower(text: str, func_name: str, symbol: str, inputs: list[TensorSpec], flags: list[bool],
           outputs: list[TensorSpec], requested_blocks: int) -> tuple[ir.Module, int]:
    """The kernel's LLVM-dialect module (its ABI entry `symbol` included) and the block count it uses."""
    with _context(), ir.Location.unknown():
        for blocks in (requested_blocks, 1):
            # The entry calls the user function, so both must be parsed as one module.
            entry = sim_abi.entry_function_text(symbol, func_name, inputs, flags, outputs)
            module = ir.Module.parse(text.rstrip()[:-1] + entry + "\n}")
            _public_function(module, exclude=f"{symbol}_body").attributes["sym_visibility"] = \
                ir.StringAttr.get("private")
            try:
                sim_lowering.prepare(module)
                used = sim_lowering.schedule(module, symbol, blocks)
            except (ir.MLIRError, ValueError) as err:
                raise SimCompileError(f"scheduling kernel {symbol} failed: {err}", code="ERR03005") from err
            if used:
                break
        try:
            asserts = sim_lowering.lower(module, symbol)
            wrapper = ir.Module.parse(sim_abi.wrapper_text(symbol, inputs, flags, outputs, asserts))
            module.body.append(list(wrapper.body.operations)[-1])
        except (ir.MLIRError, ValueError) as err:
            raise SimCompileError(f"lowering kernel {symbol} to LLVM failed: {err}", code="ERR03005") from err
    return module, used


def _generate(parts: list[tuple[ir.Module, int]], what: str, so_path: Path) -> None:
    with _context(), ir.Location.unknown():
        try:
            sim_object.build_shared_object(parts, so_path)
        except (ir.MLIRError, ValueError) as err:
            raise SimCompileError(f"lowering kernel {what} to LLVM failed: {err}", code="ERR03005") from err


def _check_tensor(t: torch.Tensor, spec: TensorSpec, what: str) -> None:
    if tuple(t.shape) != spec.shape or TORCH_TO_MLIR.get(t.dtype) != spec.dtype:
        raise SimCompileError(f"{what} is {tuple(t.shape)} {t.dtype} but the kernel was compiled for "
                              f"{spec.shape} {spec.dtype}; recompile for this input", code="ERR03001")
    if t.numel() > 1 and tuple(t.stride()) != spec.layout_strides:
        raise SimCompileError(f"{what} has strides {tuple(t.stride())} but the kernel expects "
                              f"{spec.layout_strides}; pass input_strides when compiling or make it "
                              "contiguous", code="ERR03001")


def pack_args(kernel: CompiledKernel, inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor],
              scalars: Sequence[float | int]) -> ctypes.Array:
    """The packed slot array the kernel reads (see CompiledKernel)."""
    slots = (ctypes.c_uint64 * (len(inputs) + len(outputs) + len(scalars)))()
    for n, t in enumerate(list(inputs) + list(outputs)):
        slots[n] = t.data_ptr()
    base = len(inputs) + len(outputs)
    for n, (value, dtype) in enumerate(zip(scalars, kernel.scalars)):
        fmt = "<d" if dtype == "f64" else "<q"
        slots[base + n] = struct.unpack("<Q", struct.pack(fmt, float(value) if dtype == "f64" else int(value)))[0]
    return slots


def run_on_host(kernel: CompiledKernel, inputs: Sequence[torch.Tensor], scalars: Sequence[float | int] = (),
                threads: int = 1) -> list[torch.Tensor]:
    """Run every block of `kernel` on CPU tensors (for tests and benchmarks); returns new outputs.

    Blocks run on `threads` host threads (ctypes drops the GIL during each call).
    """
    if len(inputs) != len(kernel.inputs) or len(scalars) != len(kernel.scalars):
        raise SimCompileError(f"kernel {kernel.symbol} takes {len(kernel.inputs)} tensors and "
                              f"{len(kernel.scalars)} scalars, got {len(inputs)} and {len(scalars)}", code="ERR03001")
    for n, (t, spec) in enumerate(zip(inputs, kernel.inputs)):
        _check_tensor(t, spec, f"input {n}")
    outputs = [torch.empty(s.shape, dtype=MLIR_TO_TORCH[s.dtype]) for s in kernel.outputs]
    slots = pack_args(kernel, inputs, outputs, scalars)
    fn = kernel.function()

    def run_block(b: int) -> int:
        return fn(slots, b, kernel.block_dim)

    if threads <= 1:
        codes = [run_block(b) for b in range(kernel.block_dim)]
    else:
        with ThreadPoolExecutor(threads) as pool:
            codes = list(pool.map(run_block, range(kernel.block_dim)))
    if any(codes):
        raise SimCompileError(f"kernel {kernel.symbol} returned {codes}", code="ERR03005")
    return outputs


__all__ = ["SimTiling", "CompiledKernel", "TensorSpec", "compile_linalg", "linking_together", "run_on_host", "pack_args",
           "SIM_ABI_VERSION", "SYMBOL_PREFIX"]
