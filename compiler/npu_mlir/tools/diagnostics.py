"""Diagnostics for npu-opt: collect them, print them like mlir-opt, check `expected-*` lines.

`--verify-diagnostics` follows mlir-opt: a line `// expected-error@+1 {{text}}` expects an error
whose message contains `text` on the next line (`@-N`, `@above`, `@below`, or none for the same
line); every diagnostic must be expected and every expectation must be met.
"""

import re
from dataclasses import dataclass

from torch_mlir import ir

_LOC = re.compile(r'"[^"]*":(\d+):(\d+)')
_EXPECT = re.compile(r"expected-(error|warning|remark|note)(?:@(above|below|[+-]\d+))?\s*\{\{(.*?)\}\}")
_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.REMARK: "remark",
    ir.DiagnosticSeverity.NOTE: "note",
}


@dataclass
class Diag:
    severity: str
    line: int  # 0 when the location has no line
    col: int
    message: str

    def render(self, filename: str) -> str:
        where = f"{filename}:{self.line}:{self.col}" if self.line else filename
        return f"{where}: {self.severity}: {self.message}"


def from_mlir(d: object) -> list[Diag]:
    """Flatten an ir.Diagnostic / DiagnosticInfo and its notes into Diags."""
    match = _LOC.search(str(d.location))
    line, col = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    out = [Diag(_SEVERITY.get(d.severity, "error"), line, col, str(d.message))]
    for note in d.notes:
        out.extend(from_mlir(note))
    return out


class Collector:
    """Attach to a Context and keep every diagnostic instead of letting MLIR print it."""

    def __init__(self, ctx: ir.Context):
        self.diags: list[Diag] = []
        self._handler = ctx.attach_diagnostic_handler(self._on)

    def _on(self, d: ir.Diagnostic) -> bool:
        self.diags.extend(from_mlir(d))
        return True

    def add_error(self, exc: ir.MLIRError) -> None:
        """Add what an MLIRError captured, unless the handler already saw it."""
        for info in exc.error_diagnostics:
            for d in from_mlir(info):
                if d not in self.diags:
                    self.diags.append(d)
        if not self.diags:
            self.diags.append(Diag("error", 0, 0, exc.message))

    def detach(self) -> None:
        self._handler.detach()


def expectations(text: str) -> list[Diag]:
    """The `expected-*` directives in `text` (line numbers as in `text`)."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        for m in _EXPECT.finditer(line):
            severity, where, message = m.groups()
            target = number
            if where == "above":
                target -= 1
            elif where == "below":
                target += 1
            elif where:
                target += int(where)
            out.append(Diag(severity, target, 0, message))
    return out


def verify(expected: list[Diag], seen: list[Diag], filename: str) -> list[str]:
    """Return mlir-opt style complaints; empty when `seen` matches `expected` exactly."""
    # mlir-opt does not attach the op dump to diagnostics while verifying them; neither do we.
    pending = [d for d in seen if not d.message.startswith("see current operation:")]
    problems = []
    for e in expected:
        hit = next(
            (d for d in pending if d.severity == e.severity and d.line == e.line and e.message in d.message),
            None,
        )
        if hit is None:
            problems.append(f"{filename}:{e.line}: error: expected {e.severity} \"{e.message}\" was not produced")
        else:
            pending.remove(hit)
    for d in pending:
        problems.append(f"{d.render(filename)}  <- unexpected {d.severity}")
    return problems
