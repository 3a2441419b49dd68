"""The compiler's layout rules (DESIGN.md section 2) that a reviewer would otherwise check by eye.

- npu_mlir never imports torch_npu: the compiler runs in compile workers that must not load the
  device runtime, and dependencies point one way (torch_npu -> npu_mlir).
- Every pass in the registry imports and has a lit file under test/lit that runs it by its name.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import npu_mlir
from npu_mlir.passes.registry import PASSES

PACKAGE = Path(npu_mlir.__file__).resolve().parent
LIT = Path(__file__).resolve().parents[2] / "lit"

# Passes registered without a lit file of their own (none today). A pass listed here is a gap to
# close, not a permanent exemption: say why next to its name.
PASSES_WITHOUT_LIT: frozenset[str] = frozenset()


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Absolute module names imported anywhere in `tree` (also inside functions and importlib calls)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ast.unparse(node.func) in ("importlib.import_module", "import_module", "__import__")):
            found.append((node.lineno, node.args[0].value))
    return found


def test_npu_mlir_never_imports_torch_npu() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 50, f"found only {len(sources)} sources under {PACKAGE}"
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
                 for path in sources
                 for line, name in _imported_modules(ast.parse(path.read_text(), str(path)))
                 if name == "torch_npu" or name.startswith("torch_npu.")]
    assert not offenders, "npu_mlir must not import torch_npu:\n" + "\n".join(offenders)


def _lit_run_lines() -> list[tuple[Path, str]]:
    lines = []
    for path in sorted(LIT.rglob("*")):
        if path.suffix in (".mlir", ".py") and "Output" not in path.parts and path.name != "lit.cfg.py":
            lines += [(path, line) for line in path.read_text().splitlines() if "RUN:" in line]
    return lines


@pytest.mark.parametrize("name", sorted(PASSES))
def test_registered_pass_imports_and_has_a_lit_file(name: str) -> None:
    module, func = PASSES[name].target.split(":")
    assert callable(getattr(importlib.import_module(module), func)), f"{PASSES[name].target} is not callable"
    token = re.compile(rf"(?<![\w-])(?:--)?{re.escape(name)}(?![\w-])")  # --name, or in a pipeline
    runs = [path for path, line in _lit_run_lines() if "npu-opt" in line and token.search(line)]
    if name in PASSES_WITHOUT_LIT:
        assert not runs, f"{name} has a lit file now ({runs[0].relative_to(LIT)}): drop it from PASSES_WITHOUT_LIT"
    else:
        assert runs, f"no lit file under test/lit runs {name} (npu-opt --{name}): add test/lit/Passes/{name}.mlir"


def test_allow_list_names_registered_passes() -> None:
    assert PASSES_WITHOUT_LIT <= set(PASSES), sorted(PASSES_WITHOUT_LIT - set(PASSES))
