"""Command-line tools: npu-opt and npu-translate."""
