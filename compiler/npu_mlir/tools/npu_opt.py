"""npu-opt: run ascend and upstream MLIR passes over a file, like mlir-opt.

  npu-opt in.mlir --pass-pipeline='builtin.module(ascend-raise-linalg, canonicalize, ascend-fuse)'
  npu-opt in.mlir --ascend-raise-linalg --canonicalize --ascend-fuse=max-ops=8
Any `--<pass>[=<options>]` flag that is not an npu-opt option is a pass (ours or upstream), run
in command-line order. Exit status is 1 when parsing, verification or a pass fails; the
diagnostics go to stderr as `file:line:col: error: message`.
"""

import argparse
import os
import sys
from collections.abc import Sequence

from torch_mlir import ir

from ..dialects.ascend import load_ascend
from ..passes import registry
from . import diagnostics
from .pass_pipeline import (
    PipelineSyntaxError, build_pass_manager, element_name, split_elements, strip_module_anchor,
)

SPLIT_MARKER = "// -----"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="npu-opt", description=__doc__.split("\n")[0],
                                epilog="Passes: see --list-passes; any upstream MLIR pass name works as a flag too.")
    p.add_argument("input", nargs="?", default="-", help="input .mlir file (default: stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file (default: stdout)")
    p.add_argument("--pass-pipeline", default=None, help="textual pipeline, e.g. 'builtin.module(ascend-fuse)'")
    p.add_argument("--split-input-file", action="store_true", help=f"process chunks separated by '{SPLIT_MARKER}' separately")
    p.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* comments")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass (to stderr)")
    p.add_argument("--mlir-print-op-generic", action="store_true", help="print ops in generic form")
    p.add_argument("--list-passes", action="store_true", help="list the npu_mlir passes and their options")
    return p


def _pass_flags(extra: list[str]) -> list[str]:
    """`--ascend-fuse=max-ops=8 epilogue=false` -> `ascend-fuse{max-ops=8 epilogue=false}`."""
    elements = []
    for flag in extra:
        if not flag.startswith("--") or len(flag) < 3:
            raise PipelineSyntaxError(f"unexpected argument {flag!r}; passes are given as --<pass-name>")
        name, eq, options = flag[2:].partition("=")
        elements.append(f"{name}{{{options.strip(chr(34) + chr(39))}}}" if eq else name)
    return elements


def list_passes(out) -> None:
    for info in registry.PASSES.values():
        print(f"  --{info.name}\n      {info.summary}", file=out)
        for option, help_text in info.options.items():
            print(f"      {option}=<value>  {help_text}", file=out)


def process_chunk(text: str, first_line: int, elements: list[str], args: argparse.Namespace,
                  filename: str) -> tuple[str | None, list[str]]:
    """Parse, run and print one buffer; return (output or None, messages for stderr)."""
    # Blank lines keep parser line numbers equal to the original file's.
    padded = "\n" * (first_line - 1) + text
    with ir.Context() as ctx, ir.Location.unknown():
        load_ascend(ctx)
        collector = diagnostics.Collector(ctx)
        output = None
        try:
            module = ir.Module.parse(padded)
            pm = build_pass_manager(elements)
            if args.mlir_print_ir_after_all:
                pm.enable_ir_printing(print_after_all=True, print_generic_op_form=args.mlir_print_op_generic)
            pm.run(module.operation)
            output = module.operation.get_asm(print_generic_op_form=args.mlir_print_op_generic)
        except ir.MLIRError as exc:
            collector.add_error(exc)
        except (ValueError, PipelineSyntaxError) as exc:  # bad pipeline text / pass options
            return None, [f"npu-opt: error: {exc}"]
        collector.detach()
        seen = collector.diags
    if args.verify_diagnostics:
        problems = diagnostics.verify(diagnostics.expectations(padded), seen, filename)
        return (output or "", problems) if not problems else (None, problems)
    messages = [d.render(filename) for d in seen]
    return output, messages


def split_input(source: str, split: bool) -> list[tuple[str, int]]:
    """Chunks of `source` with the 1-based line each starts on."""
    if not split:
        return [(source, 1)]
    chunks, lines, start = [], [], 1
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        if line.startswith(SPLIT_MARKER):
            chunks.append(("".join(lines), start))
            lines, start = [], number + 1
        else:
            lines.append(line)
    chunks.append(("".join(lines), start))
    return chunks


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`npu-opt ... | head`): silence the flush at exit, as mlir-opt would.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _main(argv: Sequence[str] | None) -> int:
    args, extra = _parser().parse_known_args(argv)
    if args.list_passes:
        list_passes(sys.stdout)
        return 0
    try:
        flags = _pass_flags(extra)
        if args.pass_pipeline is not None and flags:
            raise PipelineSyntaxError("give passes either with --pass-pipeline or as flags, not both")
        elements = split_elements(strip_module_anchor(args.pass_pipeline)) if args.pass_pipeline else flags
        for name, options in map(element_name, elements):
            if name in registry.PASSES:
                registry.bind_options(name, options)  # fail before reading input
    except (PipelineSyntaxError, registry.PassOptionError) as exc:
        print(f"npu-opt: error: {exc}", file=sys.stderr)
        return 1
    try:
        source = sys.stdin.read() if args.input == "-" else open(args.input).read()
    except OSError as exc:
        print(f"npu-opt: error: cannot read {args.input}: {exc.strerror}", file=sys.stderr)
        return 1
    filename = "<stdin>" if args.input == "-" else args.input
    outputs, failed = [], False
    for chunk, first_line in split_input(source, args.split_input_file):
        output, messages = process_chunk(chunk, first_line, elements, args, filename)
        for message in messages:
            print(message, file=sys.stderr)
        failed |= output is None
        if output is not None:
            outputs.append(output.rstrip("\n") + "\n")
    text = f"{SPLIT_MARKER}\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
