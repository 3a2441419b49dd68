"""Text builder for the tile-level program `ascend-lower-tiles` writes into a kernel.

The program is generated as MLIR text and parsed back: the ascend ops print in generic form only,
and text keeps each generator a readable template. Buffers are memrefs: global tensors become
`bufferization.to_buffer` of the kernel's arguments (viewed at the shape the tiling works on
with `memref.reinterpret_cast`), results are `memref.alloc`s returned with
`bufferization.to_tensor`, so the kernel keeps its tensor signature and its launches stay valid;
on-chip buffers are `ascend.alloc`s; tiles are `memref.subview`s.
"""

from __future__ import annotations

from math import ceil, prod

from torch_mlir import ir

from ...dialects.ascend.kernel_ops import RESULT_TYPE_RUNS, segment_sizes

Size = int | str  # a static extent or the SSA name of an index value


def space_attr(space: str) -> str:
    return f'#ascend.memspace<"{space}">'


def memref_type(shape: list[Size], elt: str, space: str = "gm", strides: list[int] | None = None,
                dynamic_offset: bool = False) -> str:
    dims = "".join(f"{d if isinstance(d, int) else '?'}x" for d in shape)
    parts = [f"{dims}{elt}"]
    if strides is not None:
        parts.append(f"strided<[{', '.join(map(str, strides))}]{', offset: ?' if dynamic_offset else ''}>")
    if space != "gm":
        parts.append(space_attr(space))
    return f"memref<{', '.join(parts)}>"


def contiguous_strides(shape: list[int]) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return list(reversed(strides))


class View:
    """A memref value with its static strides, for building subviews of it."""

    def __init__(self, name: str, shape: list[Size], elt: str, space: str, strides: list[int],
                 dynamic_offset: bool = False, identity: bool = True):
        self.name, self.shape, self.elt, self.space = name, shape, elt, space
        self.strides, self.dynamic_offset, self.identity = strides, dynamic_offset, identity

    @property
    def type(self) -> str:
        if self.identity:
            return memref_type(self.shape, self.elt, self.space)
        return memref_type(self.shape, self.elt, self.space, self.strides, self.dynamic_offset)


