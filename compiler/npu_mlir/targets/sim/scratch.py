"""Kernel scratch buffers kept per host thread between launches, instead of malloc / free each time.

A kernel's intermediates (the f32 panels of a half-precision matmul, a convolution's gathered
columns, an f32 accumulator before its cast) are heap buffers the kernel allocates and frees on
every launch. glibc serves blocks of more than its mmap threshold (128 KiB, raised to at most
32 MiB by earlier frees) with a fresh mmap and unmaps them on free, and trims a thread arena's
top once it exceeds twice that: every launch page-faults its scratch in again, one zeroed 4 KiB
page at a time. On this loaded 2-core host that ran at 0.2-1 GB/s: 1024^3 f16 matmul (16 MB of
scratch a launch) 110 ms eager against 30 ms with glibc told to keep its memory.

The sim lowers memref allocations through `finalize-memref-to-llvm{use-generic-functions=1}`,
which calls `_mlir_memref_to_llvm_alloc` / `_mlir_memref_to_llvm_free`; this module defines both in
the kernel's own LLVM module. A freed block goes into one of SLOTS thread-local slots (a 16-byte
header before it keeps its size) and the next allocation of the same size on that thread takes it
back, pages already mapped. A launch runs on one AI-core thread per block, so a thread's slots are
never shared; two streams launching the same kernel use different threads. A block that finds no
free slot, or one larger than MAX_KEPT, goes back to free(). Kept memory is per kernel library and
thread: at most SLOTS blocks of at most MAX_KEPT bytes each, for the life of the process.
"""

from __future__ import annotations

from torch_mlir import ir

SLOTS = 4
MAX_KEPT = 256 << 20
HEADER = 16  # bytes before each block: its size (keeps malloc's 16-byte alignment)
ALLOC, FREE = "_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_free"
SLOTS_GLOBAL = "npu_sim_scratch_slots"


def _slot(i: int) -> str:
    return f"  %slot{i} = llvm.getelementptr %slots[{i}] : (!llvm.ptr) -> !llvm.ptr, i64"


def _alloc_function() -> str:
    """Take a kept block of this size (slots hold block addresses, 0 when empty), else malloc one.

    A slot is emptied by an atomic exchange before its block's header is read: another thread may
    free or take a block at any time. A block of another size is put back, or freed if its slot
    was filled meanwhile.
    """
    lines = [f"llvm.func @{ALLOC}(%size: i64) -> !llvm.ptr {{",
             f"  %slots = llvm.mlir.addressof @{SLOTS_GLOBAL} : !llvm.ptr",
             "  %none = llvm.mlir.constant(0 : i64) : i64",
             f"  %header = llvm.mlir.constant({HEADER} : i64) : i64",
             "  %sized = llvm.icmp \"ne\" %size, %none : i64",
             "  llvm.cond_br %sized, ^try0, ^fresh"]
    for i in range(SLOTS):
        nxt = f"^try{i + 1}" if i + 1 < SLOTS else "^fresh"
        lines += [f"^try{i}:", _slot(i),
                  f"  %q{i} = llvm.atomicrmw xchg %slot{i}, %none seq_cst : !llvm.ptr, i64",
                  f"  %full{i} = llvm.icmp \"ne\" %q{i}, %none : i64",
                  f"  llvm.cond_br %full{i}, ^look{i}, {nxt}",
                  f"^look{i}:",
                  f"  %qb{i} = llvm.sub %q{i}, %header : i64",
                  f"  %b{i} = llvm.inttoptr %qb{i} : i64 to !llvm.ptr",
                  f"  %s{i} = llvm.load %b{i} : !llvm.ptr -> i64",
                  f"  %hit{i} = llvm.icmp \"eq\" %s{i}, %size : i64",
                  f"  llvm.cond_br %hit{i}, ^take{i}, ^back{i}",
                  f"^take{i}:",
                  f"  %p{i} = llvm.inttoptr %q{i} : i64 to !llvm.ptr",
                  f"  llvm.return %p{i} : !llvm.ptr",
                  f"^back{i}:",
                  f"  %r{i} = llvm.cmpxchg %slot{i}, %none, %q{i} seq_cst seq_cst : !llvm.ptr, i64",
                  f"  %ok{i} = llvm.extractvalue %r{i}[1] : !llvm.struct<(i64, i1)>",
                  f"  llvm.cond_br %ok{i}, {nxt}, ^drop{i}",
                  f"^drop{i}:",
                  f"  llvm.call @free(%b{i}) : (!llvm.ptr) -> ()",
                  f"  llvm.br {nxt}"]
    lines += ["^fresh:",
              "  %total = llvm.add %size, %header : i64",
              "  %base = llvm.call @malloc(%total) : (i64) -> !llvm.ptr",
              "  llvm.store %size, %base : i64, !llvm.ptr",
              f"  %block = llvm.getelementptr %base[{HEADER}] : (!llvm.ptr) -> !llvm.ptr, i8",
              "  llvm.return %block : !llvm.ptr",
              "}"]
    return "\n".join(lines)


