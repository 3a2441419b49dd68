"""Split a textual pass pipeline into upstream runs and npu_mlir Python passes.

MLIR's textual pipeline parser cannot see Python passes (PLATFORM-NOTES), so
`builtin.module(canonicalize, ascend-fuse{max-ops=8}, func.func(cse))` becomes
`pm.add("canonicalize")`, `pm.add(<ascend-fuse>)`, `pm.add("func.func(cse)")`: consecutive
upstream elements stay together so MLIR still nests and schedules them itself.
"""

from torch_mlir import passmanager

from ..errors import INVALID_PARAMETER, CompilerError
from ..passes import registry


class PipelineSyntaxError(CompilerError, ValueError):
    """Pipeline text npu-opt cannot split into pass elements."""

    code = INVALID_PARAMETER


def split_elements(text: str) -> list[str]:
    """Split `a, b{x=1}, c(d, e)` at top-level commas."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise PipelineSyntaxError(f"unbalanced '{ch}' at offset {i} in pipeline {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise PipelineSyntaxError(f"unbalanced brackets in pipeline {text!r}")
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def strip_module_anchor(text: str) -> str:
    """`builtin.module(a, b)` -> `a, b`; a bare list is taken as module-level already."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        return text[len("builtin.module(") : -1]
    return text


def parse_options(text: str) -> dict[str, str]:
    """`max-ops=8 epilogue=false` (the body of `{...}`) -> {"max-ops": "8", "epilogue": "false"}."""
    options = {}
    for item in text.split():
        key, _, value = item.partition("=")
        options[key] = value.strip("'\"")
    return options


def element_name(element: str) -> tuple[str, dict[str, str]]:
    name, brace, rest = element.partition("{")
    if brace and not rest.endswith("}"):
        raise PipelineSyntaxError(f"pass options of {name!r} must end with '}}'")
    return name.strip(), parse_options(rest[:-1]) if brace else {}


def build_pass_manager(elements: list[str]) -> passmanager.PassManager:
    """A module-level PassManager running `elements` (pipeline elements) in order."""
    pm = passmanager.PassManager("builtin.module")
    upstream: list[str] = []

    def flush() -> None:
        if upstream:
            if any(e.startswith("torch") for e in upstream):
                import torch_mlir.dialects.torch  # noqa: F401  registers the torch-mlir pipelines
            pm.add(", ".join(upstream))
            upstream.clear()

    for element in elements:
        name, options = element_name(element)
        if name in registry.PASSES:
            flush()
            pm.add(registry.external_pass(name, options), name=name, argument=name)
        else:
            upstream.append(element)
    flush()
    return pm
