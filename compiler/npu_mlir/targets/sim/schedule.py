"""Tiling and vectorization of a kernel body for the simulated device (tensor level).

Two levels, as on the chip:
- block split: the op that produces the kernel's result is tiled along one parallel loop into
  `block_dim` equal chunks with its producers fused in (`transform.structured.fuse`); the chunk loop
  is then pinned to a single iteration at `block_idx`, so each block computes its own slice of the
  output. Producers that cannot be sliced are recomputed whole by every block into block-private
  buffers - slower, never wrong. The split is skipped (block_dim 1) whenever a block could write
  outside its slice: a result that is not produced by a structured op (a kernel whose results are
  slices of its arguments gets identity generics to split: slices_of_arguments), results that share
  no parallel dim, or an output initialised by a non-fusable op. Several results are tiled alike
  along a dim they share, and their slice loops fused into one (a result computed from another
  recomputes that one's slice in its own loop; CSE merges the two).
- UB tiles: every structured op is tiled so its innermost loops fit a few vector registers, then
  vectorized. Tile sizes always divide the static loop range: a remainder would stay scalar.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor
from torch_mlir.dialects.transform import interpreter
from torch_mlir.passmanager import PassManager

from npu_mlir.hardware import host_cpu
from npu_mlir.targets.sim import bf16_dot

BLOCK_LOOP_ATTR = "npu.block_loop"
TAIL_LOOP_ATTR = "npu.block_tail"  # the peeled short last chunk of an uneven block split
ROOT_ATTR = "npu.root"
# Marks widen_panels' row-major copy of a transposed contraction operand. The block split fuses the
# copy into every block that reads the operand whole, and a transposing copy costs about as much as
# reading its result REPACK_COST times: 0.70 ms against 0.085 ms for a 128x512 @ (128x512).t()
# split by rows, where split by columns each block packs only its own columns.
PACKED_ATTR = "npu.packed"
REPACK_COST = 8
TILE_ID_ATTR = "npu.tile_id"


# Elements one UB tile covers in its innermost dims: two f32 registers. Wider tiles spill inside
# the polynomial math and compile slower (AVX2, 16M-element exp: 16 lanes 0.21 s, 64 lanes 0.32 s).
VECTOR_ELEMENTS = 32 if "avx512f" in host_cpu.flags() else 16

# Register tile of a contraction (M, N): accumulators must fit the register file with room for the
# B row and the A broadcast - 8x32 f32 = 16 zmm of 32 with AVX-512 (two B loads feed 16 FMAs with
# embedded broadcasts of A; 8x16 = 8 zmm left the FMA pipes half idle: 1024^3 f32 min 17-21 ms
# against 10-11 ms, bf16 alike), 4x16 = 8 ymm of 16 with AVX2 (8x16 spills there: measured 0.35x
# torch against 0.6-0.8x).
CONTRACTION_TILE = (8, 32) if "avx512f" in host_cpu.flags() else (4, 16)
# Cache tile of a contraction (N, K): a 256x256 f32 panel of B (256 KiB) stays in L2 while every
# register tile of the block's rows streams through it; untiled, each row tile re-reads all of B.
# (512x128 and 256x128 measured the same within this machine's noise.)
CONTRACTION_PANEL = (256, 256)


@dataclass(frozen=True)
class LoopNest:
    ranges: tuple[int, ...]  # -1 where the range is not static
    parallel: tuple[bool, ...]
    is_contraction: bool


def _transform_module(body: str) -> ir.Module:
    return ir.Module.parse(
        "module attributes {transform.with_named_sequence} {\n"
        "transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
        f"{body}\ntransform.yield\n}}\n}}")


def run_transform(module: ir.Module, body: str) -> None:
    script = _transform_module(body)
    entry = script.body.operations[0]
    interpreter.apply_named_sequence(module.operation, entry, script)


def loop_nest(op: ir.Operation) -> LoopNest | None:
    """Static loop ranges of a linalg.generic, read off its operand shapes and indexing maps."""
    if "indexing_maps" not in op.attributes:
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iters = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    ranges = [-1] * len(iters)
    for operand, amap in zip(op.operands, maps):
        if not isinstance(operand.type, ir.ShapedType):
            continue
        shape = ir.ShapedType(operand.type).shape
        for dim, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr):
                pos = expr.position
                if shape[dim] >= 0:
                    ranges[pos] = shape[dim]
    parallel = tuple("parallel" in it for it in iters)
    body_ops = [o.operation.name for o in op.regions[0].blocks[0].operations]
    contraction = (len(iters) >= 3 and not parallel[-1] and all(parallel[:-1])
                   and any(n in body_ops for n in ("arith.mulf", "arith.muli")))
    return LoopNest(tuple(ranges), parallel, contraction)


def largest_divisor(n: int, limit: int) -> int:
    for d in range(min(n, limit), 0, -1):
        if n % d == 0:
            return d
    return 1


def _structured_ops(func: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == "linalg.generic":
            found.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return found


def _returned_producers(func: ir.Operation) -> list[ir.Operation] | None:
    """One single-result linalg.generic per returned value, each returned once; else None."""
    ret = func.regions[0].blocks[0].operations[len(func.regions[0].blocks[0].operations) - 1]
    roots = [_defining_op(v) for v in ret.operands]
    if not roots or any(op is None or op.name != "linalg.generic" or len(op.results) != 1 for op in roots):
        return None
    for n, root in enumerate(roots):
        others = roots[:n] + roots[n + 1:]
        if any(other == root for other in others):
            return None
    return roots


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _output_map(op: ir.Operation) -> ir.AffineMap:
    return ir.AffineMapAttr(list(ir.ArrayAttr(op.attributes["indexing_maps"]))[-1]).value


def _split_dims(roots: list[ir.Operation], requested: int) -> tuple[list[int], int, int]:
    """(loop dim of each root, block count, chunk) for the best result dim every root tiles alike.

    A result dim qualifies when it has the same size in every result and each root's output map
    reads it straight off a parallel loop: then slice b of that dim is block b's share of every result.
    """
    best: tuple[list[int], int, int] = ([], 1, 0)
    candidates = []
    shapes = [ir.ShapedType(root.results[0].type).shape for root in roots]
    first_map = _output_map(roots[0])
    # Ties go to the outermost loop of the first root.
    loop_order = lambda r: (first_map.results[r].position if isinstance(first_map.results[r], ir.AffineDimExpr)
                            else len(first_map.results))
    for r in sorted(range(min(len(shape) for shape in shapes)), key=loop_order):
        size = shapes[0][r]
        if size <= 1 or any(shape[r] != size for shape in shapes):
            continue
        dims = []
        for root in roots:
            expr = _output_map(root).results[r]
            iterators = [str(a) for a in ir.ArrayAttr(root.attributes["iterator_types"])]
            if not isinstance(expr, ir.AffineDimExpr) or "parallel" not in iterators[expr.position]:
                break
            dims.append(expr.position)
        if len(dims) != len(roots):
            continue
        blocks, chunk = _block_chunk(size, requested, max(_alignment(root, dim) for root, dim in zip(roots, dims)))
        if blocks > 1:
            extra, inputs = _reread_elements(roots, dims, blocks)
            # Most blocks while the re-reads stay under the inputs' own size (a broadcast bias);
            # past that, fewest re-reads. Ties go to the outermost loop (min keeps the first).
            costly = extra > inputs
            candidates.append(((costly, extra if costly else 0, -blocks), (dims, blocks, chunk)))
    return min(candidates, key=lambda c: c[0])[1] if candidates else best


def _alignment(root: ir.Operation, dim: int) -> int:
    """Elements a block's share of loop `dim` should be a multiple of: a contraction's register tile
    (ub_tile_sizes) on M / N; VECTOR_ELEMENTS on an elementwise op's innermost loop; else 1."""
    nest = loop_nest(root)
    last = len(nest.ranges) - 1
    if nest.is_contraction:
        return {last - 2: CONTRACTION_TILE[0], last - 1: 16}.get(dim, 1)
    return VECTOR_ELEMENTS if dim == last else 1