def _free_function() -> str:
    """Keep the block in the first empty slot (compare-and-swap), else free it."""
    lines = [f"llvm.func @{FREE}(%block: !llvm.ptr) {{",
             f"  %slots = llvm.mlir.addressof @{SLOTS_GLOBAL} : !llvm.ptr",
             "  %none = llvm.mlir.constant(0 : i64) : i64",
             f"  %base = llvm.getelementptr %block[-{HEADER}] : (!llvm.ptr) -> !llvm.ptr, i8",
             "  %size = llvm.load %base : !llvm.ptr -> i64",
             "  %q = llvm.ptrtoint %block : !llvm.ptr to i64",
             f"  %limit = llvm.mlir.constant({MAX_KEPT} : i64) : i64",
             "  %small = llvm.icmp \"ule\" %size, %limit : i64",
             "  %sized = llvm.icmp \"ne\" %size, %none : i64",
             "  %keep = llvm.and %small, %sized : i1",
             "  llvm.cond_br %keep, ^try0, ^release"]
    for i in range(SLOTS):
        nxt = f"^try{i + 1}" if i + 1 < SLOTS else "^release"
        lines += [f"^try{i}:", _slot(i),
                  f"  %r{i} = llvm.cmpxchg %slot{i}, %none, %q seq_cst seq_cst : !llvm.ptr, i64",
                  f"  %ok{i} = llvm.extractvalue %r{i}[1] : !llvm.struct<(i64, i1)>",
                  f"  llvm.cond_br %ok{i}, ^kept, {nxt}"]
    lines += ["^kept:",
              "  llvm.return",
              "^release:",
              "  llvm.call @free(%base) : (!llvm.ptr) -> ()",
              "  llvm.return",
              "}"]
    return "\n".join(lines)


def _declared(module: ir.Module | ir.Operation) -> set[str]:
    return {ir.StringAttr(op.attributes["sym_name"]).value for op in module.operation.regions[0].blocks[0].operations
            if "sym_name" in op.attributes}


def add_scratch_allocator(module: ir.Module | ir.Operation) -> None:
    """Define the generic allocation functions (see the module doc) in a module before its memrefs
    are lowered with use-generic-functions=1; declares malloc / free where the module has none."""
    declared = _declared(module)
    parts = [f"llvm.mlir.global internal @{SLOTS_GLOBAL}() : !llvm.array<{SLOTS} x i64> {{\n"
             f"  %0 = llvm.mlir.zero : !llvm.array<{SLOTS} x i64>\n"
             f"  llvm.return %0 : !llvm.array<{SLOTS} x i64>\n}}"]
    parts += ["llvm.func @malloc(i64) -> !llvm.ptr", "llvm.func @free(!llvm.ptr)", _alloc_function(), _free_function()]
    helpers = ir.Module.parse("module {\n" + "\n".join(parts) + "\n}")  # parsed whole: its calls need their callees
    for op in list(helpers.body.operations):
        if ir.StringAttr(op.attributes["sym_name"]).value not in declared:
            module.operation.regions[0].blocks[0].append(op)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-scratch-allocator): `add_scratch_allocator` on `module`, unless it
    defines the allocation functions already."""
    if ALLOC not in _declared(module):
        add_scratch_allocator(module)
    return True
