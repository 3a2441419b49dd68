"""npu-ascendc: build an AscendC program (kernels + ACL host code) to run on the simulated device.

    npu-ascendc build add_custom.cpp main.cpp -o add_custom
    npu-ascendc run add_custom.cpp main.cpp -- <program arguments>

The sources are written as for CANN: kernels against kernel_operator.h, host code against
acl/acl.h (aclInit, aclrtSetDevice, aclrtCreateStream, aclrtMalloc, aclrtMemcpy,
aclrtSynchronizeStream, ...), launches as `kernel<<<blockDim, l2ctrl, stream>>>(args...)`.
Each source is compiled by g++ against the CPU twin (cpu_twin/) and linked with the simulated
runtime (libnpurt.a). The only rewrite is the launch syntax, which is not C++: each
`k<<<b, l, s>>>(args)` becomes `npu_ascendc::Launch(mode, "k", b, l, s, [=] { k(args); })`, queued
on the stream as one task that runs all cores of the launch through the twin (mode: the cores a
`__mix__(1, 2)` / `__cube__` / KERNEL_TASK_TYPE_DEFAULT kernel needs). `#line` keeps every
compiler message and every twin report (synchronization, alignment, capacity) on the user's lines.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import npu_mlir

TWIN = Path(npu_mlir.__file__).resolve().parent / "targets" / "ascendc" / "cpu_twin"
REPO = Path(npu_mlir.__file__).resolve().parents[2]
RUNTIME_INCLUDE = REPO / "runtime" / "include"
CXXFLAGS = ("-std=c++17", "-O1", "-pthread")

from npu_mlir.errors import CompilerError

CACHE = Path(os.environ.get("NPU_ASCENDC_CACHE", Path.home() / ".cache" / "torch_npu" / "ascendc"))


class BuildError(CompilerError):
    """A source that does not build; the message carries the compiler's output."""


def runtime_library() -> Path:
    libs = sorted((REPO / "build").glob("**/libnpurt.a"), key=lambda p: p.stat().st_mtime)
    if not libs:
        raise BuildError("ERR03009 GRAPH npu-ascendc: the simulated runtime (libnpurt.a) is not built; run `make build`")
    return libs[-1]