def _block_chunk(size: int, requested: int, align: int) -> tuple[int, int]:
    """(blocks, chunk) of a loop of `size`: equal chunks of a divisor when that gives at least half
    the requested blocks in aligned chunks, else aligned chunks and a shorter last one.

    A size with no fitting divisor ran on few blocks or in misaligned ones: 127 rows on one block,
    255 columns in 17 chunks of 15 (a 15-lane register row: partial vectors). split_over_blocks
    peels the short last chunk into a loop of its own, so both stay static.
    """
    even = largest_divisor(size, requested)
    if (even * 2 > requested or even == size) and (size // even) % align == 0:
        return even, size // even
    chunk = -(-max(-(-size // requested), align) // align) * align
    if chunk >= size:
        return even, size // even
    return -(-size // chunk), chunk


def _reread_elements(roots: list[ir.Operation], dims: list[int], blocks: int) -> tuple[int, int]:
    """(elements read again, elements of the inputs) when each root's loop `dims[i]` is split.

    An input whose indexing map does not use the split loop is read whole by every block: a matmul
    of 64 rows split by rows re-read its 576 x 25088 right operand 16 times (1 GB of traffic for a
    2 GFLOP product); split by columns, each block reads its own columns and all of the small one.
    """
    extra = inputs = 0
    for root, dim in zip(roots, dims):
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(root.attributes["indexing_maps"])]
        for operand, amap in zip(list(root.operands)[:len(maps) - len(root.results)], maps):
            if not isinstance(operand.type, ir.ShapedType):
                continue
            size = max(1, math.prod(max(d, 1) for d in ir.ShapedType(operand.type).shape))
            sliced = any(isinstance(e, ir.AffineDimExpr) and e.position == dim for e in amap.results)
            producer = _defining_op(operand)
            weight = REPACK_COST if producer is not None and PACKED_ATTR in producer.attributes else 1
            inputs += size
            extra += 0 if sliced else size * (blocks - 1) * weight
    return extra, inputs


# A slice kernel (see slices_of_arguments) of fewer elements stays one block: it copies in a few
# microseconds, about what the hand-off of each further block costs.
MIN_SLICE_SPLIT_ELEMENTS = 1 << 16


# Ops of a slice chain: views of an argument once bufferized (linalg-fold-unit-extent-dims puts
# reshapes around rank-reducing slices). A tensor.pad split this way was no faster (its tiles pad
# in scalar code).
SLICE_CHAIN_OPS = ("tensor.extract_slice", "tensor.expand_shape", "tensor.collapse_shape")


def slices_of_arguments(func: ir.Operation) -> bool:
    """Whether every result of func is a chain of slices (SLICE_CHAIN_OPS) of an argument, and they are large.

    Such a kernel (a strided slice: a convolution's weight at one kernel offset, an image of a
    batch) is opaque to the tiling pass, so its record says block_dim 1 and one core moved all of
    it (a 512x512 slice of a 3x3 kernel's weight: 1.4 ms). Its blocks can copy row slices.
    """
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    elements = 0
    for value in ret.operands:
        op, names = _defining_op(value), set()
        while op is not None and op.name in SLICE_CHAIN_OPS:
            names.add(op.name)
            op = _defining_op(op.operands[0])
        if op is not None and op.name == "bufferization.to_tensor":
            op = _defining_op(op.operands[0])
        shape = ir.RankedTensorType(value.type).shape
        if op is not None or "tensor.extract_slice" not in names or min(shape, default=1) < 0:
            return False
        elements += math.prod(shape)
    return bool(list(ret.operands)) and elements >= MIN_SLICE_SPLIT_ELEMENTS


def copy_slices_through_generics(module: ir.Module, func: ir.Operation) -> None:
    """Return each result of a slices_of_arguments kernel through an identity linalg.generic, which
    split_over_blocks tiles (the slice folds into each block's own slice of it)."""
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(ret), ret.location:
        for n, value in enumerate(list(ret.operands)):
            kind = ir.RankedTensorType(value.type)
            empty = tensor.EmptyOp(kind.shape, kind.element_type).result
            ret.operands[n] = linalg.copy(value, outs=[empty])
    PassManager.parse("builtin.module(linalg-generalize-named-ops)").run(module.operation)


def split_over_blocks(module: ir.Module, func: ir.Operation, requested: int) -> int:
    """Tile the results' producers into block slices; returns the block_dim actually used.

    Each root is tiled and fused on its own, then the per-root slice loops (same bounds) are fused
    into one and CSE merges the producer slices they both recomputed.
    """
    roots = _returned_producers(func)
    if requested <= 1 or roots is None:
        return 1
    dims, blocks, chunk = _split_dims(roots, requested)
    if blocks <= 1:
        return 1
    # Fusing siblings needs the target loop's operands to dominate the source loop: fuse in block order.
    body = list(func.regions[0].blocks[0].operations)
    position = lambda op: next(i for i, o in enumerate(body) if o.operation == op)
    roots, dims = zip(*sorted(zip(roots, dims), key=lambda pair: position(pair[0])))
    # Every root is matched before any is tiled, and the last is tiled first: a root that reads an
    # earlier one then fuses a copy of that one's generic into its slice loop (CSE merges the two
    # slices once the loops are fused), where tiled later it would read the earlier root's loop.
    commands = []
    for n, root in enumerate(roots):
        root.attributes[ROOT_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
        commands.append(f"%op{n} = transform.structured.match attributes{{{ROOT_ATTR} = {n} : i64}} in %root "
                        ": (!transform.any_op) -> !transform.any_op")
    for n, (root, dim) in reversed(list(enumerate(zip(roots, dims)))):
        sizes = [0] * len(loop_nest(root).ranges)
        sizes[dim] = chunk
        commands.append(
            f"%tiled{n}, %loop{n} = transform.structured.fuse %op{n} tile_sizes {sizes} {{apply_cleanup}} "
            ": (!transform.any_op) -> (!transform.any_op, !transform.any_op)")
    if len(roots) > 1:
        # Sibling fusion compares loop bounds as values: each tiling made its own constants.
        commands.append('%funcs = transform.structured.match ops{["func.func"]} in %root '
                        ": (!transform.any_op) -> !transform.any_op\n"
                        "transform.apply_cse to %funcs : !transform.any_op")
    fused = "%loop0"
    for n in range(1, len(roots)):
        commands.append(f"%fused{n} = transform.loop.fuse_sibling {fused} into %loop{n} "
                        ": (!transform.any_op, !transform.any_op) -> !transform.any_op")
        fused = f"%fused{n}"
    uneven = chunk * blocks != ir.ShapedType(roots[0].results[0].type).shape[_result_dim(roots[0], dims[0])]
    if uneven:
        # The last block's shorter chunk in a loop of its own: both loops' slices are static.
        commands.append(f'%for = transform.cast {fused} : !transform.any_op to !transform.op<"scf.for">\n'
                        f"%main, %tail = transform.loop.peel %for : (!transform.op<\"scf.for\">) "
                        "-> (!transform.any_op, !transform.any_op)\n"
                        f"transform.annotate %tail \"{TAIL_LOOP_ATTR}\" : !transform.any_op")
        fused = "%main"
    commands.append(f"transform.annotate {fused} \"{BLOCK_LOOP_ATTR}\" : !transform.any_op")
    try:
        run_transform(module, "\n".join(commands))
    except (ir.MLIRError, ValueError):
        return 0  # caller rebuilds the function and compiles it unsplit
    if uneven:
        # Pinned before canonicalize, which would inline the one-trip tail loop.
        loop, tail = _find_attr(func, BLOCK_LOOP_ATTR), _find_attr(func, TAIL_LOOP_ATTR)
        if loop is None or tail is None or not _initialised_by_empty(loop):
            return 0
        _pin_to_block(loop, func, chunk, tail)
        PassManager.parse("builtin.module(cse, canonicalize)").run(module.operation)
        return blocks
    if len(roots) > 1:
        PassManager.parse("builtin.module(cse, canonicalize)").run(module.operation)
    loop = _find_attr(func, BLOCK_LOOP_ATTR)
    if loop is None or not _initialised_by_empty(loop):
        return 0
    _pin_to_block(loop, func, chunk)
    return blocks


def _find_attr(func: ir.Operation, name: str) -> ir.Operation | None:
    found = []

    def visit(op):
        if name in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return found[0] if len(found) == 1 else None


def _initialised_by_empty(loop: ir.Operation) -> bool:
    # Operands 3.. are the loop-carried outputs; anything but tensor.empty would be written whole by each block.
    inits = [_defining_op(v) for v in list(loop.operands)[3:]]
    return bool(inits) and all(init is not None and init.name == "tensor.empty" for init in inits)


def _pin_to_block(loop: ir.Operation, func: ir.Operation, chunk: int, tail: ir.Operation | None = None) -> None:
    """Bound the block loop to block_idx's chunk. With a peeled tail loop (the short last chunk), the
    last block runs the tail instead: its chunk of the main loop is empty, the others skip the tail."""
    block_idx = func.regions[0].blocks[0].arguments[_block_idx_position(func)]
    with ir.InsertionPoint(loop), loop.location:
        index = ir.IndexType.get()
        step = arith.ConstantOp(index, chunk).result
        lower = arith.MulIOp(block_idx, step).result
        upper = arith.AddIOp(lower, step).result
        if tail is not None:
            end = loop.operands[1]  # where the tail starts: the last block's lower bound
            lower, upper = arith.MinSIOp(lower, end).result, arith.MinSIOp(upper, end).result
    loop.operands[0] = lower
    loop.operands[1] = upper
    if tail is not None:
        with ir.InsertionPoint(tail), tail.location:
            last = arith.CmpIOp(arith.CmpIPredicate.eq, lower, tail.operands[0]).result
            tail.operands[1] = arith.SelectOp(last, tail.operands[1], tail.operands[0]).result
        # Its one trip starts at its (static) lower bound: with the induction variable replaced by
        # it, canonicalize folds the tail's slices to static sizes.
        tail.regions[0].blocks[0].arguments[0].replace_all_uses_with(tail.operands[0])


def _result_dim(root: ir.Operation, loop_dim: int) -> int:
    """The result dim that root's output map reads off loop `loop_dim`."""
    return next(r for r, e in enumerate(_output_map(root).results)
                if isinstance(e, ir.AffineDimExpr) and e.position == loop_dim)


def _block_idx_position(func: ir.Operation) -> int:
    args = func.regions[0].blocks[0].arguments
    for i, arg in enumerate(args):
        if isinstance(arg.type, ir.IndexType):
            return i
    raise ValueError("kernel body has no block index argument")


def _register_columns(size: int) -> int:
    """N of a contraction's register tile: CONTRACTION_TILE's when it divides `size`, else 16 or less.

    Only whole 16-lane rows go past 16: a row of 25 or 28 lanes (1000 columns, 392-column block
    slices) lowered to split partial vectors and ran 10x slower than rows of 10 or 14.
    """
    wide = [d for d in range(16, CONTRACTION_TILE[1] + 1, 16) if size % d == 0]
    return max(wide) if wide else largest_divisor(size, 16)


# Rows below which a contraction's M is split into a multiple of CONTRACTION_TILE[0] and a remainder
# part (257 rows: a register tile of 1 row, 16 FMAs per 16 loads, where 8 rows issue 16 per 3).
MIN_REGISTER_ROWS = 4


def remainder_splits(nest: LoopNest, pairs: bool = False) -> list[tuple[int, int]]:
    """(loop dim, size of the first part) splits of a contraction whose M or N no register tile divides
    (or, with `pairs` - a bf16 contraction bf16_dot can take - whose K is odd).

    N not a multiple of 16 is split after its last whole 16 lanes (1000 columns: 992 in 32-lane
    rows, then an 8-column part), M after its last whole CONTRACTION_TILE[0] rows when its best
    divisor is under MIN_REGISTER_ROWS. Each part is then tiled on its own (ub_tile_sizes), so
    the bulk of the product runs in full register tiles: a 1000-column matmul ran in 10-column
    tiles, 4x slower per FLOP than 1024, and bf16 missed vdpbf16ps (16-lane rows only). An odd
    K of such a bf16 contraction leaves its last step to a part of its own, the rest in K pairs.
    """
    if not nest.is_contraction or min(nest.ranges, default=1) < 0:
        return []
    m, n = len(nest.ranges) - 3, len(nest.ranges) - 2
    splits = []
    lanes = 16
    if nest.ranges[n] > lanes and nest.ranges[n] % lanes:
        splits.append((n, nest.ranges[n] - nest.ranges[n] % lanes))
    rows = CONTRACTION_TILE[0]
    if nest.ranges[m] > rows and largest_divisor(nest.ranges[m], rows) < MIN_REGISTER_ROWS:
        splits.append((m, nest.ranges[m] - nest.ranges[m] % rows))
    k = len(nest.ranges) - 1
    if pairs and nest.ranges[k] > 3 and nest.ranges[k] % 2:
        splits.append((k, nest.ranges[k] - 1))
    return splits


def split_remainders(module: ir.Module, func: ir.Operation) -> None:
    """Apply remainder_splits to every contraction of func (transform.structured.split)."""
    commands = []
    for n, op in enumerate(_structured_ops(func)):
        nest = loop_nest(op)
        splits = remainder_splits(nest, bf16_dot.pairs_k(op)) if nest is not None else []
        if not splits:
            continue
        op.attributes[TILE_ID_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
        handle = f"%s{n}"
        commands.append(f"{handle} = transform.structured.match attributes{{{TILE_ID_ATTR} = {n} : i64}} in %root "
                        ": (!transform.any_op) -> !transform.any_op")
        for i, (dim, size) in enumerate(splits):
            commands.append(f"{handle}_{i} = transform.structured.split {handle} after {size} {{dimension = {dim}}} "
                            ": !transform.any_op")
            handle = f"{handle}_{i}"
    if commands:
        run_transform(module, "\n".join(commands))
        for op in _structured_ops(func):
            if TILE_ID_ATTR in op.attributes:
                del op.attributes[TILE_ID_ATTR]


def ub_tile_sizes(nest: LoopNest) -> list[int]:
    """Tile sizes (0 = untiled) that divide every static range; innermost loops stay vector-sized."""
    sizes = [1] * len(nest.ranges)
    if nest.is_contraction:
        m, n = len(sizes) - 3, len(sizes) - 2
        sizes[m] = largest_divisor(nest.ranges[m], CONTRACTION_TILE[0])
        sizes[n] = _register_columns(nest.ranges[n])
    else:
        budget = VECTOR_ELEMENTS
        for dim in reversed(range(len(sizes))):
            sizes[dim] = largest_divisor(nest.ranges[dim], budget)
            if sizes[dim] < nest.ranges[dim]:
                break
            budget = max(1, budget // nest.ranges[dim])
    return [0 if s == r else s for s, r in zip(sizes, nest.ranges)]


def panel_tile_sizes(nest: LoopNest) -> list[int]:
    """Cache-level tiles of a contraction's (N, K) loops; all zero for other ops or small ones.

    The N panel is a multiple of the register tile's N (ub_tile_sizes), or the register tiles
    would not divide it: the remainder tile is dynamic and stays scalar (a 392-column panel of
    32-column tiles ran 5x slower).
    """
    sizes = [0] * len(nest.ranges)
    if nest.is_contraction:
        n, k = len(sizes) - 2, len(sizes) - 1
        register_n = ub_tile_sizes(nest)[n] or nest.ranges[n]
        fits = [d for d in range(register_n, min(nest.ranges[n], CONTRACTION_PANEL[0]) + 1, register_n)
                if nest.ranges[n] % d == 0]
        sizes[n] = max(fits) if fits and max(fits) < nest.ranges[n] else 0
        size = largest_divisor(nest.ranges[k], CONTRACTION_PANEL[1])
        sizes[k] = 0 if size == nest.ranges[k] else size
    return sizes


def _tile_command(result: str, handle: str, sizes: list[int]) -> str:
    count = sum(1 for s in sizes if s)
    loops = ", ".join(["!transform.any_op"] * count)
    return (f"{result}, {result}_loops:{count} = transform.structured.tile_using_for {handle} tile_sizes {sizes} "
            f": (!transform.any_op) -> (!transform.any_op, {loops})")


def tile_and_vectorize(module: ir.Module, func: ir.Operation) -> None:
    split_remainders(module, func)
    commands = []
    for n, op in enumerate(_structured_ops(func)):
        nest = loop_nest(op)
        if nest is None or min(nest.ranges, default=1) < 0:
            continue
        sizes = ub_tile_sizes(nest)
        columns = sizes[-2] or nest.ranges[-2] if nest.is_contraction else 0
        if (nest.is_contraction and nest.ranges[-1] % 2 == 0 and nest.ranges[-1] > 2
                and columns % bf16_dot.LANES == 0 and bf16_dot.pairs_k(op)):
            # K pairs for vdpbf16ps (bf16_dot.py); a register tile of other widths keeps K steps of 1
            # (1000^3 bf16 with 10-column tiles and K pairs: 4x slower).
            sizes[-1] = 2
        if not any(sizes):
            continue
        op.attributes[TILE_ID_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
        commands.append(
            f"%t{n} = transform.structured.match attributes{{{TILE_ID_ATTR} = {n} : i64}} in %root "
            ": (!transform.any_op) -> !transform.any_op")
        handle = f"%t{n}"
        panel = panel_tile_sizes(nest)
        if sizes[-1] == 2 and panel[-1] % 2:
            # K panels of whole pairs: a 255-step panel of 510 left a scalar remainder step in each
            # (bf16 257x511x129, K split to 510 + 1: 4 GFLOP/s).
            panel[-1] = 2 * largest_divisor(nest.ranges[-1] // 2, CONTRACTION_PANEL[1] // 2)
        if any(panel):
            commands.append(_tile_command(f"%p{n}", handle, panel))
            handle = f"%p{n}"
        commands.append(_tile_command(f"%tt{n}", handle, sizes))
    commands.append(
        "%f = transform.structured.match ops{[\"func.func\"]} in %root : (!transform.any_op) -> !transform.any_op\n"
        "%v = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op")
    run_transform(module, "\n".join(commands))
    bf16_dot.use_dot_products(func)


def _drop_self_copies(module: ir.Module) -> None:
    """Erase `transfer_write(transfer_read(m[i]), m[i])` pairs.

    Vectorizing the block loop's tensor.insert_slice leaves one such pair per block once the slice
    bufferized in place: a pointless full-tile copy.
    """
    pairs = []

    def visit(op):
        if op.name == "vector.transfer_write":
            read = _defining_op(op.operands[0])
            if (read is not None and read.name == "vector.transfer_read" and read.operands[0] == op.operands[1]
                    and list(read.operands[1:1 + len(op.operands) - 2]) == list(op.operands[2:])):
                pairs.append((op, read))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for write, read in pairs:
        write.erase()
        if not list(read.results[0].uses):
            read.erase()


def lower_vectors(module: ir.Module) -> None:
    """After bufferization: keep accumulators in registers, then lower contractions and transfers."""
    _drop_self_copies(module)
    run_transform(module, (
        "%f = transform.structured.match ops{[\"func.func\"]} in %root : (!transform.any_op) -> !transform.any_op\n"
        "%h = transform.structured.hoist_redundant_vector_transfers %f : (!transform.any_op) -> !transform.any_op\n"
        "transform.apply_patterns to %h {\n"
        "  transform.apply_patterns.vector.lower_contraction lowering_strategy = \"outerproduct\"\n"
        "  transform.apply_patterns.vector.transfer_permutation_patterns\n"
        "  transform.apply_patterns.vector.reorder_multi_reduction_dims lowering_strategy = \"innerreduction\"\n"
        "  transform.apply_patterns.vector.multi_reduction_flattening lowering_strategy = \"innerreduction\"\n"
        "  transform.apply_patterns.vector.multi_reduction_unrolling lowering_strategy = \"innerreduction\"\n"
        "  transform.apply_patterns.vector.lower_outerproduct\n"
        "  transform.apply_patterns.vector.lower_broadcast\n"
        "  transform.apply_patterns.vector.lower_transpose\n"
        "} : !transform.any_op\n"
        "transform.apply_patterns to %h {\n"
        "  transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1\n"
        "  transform.apply_patterns.vector.split_transfer_full_partial split_transfer_strategy = \"linalg-copy\"\n"
        "  transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true\n"
        "} : !transform.any_op"))


def vectorize_copies(module: ir.Module) -> None:
    """Buffer copies (slices, pads, concatenations that bufferization turned into linalg.copy) as
    vector moves of up to VECTOR_ELEMENTS along the innermost dim, tiled so the vector divides it.

    Left to convert-linalg-to-loops they copied one float at a time: the 9-window gather of a 3x3
    convolution's columns moved 58 MB in 42 ms. Only the copies are vectorized here: every other
    op was tiled and vectorized on tensors, and an untiled one would become one huge vector.
    """
    copies = []

    def visit(op):
        if op.name == "linalg.copy":
            copies.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for n, op in enumerate(copies):
        shape = ir.ShapedType(op.operands[1].type).shape
        if not shape or min(shape) < 0 or shape[-1] < 2:
            continue
        sizes = [1] * (len(shape) - 1) + [largest_divisor(shape[-1], VECTOR_ELEMENTS)]
        sizes = [0 if s == d else s for s, d in zip(sizes, shape)]
        op.attributes[TILE_ID_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
        commands = [f"%c = transform.structured.match attributes{{{TILE_ID_ATTR} = {n} : i64}} in %root "
                    ": (!transform.any_op) -> !transform.any_op"]
        handle = "%c"
        if any(sizes):
            commands.append(_tile_command("%ct", handle, sizes))
            handle = "%ct"
        commands.append(f"transform.structured.vectorize {handle} : !transform.any_op")
        try:
            run_transform(module, "\n".join(commands))
        except (ir.MLIRError, ValueError):
            pass  # the vectorizer refused this copy (seen in a 3-d max pool): it stays a loop of scalar copies
