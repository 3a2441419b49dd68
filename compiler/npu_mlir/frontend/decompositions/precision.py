"""The half-precision dtypes, which torch's CPU kernels compute in float32 (their opmath type) and
round once; the decompositions widen them alike."""

from __future__ import annotations

import torch

HALF = (torch.float16, torch.bfloat16)
