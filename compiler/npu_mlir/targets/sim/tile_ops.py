"""sim-lower-tile-ops: the tile-level program ascend-lower-tiles wrote, in upstream ops the sim builds.

The sim target runs a kernel's own per-core program: block split and UB / L1 / L0 tiles are the
tiling record's, as lower-tiles laid them out. Each tile op becomes what it does on one core:
  alloc                        memref.alloca of the buffer (memory spaces dropped: all host memory;
                               depth is ignored, the host runs a block's pipes in program order)
  copy_in / copy_out / load_l0 linalg.copy (load_l0 {transpose}: linalg.transpose, the L1 tile is
                               stored transposed); fixpipe the same, converting L0C's f32 on the way
  v* vector ops                linalg.generic over the UB tiles, the scalar bodies of
                               lower_kernel_to_linalg_ops (vreduce fills its identity first)
  mmad {init}                  linalg.matmul into L0C, zero-filled first when init
  set_flag / wait_flag / barrier   erased (pipes are program-ordered on the host)
  block_num                    the launch's block_dim (the function's `npu.block_dim`)
  block_idx                    a call to BLOCK_INDEX, which the sim's lowering binds to the body's
                               block index argument once the function is inlined into it (lowering.py)
Each op is written as a call to a small private function built from text, inlined by the sim's
prepare stage (`inline`): the bodies stay readable templates. Runs on func.func ops holding a
lowered kernel's body (targets/sim/kernel.py puts it there).

What only costs the host is left out, the program's block split, tile loop and tile sizes kept:
the vector ops read and write global memory where a copy_in / copy_out moved a tile to or from UB
(elide_ub_copies: the host's UB is the same memory), and read a vbroadcast's source through a
broadcasting map (fold_broadcasts). Inside each tile the sim then vectorizes for the host
(vectorize_tiles, called by lowering.py's schedule stage instead of the sim's own split and tiles):
the 1-d ops of an elementwise tile share one loop of VECTOR_ELEMENTS steps, peeled so whole steps
are unmasked, and a value a step wrote to UB is read back from its register (_forward_stores):
a 1M-element x * y + 1 runs as fast as the tensor-level build (0.15-0.17 ms either way; 0.29-0.39 ms
with one loop per tile op).
"""

from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith, func, memref

from npu_mlir.dialects.ascend.shaped import memref_space
from npu_mlir.targets.sim.schedule import TILE_ID_ATTR, VECTOR_ELEMENTS, run_transform
from npu_mlir.passes.lower_kernel_to_linalg_ops import (
    _CMP_F, _CMP_I, _binary, _cast, _float_const, _is_float, _ternary, _unary)

BLOCK_INDEX = "npu_sim_block_idx"
BLOCK_DIM_ATTR = "npu.block_dim"
BROADCAST_ATTR = "npu.broadcast_dims"
SYNC_OPS = ("ascend.set_flag", "ascend.wait_flag", "ascend.barrier")
ELEMENTWISE = ("ascend.vunary", "ascend.vbinary", "ascend.vternary", "ascend.vcast", "ascend.vcompare",
               "ascend.vselect")


def _plain(t: ir.Type) -> ir.Type:
    """`t` without its #ascend.memspace."""
    if not isinstance(t, ir.MemRefType) or ir.MemRefType(t).memory_space is None:
        return t
    m = ir.MemRefType(t)
    return ir.MemRefType.get(m.shape, m.element_type, m.layout)


def _elt(t: ir.Type) -> str:
    return str(ir.MemRefType(t).element_type) if isinstance(t, ir.MemRefType) else str(t)


def _attr(op: ir.Operation, name: str) -> str:
    return ir.StringAttr(op.attributes[name]).value


def _ints(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _map(rank: int, dims: list[int]) -> str:
    all_dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({all_dims}) -> ({', '.join(f'd{i}' for i in dims)})>"


def _generic(ins: list[tuple[str, ir.Type, list[int]]], dst: tuple[str, ir.Type], iters: list[str],
             body: list[str], args: list[str], yielded: str = "%r", out_dims: list[int] | None = None) -> str:
    """A linalg.generic on memrefs: ins are (name, type, the loop dims it reads); dst is written at
    `out_dims` (default all loops) with the body's `yielded` value."""
    rank = len(iters)
    out_map = _map(rank, list(range(rank)) if out_dims is None else out_dims)
    maps = ", ".join([_map(rank, dims) for _, _, dims in ins] + [out_map])
    names = ", ".join(n for n, _, _ in ins)
    types = ", ".join(str(t) for _, t, _ in ins)
    ins_text = f"ins({names} : {types}) " if ins else ""
    iterators = ", ".join(f'"{i}"' for i in iters)
    return (f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iterators}]}} {ins_text}"
            f"outs({dst[0]} : {dst[1]}) {{\n^bb0({', '.join(args)}):\n" + "\n".join(body) +
            f"\nlinalg.yield {yielded} : {_elt(dst[1])}\n}}")


