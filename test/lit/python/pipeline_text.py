# RUN: %PYTHON %s | FileCheck %s
# pipeline.py prints the pipeline it runs, and npu-opt accepts that text; the torch-mlir stage is
# included only for torch-dialect input.

from npu_mlir.pipeline import PipelineOptions, PipelineError, pipeline_text

# CHECK: builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline, ascend-propagate-nan, ascend-split-index-checks, linalg-fuse-elementwise-ops, canonicalize, cse, ascend-attach-target{chip=Ascend910B1}, ascend-raise-linalg, canonicalize, cse, ascend-read-stored-formats, ascend-assign-formats, cse, ascend-fuse{max-ops=64 epilogue=true}, canonicalize, ascend-verify-host, ascend-tile, ascend-plan-memory)
print(pipeline_text(PipelineOptions()))
# CHECK: builtin.module(ascend-propagate-nan, ascend-split-index-checks, linalg-fuse-elementwise-ops, canonicalize, cse, ascend-attach-target{chip=Ascend910B1}, ascend-raise-linalg, canonicalize, cse, ascend-fuse{max-ops=8 epilogue=false}, canonicalize)
print(pipeline_text(PipelineOptions(from_torch=False, formats=False, max_kernel_ops=8, epilogue=False, until="kernels")))
# CHECK: ERR03003 GRAPH unknown stage 'codegen'
try:
    pipeline_text(PipelineOptions(until="codegen"))
except PipelineError as err:
    print(err)