def _matching(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just past the bracket closing the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
    raise BuildError(f"ERR03001 GRAPH npu-ascendc: unbalanced '{open_ch}' in a kernel launch")


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


_MODE = {"mix12": "::AscendC::KernelMode::MIX_MODE", "mix11": "::AscendC::KernelMode::MIX_AIC_1_1",
         "cube": "::AscendC::KernelMode::AIC_MODE", "vector": "::AscendC::KernelMode::AIV_MODE"}


def kernel_mode(sources: list[str], name: str) -> str:
    """The cores `name` runs on, from its definition: __mix__(1, 2) / __cube__ or its KERNEL_TASK_TYPE_DEFAULT."""
    for text in sources:
        for m in re.finditer(rf"__global__(?:[^;{{}}()]|\([^()]*\))*?\b{re.escape(name)}\s*\(", text):
            decl = text[max(0, text.rfind(";", 0, m.start()), text.rfind("}", 0, m.start())):m.end()]
            brace = text.find("{", m.end())
            body = text[brace:_matching(text, brace, "{", "}")] if brace >= 0 else ""
            if "__mix__(1,1)" in re.sub(r"\s", "", decl) or "KERNEL_TYPE_MIX_AIC_1_1" in body:
                return _MODE["mix11"]
            if "__mix__" in decl or "KERNEL_TYPE_MIX_AIC_1_2" in body:
                return _MODE["mix12"]
            if "__cube__" in decl or "KERNEL_TYPE_AIC_ONLY" in body:
                return _MODE["cube"]
            return _MODE["vector"]
    return _MODE["vector"]


def rewrite_launches(text: str, sources: list[str]) -> str:
    """Every `k<<<b, l, s>>>(args)` of `text` as an npu_ascendc::Launch call."""
    out, pos = [], 0
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*<<<", text):
        if m.start() < pos:
            continue
        end_cfg = text.find(">>>", m.end())
        if end_cfg < 0:
            raise BuildError(f"ERR03001 GRAPH npu-ascendc: '<<<' without '>>>' after {m.group(1)}")
        cfg = _split_top(text[m.end():end_cfg])
        if len(cfg) != 3:
            raise BuildError(f"ERR03001 GRAPH npu-ascendc: launch of {m.group(1)} needs <<<blockDim, l2ctrl, stream>>>, "
                             f"got {len(cfg)} values")
        paren = end_cfg + 3
        while paren < len(text) and text[paren].isspace():
            paren += 1
        if paren >= len(text) or text[paren] != "(":
            raise BuildError(f"ERR03001 GRAPH npu-ascendc: launch of {m.group(1)} has no argument list after '>>>'")
        close = _matching(text, paren, "(", ")")
        name = m.group(1)
        out.append(text[pos:m.start()])
        out.append(f'::npu_ascendc::Launch({kernel_mode(sources, name)}, "{name}", ({cfg[0]}), ({cfg[1]}), '
                   f"({cfg[2]}), [=] {{ {name}{text[paren:close]}; }})")
        pos = close
    out.append(text[pos:])
    return "".join(out)


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\0")
    return h.hexdigest()[:16]


def twin_include_dir(flags: tuple[str, ...] = CXXFLAGS) -> Path:
    """A copy of the twin with kernel_operator.h precompiled for `flags` (a build must use the same
    flags for g++ to take the precompiled header), cached by the flags and the headers' content."""
    headers = sorted(p for p in TWIN.rglob("*.h"))
    key = _digest(" ".join(flags).encode(), *(h.read_bytes() for h in headers))
    cached = Path(tempfile.gettempdir()) / f"npu_ascendc_twin_{key}"
    if not (cached / "kernel_operator.h.gch").exists():
        staging = Path(tempfile.mkdtemp(prefix="npu_ascendc_twin_"))
        shutil.copytree(TWIN, staging, dirs_exist_ok=True)
        subprocess.run(["g++", *flags, "-x", "c++-header", str(staging / "kernel_operator.h"),
                        "-o", str(staging / "kernel_operator.h.gch")], check=True, capture_output=True)
        try:
            os.replace(staging, cached)
        except OSError:  # another process published it first
            shutil.rmtree(staging, ignore_errors=True)
    return cached


def build(sources: list[Path], output: Path | None = None, flags: tuple[str, ...] = (), cache: bool = True) -> Path:
    """Builds `sources` into an executable (at `output`, or in the cache) and returns its path."""
    sources = [Path(s).resolve() for s in sources]
    texts = [s.read_text() for s in sources]
    lib = runtime_library()
    inc = twin_include_dir()
    key = _digest(*(t.encode() for t in texts), *(str(s).encode() for s in sources), " ".join(flags).encode(),
                  str(inc).encode(), str(lib.stat().st_mtime_ns).encode())
    exe = CACHE / f"exe-{key}"
    if cache and exe.exists():
        if output is None:
            return exe
        shutil.copy2(exe, output)
        return Path(output)
    work = Path(tempfile.mkdtemp(prefix="npu_ascendc_"))
    try:
        units = []
        for src, text in zip(sources, texts):
            unit = work / f"{len(units)}_{src.stem}.cpp"
            # The twin header first (so its precompiled form applies), then the user's text on its own lines.
            unit.write_text('#include "kernel_operator.h"\n#include "npu_ascendc_launch.h"\n'
                            f'#line 1 "{src}"\n' + rewrite_launches(text, texts))
            units.append(unit)
        target = work / "a.out"
        dirs = sorted({f"-I{s.parent}" for s in sources})
        cmd = ["g++", *CXXFLAGS, f"-I{inc}", f"-I{RUNTIME_INCLUDE}", *dirs, *flags, *map(str, units), str(lib),
               "-ldl", "-o", str(target)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"ERR03001 GRAPH npu-ascendc: g++ failed\n{proc.stderr}")
        CACHE.mkdir(parents=True, exist_ok=True)
        staged = CACHE / f".exe-{key}-{os.getpid()}"
        shutil.copy2(target, staged)
        os.replace(staged, exe)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if output is None:
        return exe
    shutil.copy2(exe, output)
    return Path(output)


def kernel_arity(sources: list[str], name: str) -> int:
    """The number of GM_ADDR parameters of kernel `name`'s definition."""
    for text in sources:
        for m in re.finditer(rf"__global__(?:[^;{{}}()]|\([^()]*\))*?\b{re.escape(name)}\s*\(", text):
            params = text[m.end():_matching(text, m.end() - 1, "(", ")") - 1].strip()
            return 0 if params in ("", "void") else len(_split_top(params))
    raise BuildError(f"ERR03001 GRAPH npu-ascendc: no __global__ kernel named {name} in the sources")


def build_shared(sources: list[Path], kernel: str, flags: tuple[str, ...] = ()) -> Path:
    """A shared library with `npu_ascendc_entry(blockDim, args)`: every core of a launch of `kernel`
    on the GM pointers `args`, run through the twin on the calling thread's behalf (for custom ops)."""
    sources = [Path(s).resolve() for s in sources]
    texts = [s.read_text() for s in sources]
    arity, mode = kernel_arity(texts, kernel), kernel_mode(texts, kernel)
    lib = runtime_library()
    key = _digest(b"shared", kernel.encode(), *(t.encode() for t in texts), *(str(s).encode() for s in sources),
                  " ".join(flags).encode(), *(h.read_bytes() for h in sorted(TWIN.rglob("*.h"))),
                  str(lib.stat().st_mtime_ns).encode())
    out = CACHE / f"lib-{kernel}-{key}.so"
    if out.exists():
        return out
    work = Path(tempfile.mkdtemp(prefix="npu_ascendc_"))
    try:
        units = []
        for src, text in zip(sources, texts):
            unit = work / f"{len(units)}_{src.stem}.cpp"
            unit.write_text('#include "kernel_operator.h"\n#include "npu_ascendc_launch.h"\n'
                            f'#line 1 "{src}"\n' + rewrite_launches(text, texts))
            units.append(unit)
        args = ", ".join(f"a[{i}]" for i in range(arity))
        entry = work / "entry.cpp"
        entry.write_text(f"""#include "kernel_operator.h"
extern "C" __global__ __aicore__ void {kernel}({", ".join(["GM_ADDR"] * arity)});
extern "C" void npu_ascendc_entry(uint32_t blockDim, uint8_t** a) {{
  AscendC::RunBlocks(blockDim, [=] {{ {kernel}({args}); }}, {mode});
}}
""")
        target = work / "lib.so"
        dirs = sorted({f"-I{s.parent}" for s in sources})
        # The runtime is linked for the sources' own host code only, its symbols kept local: the
        # process's runtime (torch_npu's) stays the one every other caller reaches.
        cmd = ["g++", *CXXFLAGS, "-fPIC", "-shared", f"-I{TWIN}", f"-I{RUNTIME_INCLUDE}", *dirs, *flags,
               *map(str, units), str(entry), str(lib), "-Wl,--exclude-libs,ALL", "-ldl", "-o", str(target)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"ERR03001 GRAPH npu-ascendc: g++ failed\n{proc.stderr}")
        CACHE.mkdir(parents=True, exist_ok=True)
        staged = CACHE / f".lib-{key}-{os.getpid()}"
        shutil.copy2(target, staged)
        os.replace(staged, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def register_custom_op(qualname: str, schema: str, sources: list[Path], kernel: str, block_dim: int, outputs,
                       reference=None):
    """Registers AscendC kernel `kernel` as the torch op `qualname` ("ns::name") on npu tensors.

    `schema` is the op's signature without its name ("(Tensor x, Tensor y) -> Tensor"); the kernel
    takes the tensor arguments' device pointers in order, then the outputs'. `outputs(*args)` returns
    the output tensors to allocate (e.g. `lambda x, y: [torch.empty_like(x)]`); it also gives the op
    its meta (fake-tensor) implementation. `reference`, if given, is the CPU implementation. A call
    waits for the current stream, runs every core of the launch, and returns: the launch is
    synchronous. Inputs must be contiguous npu tensors (non-contiguous ones are made contiguous).
    """
    import ctypes

    import torch

    so = ctypes.CDLL(str(build_shared(sources, kernel)))
    entry = so.npu_ascendc_entry
    entry.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_void_p)]
    entry.restype = None
    ns, name = qualname.split("::")
    lib = torch.library.Library(ns, "FRAGMENT")
    lib.define(name + schema)

    def npu_impl(*args):
        tensors = [a.contiguous() for a in args if isinstance(a, torch.Tensor)]
        if len(tensors) != len(args):
            raise TypeError(f"{qualname}: only tensor arguments reach an AscendC kernel ERR03001 GRAPH invalid parameter")
        for t in tensors:
            if t.device.type != "npu":
                raise RuntimeError(f"{qualname}: expected npu tensors, got {t.device} ERR03001 GRAPH invalid parameter")
        outs = list(outputs(*args))
        torch.npu.current_stream().synchronize()
        ptrs = (ctypes.c_void_p * (len(tensors) + len(outs)))(*[t.data_ptr() for t in tensors + outs])
        entry(block_dim, ptrs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def meta_impl(*args):
        outs = list(outputs(*args))
        return outs[0] if len(outs) == 1 else tuple(outs)

    lib.impl(name, npu_impl, "PrivateUse1")
    lib.impl(name, meta_impl, "Meta")
    if reference is not None:
        lib.impl(name, reference, "CPU")
    _LIBRARIES.append(lib)  # a Library deregisters its ops when collected
    return getattr(getattr(torch.ops, ns), name)


_LIBRARIES: list = []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="npu-ascendc", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name, text in (("build", "build the program"), ("run", "build the program (cached) and run it")):
        p = sub.add_parser(name, help=text)
        p.add_argument("sources", nargs="+", type=Path)
        p.add_argument("-o", "--output", type=Path, help="executable to write (build)")
        p.add_argument("-I", dest="includes", action="append", default=[], help="include directory")
        p.add_argument("-D", dest="defines", action="append", default=[], help="preprocessor definition")
    args, rest = parser.parse_known_args(argv)
    if rest and rest[0] == "--":
        rest = rest[1:]
    flags = tuple([f"-I{i}" for i in args.includes] + [f"-D{d}" for d in args.defines])
    try:
        if args.cmd == "build":
            out = build(args.sources, args.output or Path(args.sources[0].stem), flags)
            print(out)
            return 0
        exe = build(args.sources, None, flags)
    except (BuildError, OSError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return subprocess.run([str(exe), *rest]).returncode


if __name__ == "__main__":
    sys.exit(main())