def _elementwise(op: ir.Operation, names: list[str]) -> str:
    """A vector op of ELEMENTWISE over identically shaped UB tiles (scalar operands used as they are)."""
    *srcs, dst = list(zip(names, [_plain(v.type) for v in op.operands]))
    rank = ir.MemRefType(dst[1]).rank
    refs, ins, args = [], [], []
    broadcast = ir.DictAttr(op.attributes[BROADCAST_ATTR]) if BROADCAST_ATTR in op.attributes else {}
    for i, (name, t) in enumerate(srcs):
        if isinstance(t, ir.MemRefType):
            added = list(ir.DenseI64ArrayAttr(broadcast[str(i)])) if str(i) in broadcast else []
            refs.append(f"%in{len(ins)}")
            args.append(f"%in{len(ins)}: {_elt(t)}")
            ins.append((name, t, [d for d in range(rank) if d not in added]))
        else:
            refs.append(name)
    out_elt, in_elt = _elt(dst[1]), _elt(op.operands[0].type)
    if op.name == "ascend.vunary":
        body = _unary(_attr(op, "kind"), refs[0], out_elt)
    elif op.name == "ascend.vbinary":
        body = _binary(_attr(op, "kind"), refs[0], refs[1], out_elt)
    elif op.name == "ascend.vternary":
        body = _ternary(_attr(op, "kind"), *refs, out_elt)
    elif op.name == "ascend.vcast":
        body = _cast(refs[0], in_elt, out_elt)
    elif op.name == "ascend.vcompare":
        pred = _attr(op, "predicate")
        body = [f"%r = arith.cmpf {_CMP_F[pred]}, {refs[0]}, {refs[1]} : {in_elt}" if _is_float(in_elt)
                else f"%r = arith.cmpi {_CMP_I[pred]}, {refs[0]}, {refs[1]} : {in_elt}"]
    else:  # vselect
        body = [f"%r = arith.select {refs[0]}, {refs[1]}, {refs[2]} : {out_elt}"]
    return _generic(ins, dst, ["parallel"] * rank, body, args + [f"%o: {out_elt}"])


def _reduce(op: ir.Operation, names: list[str]) -> list[str]:
    src_t, dst_t = _plain(op.operands[0].type), _plain(op.operands[1].type)
    elt, kind, dims = _elt(src_t), _attr(op, "kind"), _ints(op, "dims")
    shape = ir.MemRefType(src_t).shape
    rank = len(shape)
    f = _is_float(elt)
    bits = 1 if elt == "i1" else int(elt.lstrip("bfi") or 16)
    identity = {"sum": "0.0" if f else "0", "mean": "0.0", "prod": "1.0" if f else "1",
                "max": _float_const(elt, -math.inf) if f else str(-(1 << (bits - 1))),
                "min": _float_const(elt, math.inf) if f else str((1 << (bits - 1)) - 1)}[kind]
    combine = {"sum": "add", "mean": "add", "prod": "mul", "max": "max", "min": "min"}[kind]
    kept = [d for d in range(rank) if d not in dims]
    lines = [f"%id = arith.constant {identity} : {elt}",
             f"linalg.fill ins(%id : {elt}) outs({names[1]} : {dst_t})",
             _generic([(names[0], src_t, list(range(rank)))], (names[1], dst_t),
                      ["reduction" if d in dims else "parallel" for d in range(rank)],
                      _binary(combine, "%x", "%o", elt), [f"%x: {elt}", f"%o: {elt}"], out_dims=kept)]
    if kind == "mean":
        count = math.prod(shape[d] for d in dims)
        out_rank = len(kept)
        lines.append(_generic([], (names[1], dst_t), ["parallel"] * out_rank,
                              [f"%n = arith.constant {float(count)!r} : {elt}", f"%r = arith.divf %o, %n : {elt}"],
                              [f"%o: {elt}"]))
    return lines


