"""npu-translate: print the AscendC kernel source or the ACL host code of a tiled module.

  npu-opt model.mlir --ascend-tile --ascend-plan-memory | npu-translate --emit-ascendc
  npu-translate tiled.mlir --emit-acl -o host.cpp
The input must have been through ascend-tile (each ascend.kernel carries its tiling record).
Exit status is 1 when parsing, verification or emission fails; the diagnostic goes to stderr as
`file:line:col: error: message`, located at the kernel or function that could not be emitted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from torch_mlir import ir

from ..dialects.ascend import load_ascend
from ..targets.ascendc import acl
from ..targets.ascendc import emit as ascendc
from ..targets.ascendc.emit import CodegenError
from . import diagnostics

SPLIT_MARKER = "// -----"
EMITTERS: dict[str, Callable[[ir.Operation], str]] = {
    "emit_ascendc": ascendc.emit_module,
    "emit_acl": acl.emit_module,
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="npu-translate", description=__doc__.split("\n")[0])
    p.add_argument("input", nargs="?", default="-", help="input .mlir file (default: stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file (default: stdout)")
    p.add_argument("--split-input-file", action="store_true",
                   help=f"translate chunks separated by '{SPLIT_MARKER}' separately")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--emit-ascendc", action="store_true", help="AscendC C++ for each ascend.kernel")
    mode.add_argument("--emit-acl", action="store_true", help="ACL host code launching the kernels")
    return p


def translate(text: str, emit: Callable[[ir.Operation], str], filename: str,
              first_line: int = 1) -> tuple[str | None, list[str]]:
    """Translate one buffer: (output or None, error lines for stderr)."""
    with ir.Context() as ctx, ir.Location.unknown():
        load_ascend(ctx)
        collector = diagnostics.Collector(ctx)
        output = None
        try:
            module = ir.Module.parse("\n" * (first_line - 1) + text)
            output = emit(module.operation)
        except ir.MLIRError as exc:
            collector.add_error(exc)
        except CodegenError as exc:
            loc = exc.location or ir.Location.unknown()
            collector.detach()
            diag = diagnostics.from_mlir(_Located(loc, str(exc)))[0]
            return None, [diag.render(filename)]
        collector.detach()
    errors = [d.render(filename) for d in collector.diags if d.severity == "error"]
    return (output if not errors else None), errors


class _Located:
    """The shape diagnostics.from_mlir reads: an error message at a location."""

    def __init__(self, location: ir.Location, message: str):
        self.location, self.message = location, message
        self.severity = ir.DiagnosticSeverity.ERROR
        self.notes: list = []


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    emit = EMITTERS["emit_ascendc" if args.emit_ascendc else "emit_acl"]
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    except OSError as exc:
        print(f"npu-translate: error: ERR03008 GRAPH cannot read {filename}: {exc.strerror}", file=sys.stderr)
        return 1
    chunks = [(text, 1)]
    if args.split_input_file:
        chunks, line = [], 1
        for part in text.split(SPLIT_MARKER):
            chunks.append((part, line))
            line += part.count("\n")
    outputs, failed = [], False
    for chunk, first_line in chunks:
        out, errors = translate(chunk, emit, filename, first_line)
        for e in errors:
            print(e, file=sys.stderr)
        if out is None:
            failed = True
        else:
            outputs.append(out)
    result = f"\n{SPLIT_MARKER}\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(result)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
