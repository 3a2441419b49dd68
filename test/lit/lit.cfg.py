"""lit configuration: *.mlir and *.py tests of the npu_mlir passes, emitters and tools.

Tools come from the project's .venv (console scripts `npu-opt`, `npu-translate`); `FileCheck` is
the pip `filecheck` clone, and `%PYTHON` is the interpreter lit runs under.
"""

import os
import sys

import lit.formats

config.name = "npu_mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

repo = os.path.dirname(os.path.dirname(config.test_source_root))
venv_bin = os.path.join(repo, ".venv", "bin")
config.environment["PATH"] = os.pathsep.join([venv_bin, os.environ.get("PATH", "")])
# Tracebacks from a failing pass help when a lit test fails; users only see diagnostics.
config.environment["NPU_MLIR_DEBUG"] = "1"

# Regexes: replace whole tool names only, not substrings of paths or check prefixes.
config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append((r"(?<![-\w/.])FileCheck(?![-\w])", os.path.join(venv_bin, "filecheck")))
for tool in ("npu-opt", "npu-translate"):
    config.substitutions.append((rf"(?<![-\w/.]){tool}(?![-\w])", os.path.join(venv_bin, tool)))
# Let a developer point the tools at a source tree without reinstalling.
for var in ("PYTHONPATH", "SKBUILD_EDITABLE_SKIP"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