def _broadcast(op: ir.Operation, names: list[str]) -> str:
    src_t, dst_t = _plain(op.operands[0].type), _plain(op.operands[1].type)
    rank, added = ir.MemRefType(dst_t).rank, _ints(op, "dims")
    elt = _elt(dst_t)
    return _generic([(names[0], src_t, [d for d in range(rank) if d not in added])], (names[1], dst_t),
                    ["parallel"] * rank, [], [f"%x: {elt}", f"%o: {elt}"], yielded="%x")


def _move(op: ir.Operation, names: list[str]) -> list[str]:
    src_t, dst_t = (_plain(v.type) for v in op.operands)
    src_elt, dst_elt = _elt(src_t), _elt(dst_t)
    if op.name == "ascend.load_l0" and ir.IntegerAttr(op.attributes["transpose"]).value:
        return [f"linalg.transpose ins({names[0]} : {src_t}) outs({names[1]} : {dst_t}) permutation = [1, 0]"]
    if src_elt == dst_elt:
        return [f"linalg.copy ins({names[0]} : {src_t}) outs({names[1]} : {dst_t})"]
    rank = ir.MemRefType(dst_t).rank
    return [_generic([(names[0], src_t, list(range(rank)))], (names[1], dst_t), ["parallel"] * rank,
                     _cast("%x", src_elt, dst_elt), [f"%x: {src_elt}", f"%o: {dst_elt}"])]


def _mmad(op: ir.Operation, names: list[str]) -> list[str]:
    a, b, c = (_plain(v.type) for v in op.operands)
    lines = []
    if ir.IntegerAttr(op.attributes["init"]).value:
        zero = "0.0" if _is_float(_elt(c)) else "0"
        lines += [f"%zero = arith.constant {zero} : {_elt(c)}", f"linalg.fill ins(%zero : {_elt(c)}) outs({names[2]} : {c})"]
    return lines + [f"linalg.matmul ins({names[0]}, {names[1]} : {a}, {b}) outs({names[2]} : {c})"]


def _body(op: ir.Operation, names: list[str]) -> list[str]:
    if op.name in ELEMENTWISE:
        return [_elementwise(op, names)]
    if op.name == "ascend.vreduce":
        return _reduce(op, names)
    if op.name == "ascend.vbroadcast":
        return [_broadcast(op, names)]
    if op.name == "ascend.vdup":
        return [f"linalg.fill ins({names[0]} : {op.operands[0].type}) outs({names[1]} : {_plain(op.operands[1].type)})"]
    if op.name in ("ascend.copy_in", "ascend.copy_out", "ascend.load_l0", "ascend.fixpipe"):
        return _move(op, names)
    if op.name == "ascend.mmad":
        return _mmad(op, names)
    raise ValueError(f"{op.name} has no sim lowering")


class _Helpers:
    """The private functions tile ops are called as, one per distinct body and signature."""

    def __init__(self, module: ir.Operation):
        self.module = module
        self.by_text: dict[str, str] = {}

    def call(self, op: ir.Operation) -> None:
        types = [_plain(v.type) for v in op.operands]
        names = [f"%a{i}" for i in range(len(types))]
        params = ", ".join(f"{n}: {t}" for n, t in zip(names, types))
        body = "\n".join(_body(op, names))
        text = f"({params}) {{\n{body}\nreturn\n}}"
        if text not in self.by_text:
            symbol = f"npu_sim_tile_op_{len(self.by_text)}"
            parsed = ir.Module.parse(f"func.func private @{symbol}{text}")
            self.module.regions[0].blocks[0].append(parsed.body.operations[0].operation.detach_from_parent())
            self.by_text[text] = symbol
        with ir.InsertionPoint(op), op.location:
            func.CallOp([], ir.FlatSymbolRefAttr.get(self.by_text[text]), list(op.operands))
        op.erase()


def _block_index(module: ir.Operation) -> str:
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == BLOCK_INDEX:
            return BLOCK_INDEX
    parsed = ir.Module.parse(f"func.func private @{BLOCK_INDEX}() -> index")
    module.regions[0].blocks[0].append(parsed.body.operations[0].operation.detach_from_parent())
    return BLOCK_INDEX


