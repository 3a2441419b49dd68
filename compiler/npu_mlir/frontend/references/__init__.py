"""torch_npu's own ops (torch.ops.npu.*) on the eager compile path: the table of their references.

A custom op compiles like an aten op (plan.py -> a compile worker -> kernel_build.build), with one
difference: there is no aten kernel to trace, and a compile worker never registers the op. So
kernel_build traces the op's *reference* instead - a plain-torch function of aten ops - and the
compiler fuses the whole op into one kernel. The user's process plans the call the same way (the
reference runs on meta tensors to find the result shapes).

Adding a custom op `npu_foo` takes three pieces:

1. Its schema under `custom:` in python/torch_npu/csrc/aten/npu_native_functions.yaml, e.g.
       - npu_foo(Tensor self, float scale=1.0, int dim=-1) -> (Tensor, Tensor)
   The build defines it as torch.ops.npu.npu_foo (TORCH_LIBRARY(npu, ...)).
2. Its reference, in a module compiler/npu_mlir/frontend/references/<family>.py (plain torch:
   npu_mlir never imports torch_npu, and compile workers do not load it), holding a dict
       REFERENCES = {"npu_foo": npu_foo}        # "name" = default overload, "name.overload" others
   with the module's name added to REFERENCE_MODULES below. A reference:
   - takes the schema's arguments positionally, in schema order (keyword-only ones too), under the
     schema's names, and returns what the schema returns (outputs are fresh tensors);
   - works on CPU, meta and fake tensors, in plain torch (no data-dependent shapes);
   - accepts a 0-d tensor wherever the schema says `float` or `Scalar`: those arguments are kernel
     parameters, so a new value does not recompile. `int`, `bool`, `str` and lists are compiled in
     (each new value compiles a new kernel): a value that changes on every call, such as a random
     offset, must be typed `Scalar` (or passed as a Tensor).
   torch_npu.ops registers every reference as its op's CPU kernel (what the CPU fallback runs when
   the compiler rejects a call) and as its fake kernel (shapes on meta tensors, torch.compile).
3. Its PrivateUse1 kernel, hand-written in python/torch_npu/csrc/aten/<Family>Ops.cpp: check the
   arguments (shape, dtype, device; the message names the fix and carries an ERR code), then run the
   op itself through OpCommand, which keys, compiles and launches it without a dispatcher round trip:
       OpCommand().Name("npu::npu_foo").Input(self).Attr("scale", scale).Attr("dim", dim).Run();
       TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) { m.impl("npu_foo", &npuFoo); }
   torch_npu.npu.eager_stats() then counts its calls under "npu::npu_foo".
   An internal op (leading underscore, e.g. npu::_npu_philox_uniform: the kernel a checked public
   op runs) needs no C++ file: the generator registers the compiled kernel for it.

Autograd: a backward that is itself a custom op (or compiled aten ops), never the CPU fallback,
registered either in C++ for the Autograd alias key (a torch::autograd::Function, as NormOps.cpp
does: ~12 us per call, no GIL) or with torch.library.register_autograd in torch_npu/ops/ (simpler,
but its Python wrapper costs ~40 us on every call, with or without grad).
"""

from __future__ import annotations

import importlib
from typing import Callable

NAMESPACE = "npu"
# Modules of this package that hold REFERENCES; one line per op family.
REFERENCE_MODULES = (
    "swiglu",
    "rms_norm",
    "rotary_mul",
    "fusion_attention",
    "flash_attention",
    "philox",
    "formats",
    "amp_scaling",
    "fused_optim",
)
_table: dict[str, Callable] = {}


def _load() -> dict[str, Callable]:
    if _table:
        return _table
    found: dict[str, tuple[Callable, str]] = {}
    for stem in REFERENCE_MODULES:
        module = importlib.import_module(f"{__name__}.{stem}")
        for name, fn in module.REFERENCES.items():
            if name in found:
                raise RuntimeError(f"custom op {name} has references in {found[name][1]} and {stem}")
            found[name] = (fn, stem)
    _table.update({name: fn for name, (fn, _) in found.items()})
    return _table


def reference(target: str) -> Callable | None:
    """The reference of "npu::name" / "npu::name.overload" ("default" may be omitted), else None."""
    namespace, _, name = target.partition("::")
    if namespace != NAMESPACE:
        return None
    base, _, overload = name.partition(".")
    return _load().get(base if overload in ("", "default") else name)


def references() -> dict[str, Callable]:
    """Every reference, by "name" or "name.overload"."""
    return dict(_load())