class Program:
    """Lines of a kernel body, with index constants hoisted to the top (they dominate every use)."""

    def __init__(self):
        self.prologue: list[str] = []
        self.lines: list[str] = []
        self._consts: dict[int, str] = {}
        self._n = 0

    def fresh(self, hint: str) -> str:
        self._n += 1
        return f"%{hint}{self._n}"

    def index(self, value: int) -> str:
        if value not in self._consts:
            self._consts[value] = f"%c{value}"
            self.prologue.append(f"%c{value} = arith.constant {value} : index")
        return self._consts[value]

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def value(self, expr: str, hint: str = "v") -> str:
        name = self.fresh(hint)
        self.emit(f"{name} = {expr}")
        return name

    def arith(self, op: str, a: Size, b: Size, hint: str = "i") -> Size:
        if isinstance(a, int) and isinstance(b, int):  # fold: index math on static sizes
            return {"addi": a + b, "subi": a - b, "muli": a * b, "divui": a // b if b else 0,
                    "remui": a % b if b else 0, "minsi": min(a, b)}[op]
        a = self.index(a) if isinstance(a, int) else a
        b = self.index(b) if isinstance(b, int) else b
        return self.value(f"arith.{op} {a}, {b} : index", hint)

    def alloc(self, shape: list[int], elt: str, space: str, elem_bytes: int, depth: int, align: int,
              offset: int | None = None) -> View:
        size = ceil(prod(shape) * elem_bytes / align) * align
        extra = f", offset = {offset} : i64" if offset is not None else ""
        v = View(self.fresh(space), list(shape), elt, space, contiguous_strides(shape))
        self.emit(f'{v.name} = "ascend.alloc"() {{space = {space_attr(space)}, bytes = {size} : i64, '
                  f"depth = {depth} : i64{extra}}} : () -> {v.type}")
        return v

    def global_view(self, tensor_name: str, tensor_type: str, shape: list[int], elt: str, view_shape: list[int]) -> View:
        buf = View(self.fresh("gm"), shape, elt, "gm", contiguous_strides(shape))
        self.emit(f"{buf.name} = bufferization.to_buffer {tensor_name} : {tensor_type} to {buf.type}")
        return self.reshape(buf, view_shape)

    def reshape(self, buf: View, view_shape: list[int]) -> View:
        if list(view_shape) == list(buf.shape):
            return buf
        strides = contiguous_strides(view_shape)
        v = View(self.fresh("view"), list(view_shape), buf.elt, "gm", strides, identity=False)
        self.emit(f"{v.name} = memref.reinterpret_cast {buf.name} to offset: [0], sizes: {list(view_shape)}, "
                  f"strides: {strides} : {buf.type} to {v.type}")
        return v

    def subview(self, src: View, offsets: list[Size], sizes: list[Size]) -> View:
        dynamic = src.dynamic_offset or any(not isinstance(o, int) for o in offsets)
        static_offset = 0 if dynamic else sum(o * s for o, s in zip(offsets, src.strides))
        v = View(self.fresh("tile"), list(sizes), src.elt, src.space, src.strides, dynamic, identity=False)
        layout = f"strided<[{', '.join(map(str, src.strides))}]"
        layout += ", offset: ?>" if dynamic else (f", offset: {static_offset}>" if static_offset else ">")
        dims = "".join(f"{d if isinstance(d, int) else '?'}x" for d in sizes)
        space = f", {space_attr(src.space)}" if src.space != "gm" else ""
        result = f"memref<{dims}{src.elt}, {layout}{space}>"
        fmt = lambda xs: ", ".join(str(x) for x in xs)
        self.emit(f"{v.name} = memref.subview {src.name}[{fmt(offsets)}] [{fmt(sizes)}] [{fmt([1] * len(sizes))}] "
                  f": {src.type} to {result}")
        v.result_type = result
        return v

    def sync(self, src_pipe: str, dst_pipe: str, event: int = 0) -> None:
        for op in ("set_flag", "wait_flag"):
            self.emit(f'"ascend.{op}"() {{src_pipe = "{src_pipe}", dst_pipe = "{dst_pipe}", '
                      f"event_id = {event} : i64}} : () -> ()")

    def op(self, name: str, operands: list[tuple[str, str]], attrs: str = "") -> None:
        """A result-less tile op; `operands` are (ssa name, type) pairs."""
        names = ", ".join(n for n, _ in operands)
        types = ", ".join(t for _, t in operands)
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.emit(f'"ascend.{name}"({names}){attr_text} : ({types}) -> ()')


def vtype(v: View) -> str:
    """The type of a view as written by Program (subviews carry their computed result type)."""
    return getattr(v, "result_type", None) or v.type


def kernel_text(kernel: ir.Operation, program: Program, results: list[tuple[str, str]]) -> str:
    """The generic-form text of `kernel` with `program` as its body, yielding `results`."""
    block = kernel.regions[0].blocks[0]
    args = ", ".join(f"%arg{i}: {a.type}" for i, a in enumerate(block.arguments))
    attrs = ", ".join(f"{name} = {kernel.attributes[name]}" for name in kernel.attributes)
    body = "\n".join(program.prologue + program.lines)
    names = ", ".join(n for n, _ in results)
    types = ", ".join(t for _, t in results)
    sizes = ", ".join(map(str, segment_sizes([t for _, t in results], RESULT_TYPE_RUNS, "an ascend.yield", "value")))
    segments = f"{{operandSegmentSizes = array<i32: {sizes}>}}"
    return (f'"ascend.kernel"() ({{\n^bb0({args}):\n{body}\n"ascend.yield"({names}) {segments} : ({types}) -> ()\n'
            f"}}) {{{attrs}}} : () -> () {kernel.location}")