def elide_ub_copies(function: ir.Operation) -> int:
    """Let the vector ops of each tile read their inputs from, and write their results to, global
    memory: on the host both are the same memory, so copy_in / copy_out to and from UB are only a
    pass over the tile the chip's MTE pipes overlap and the host does not. A UB tile a copy_in fills
    is replaced by its source in the vector ops after it, a UB tile a copy_out drains by its
    destination in the vector ops before it, and the copy goes (a tile another copy also reads, or an
    op in another block, keeps both). Block split, tile loop and tile sizes stay the program's. Returns how many copies went."""
    copies = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("ascend.copy_in", "ascend.copy_out"):
            ub = op.operands[1 if op.name == "ascend.copy_in" else 0]
            if memref_space(ub.type) == "ub" and all(
                    u.owner.operation == op or (u.owner.name.startswith("ascend.v") and u.owner.operation.block == op.block)
                    for u in ub.uses):
                copies.append(op)
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    for op in copies:
        gm, ub = (op.operands[0], op.operands[1]) if op.name == "ascend.copy_in" else (op.operands[1], op.operands[0])
        users = []
        for use in list(ub.uses):
            user = use.owner.operation
            if user != op and user.block == op.block and user.is_before_in_block(op) == (op.name == "ascend.copy_out"):
                user.operands[use.operand_number] = gm
                users.append(user)
        # copy_out's destination view is made just before it: it must now precede its first writer.
        view = gm.owner.operation if isinstance(gm.owner, ir.OpView) else None
        first = min(users, key=lambda u: list(op.block.operations).index(u), default=None) if users else None
        if view is not None and first is not None and view.block == op.block and first.is_before_in_block(view):
            view.move_before(first)
        op.erase()
    return len(copies)


def fold_broadcasts(function: ir.Operation) -> int:
    """Let the elementwise vector ops that read a vbroadcast's tile read its source through a
    broadcasting indexing map (BROADCAST_ATTR on the op says which dims each operand lacks): the
    host then never writes the [rows, cols] copy of a row or column vector. A broadcast whose tile
    anything else reads or writes stays. Returns how many went."""
    broadcasts = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "ascend.vbroadcast":
            broadcasts.append(op)
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    folded = 0
    for op in broadcasts:
        src, dst = op.operands
        uses = [(u.owner.operation, u.operand_number) for u in dst.uses if u.owner.operation != op]
        if not uses or any(user.name not in ELEMENTWISE or user.block != op.block or user.is_before_in_block(op)
                           or number == len(user.operands) - 1 for user, number in uses):
            continue
        for user, number in uses:
            entries = ({named.name: named.attr for named in ir.DictAttr(user.attributes[BROADCAST_ATTR])}
                       if BROADCAST_ATTR in user.attributes else {})
            entries[str(number)] = op.attributes["dims"]
            user.attributes[BROADCAST_ATTR] = ir.DictAttr.get(entries)
            user.operands[number] = src
        op.erase()
        folded += 1
    return folded


def lower_tile_ops(module: ir.Operation, function: ir.Operation) -> None:
    """Rewrite every tile op of `function` (a func.func of `module`) as above."""
    elide_ub_copies(function)
    fold_broadcasts(function)
    ops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("ascend."):
            ops.append(op)
        for result in op.results:
            result.set_type(_plain(result.type))
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    block_dim = ir.IntegerAttr(function.attributes[BLOCK_DIM_ATTR]).value if BLOCK_DIM_ATTR in function.attributes else 1
    helpers = _Helpers(module)
    index = ir.IndexType.get()
    for op in ops:
        if op.name in SYNC_OPS:
            op.erase()
            continue
        with ir.InsertionPoint(op), op.location:
            if op.name == "ascend.alloc":
                new = memref.AllocaOp(op.results[0].type, [], []).result
            elif op.name == "ascend.block_num":
                new = arith.ConstantOp(index, block_dim).result
            elif op.name == "ascend.block_idx":
                new = func.CallOp([index], ir.FlatSymbolRefAttr.get(_block_index(module)), []).result
            else:
                new = None
        if new is None:
            helpers.call(op)
            continue
        op.results[0].replace_all_uses_with(new)
        op.erase()


def holds_tile_ops(function: ir.Operation) -> bool:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("ascend."):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    return bool(found)


VECTORIZED_OPS = ("linalg.generic", "linalg.copy", "linalg.fill")


def _rank(op: ir.Operation) -> int:
    if "iterator_types" in op.attributes:
        return len(ir.ArrayAttr(op.attributes["iterator_types"]))
    return ir.MemRefType(op.operands[-1].type).rank


def _match(n: int) -> str:
    return (f"%op{n} = transform.structured.match attributes{{{TILE_ID_ATTR} = {n} : i64}} in %root "
            ": (!transform.any_op) -> !transform.any_op")


def _tile(n: int, sizes: list[int]) -> str:
    loops = ", ".join(["!transform.any_op"] * len(sizes))
    return (f"%tile{n}, %loops{n}:{len(sizes)} = transform.structured.tile_using_for %op{n} tile_sizes {sizes} "
            f": (!transform.any_op) -> (!transform.any_op, {loops})")


def _fused_loop(module: ir.Module, ops: list[ir.Operation], ids: list[int], tile: list[list[int]],
                vector: list[list[int]], peel: bool) -> bool:
    """Tile each of `ops` (TILE_ID_ATTR `ids`) by its `tile` sizes, fuse the first loop of each into
    one (in program order), peel its last step when `peel`, and vectorize each op by its `vector`
    sizes. False when a step failed: the ones done so far stay
    (each keeps the semantics), the rest is loops."""
    commands = [_match(n) for n in ids] + [_tile(n, sizes) for n, sizes in zip(ids, tile)]
    # Sibling fusion compares loop bounds as values: each tiling made its own constants.
    commands.append('%funcs = transform.structured.match ops{["func.func"]} in %root '
                    ": (!transform.any_op) -> !transform.any_op\n"
                    "transform.apply_cse to %funcs : !transform.any_op")
    fused = f"%loops{ids[0]}#0"
    for n in ids[1:]:
        commands.append(f"%fused{n} = transform.loop.fuse_sibling {fused} into %loops{n}#0 "
                        ": (!transform.any_op, !transform.any_op) -> !transform.any_op")
        fused = f"%fused{n}"
    if peel:  # whole steps apart from the tail: their extents fold to the step, so they vectorize unmasked
        commands += [f"%for = transform.cast {fused} : !transform.any_op to !transform.op<\"scf.for\">",
                     "%main, %tail = transform.loop.peel %for : (!transform.op<\"scf.for\">) "
                     "-> (!transform.any_op, !transform.any_op)",
                     "transform.apply_patterns to %funcs {\n  transform.apply_patterns.canonicalization\n} : !transform.any_op"]
    # The tiled ops keep their TILE_ID_ATTR; matched again (CSE invalidated the handles).
    for n, sizes in zip(ids, vector):
        commands += [_match(n).replace(f"%op{n}", f"%v{n}"),
                     f"transform.structured.vectorize %v{n} vector_sizes {sizes} : !transform.any_op"]
    try:
        run_transform(module, "\n".join(commands))
    except (ir.MLIRError, ValueError):
        return False
    return True


def _needs_peel(extent: int) -> bool:
    """A dynamic extent, or a static one of no whole number of vectors, has a tail (peeling a loop
    without one fails)."""
    return extent < 0 or extent % VECTOR_ELEMENTS != 0


def vectorize_tiles(module: ir.Module, body: ir.Operation) -> None:
    """Vectorize each tile op's loop nest for the host: its innermost loop in steps of
    VECTOR_ELEMENTS, masked (a tile's extent is dynamic: the last tile is a tail), the outer loops
    one by one; the ops of an elementwise tile in one loop. An op the vectorizer refuses stays a
    scalar loop. (One loop over a row tile's rows for all its ops, each row's elementwise runs in one
    loop of steps, measured slower: 2048x1024 sum 1.05 ms against 0.13 per op.)"""
    ops = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in VECTORIZED_OPS and not op.results and _rank(op):
            ops.append(op)
        return ir.WalkResult.ADVANCE

    body.walk(visit)
    for n, op in enumerate(ops):
        op.attributes[TILE_ID_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
    same_block = bool(ops) and all(op.parent == ops[0].parent for op in ops)
    if same_block and all(_rank(op) == 1 for op in ops):
        # An elementwise tile: copy-in, compute, copy-out all index it alike, so step j of each
        # touches only elements [j, j + VECTOR_ELEMENTS) of every buffer, and one loop serves all.
        extent = ir.MemRefType(ops[0].operands[-1].type).shape[0]
        _fused_loop(module, ops, list(range(len(ops))), [[VECTOR_ELEMENTS]] * len(ops),
                    [[VECTOR_ELEMENTS]] * len(ops), _needs_peel(extent))
    else:
        for n, op in enumerate(ops):
            sizes = [1] * (_rank(op) - 1) + [VECTOR_ELEMENTS]
            try:
                run_transform(module, "\n".join([_match(n), _tile(n, sizes), f"transform.structured.vectorize "
                                                 f"%tile{n} vector_sizes {sizes} : !transform.any_op"]))
            except (ir.MLIRError, ValueError):
                continue  # left as loops
    # Masks into the transfers they guard now: later passes would put constants into vector.mask regions.
    run_transform(module, (
        '%f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op\n'
        "transform.apply_patterns to %f {\n"
        "  transform.apply_patterns.vector.lower_masked_transfers\n"
        "  transform.apply_patterns.vector.lower_masks\n"
        "} : !transform.any_op\n"
        "transform.apply_cse to %f : !transform.any_op"))
    if _forward_stores(body):
        run_transform(module, '%f = transform.structured.match ops{["func.func"]} in %root '
                              ": (!transform.any_op) -> !transform.any_op\n"
                              "transform.memref.erase_dead_alloc_and_stores %f : (!transform.any_op) -> ()")


def _root(value: ir.Value) -> ir.Value:
    """The buffer a view is of."""
    while isinstance(value.owner, ir.OpView) and value.owner.operation.name in ("memref.subview", "memref.reinterpret_cast"):
        value = value.owner.operation.operands[0]
    return value


def _forward_stores(body: ir.Operation) -> bool:
    """Replace each vector read of a UB step (alloca) that the same block wrote just before, at the
    same indices and mask, with the written vector: in a fused loop a value copied into UB is then
    computed on and copied out in registers, and the UB buffers, only written, are erased after."""
    forwarded = False

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal forwarded
        for region in op.regions:
            for block in region.blocks:
                written: dict[tuple, ir.Value] = {}
                for inner in list(block.operations):
                    inner = inner.operation
                    if inner.name == "vector.transfer_write":
                        key = tuple(inner.operands[1:])
                        root = _root(inner.operands[1])
                        written = {k: v for k, v in written.items() if _root(k[0]) != root}
                        if isinstance(root.owner, ir.OpView) and root.owner.operation.name == "memref.alloca":
                            written[key] = inner.operands[0]
                    elif inner.name == "vector.transfer_read":
                        hit = next((v for k, v in written.items() if _same_access(k, inner)), None)
                        if hit is not None and hit.type == inner.results[0].type:
                            inner.results[0].replace_all_uses_with(hit)
                            inner.erase()
                            forwarded = True
                    elif inner.regions or inner.name in ("func.call", "linalg.copy", "linalg.generic", "memref.copy"):
                        written = {}
        return ir.WalkResult.ADVANCE

    body.walk(visit)
    return forwarded


def _same_access(write_key: tuple, read: ir.Operation) -> bool:
    """A transfer_read of the buffer, indices and mask a transfer_write (its operands after the vector) used."""
    operands = list(read.operands)
    buffer, rest = operands[0], operands[1:]
    # A read's operands: buffer, indices..., padding, [mask]; a write's: vector, buffer, indices..., [mask].
    rank = ir.MemRefType(buffer.type).rank
    indices, mask = rest[:rank], rest[rank + 1:]
    return write_key[0] == buffer and list(write_key[1:1 + rank]) == indices and list(write_key[1 + rank:]) == mask


def bind_block_index(module: ir.Operation, body: ir.Operation) -> bool:
    """Replace the BLOCK_INDEX calls inlined into `body` with its block index argument; True if any."""
    index = next(a for a in body.regions[0].blocks[0].arguments if isinstance(a.type, ir.IndexType))
    calls = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == BLOCK_INDEX:
            calls.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for call in calls:
        call.results[0].replace_all_uses_with(index)
        call.erase()
    for op in list(module.regions[0].blocks[0].operations):
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == BLOCK_INDEX:
            op.operation.erase()
    return bool(calls)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-lower-tile-ops): lower_tile_ops on every function holding tile ops."""
    functions = [op.operation for op in module.regions[0].blocks[0].operations
                 if op.operation.name == "func.func" and holds_tile_ops(op.operation)]
    for function in functions:
        try:
            lower_tile_ops(module, function)
        except ValueError as exc:
            function.location.emit_error(f"ERR03007 GRAPH {exc}")
            return False
    return True
