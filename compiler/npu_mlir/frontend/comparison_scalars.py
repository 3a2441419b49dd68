"""Give each comparison with a number the number in the tensor's kind before torch-mlir folds it.

torch-mlir's folders of `aten.{lt,le,gt,ge,eq,ne}.Scalar` on a constant-valued tensor are wrong
(measured on 20261001): a float tensor compared with an integer number folds as if the comparison
were false or true whatever the values (full_like(x, -2.5) < 0 folded to false, > 0 to true; a
0-d tensor literal's comparison flipped between runs), and an integer tensor compared with a float
number crashes the process in the folder. The graphs our decompositions build have such constants
(a Python divisor as a 0-d tensor: int32 // 2.5 gave 7 // 2.5 = 1). With the number made a float
for a float tensor, and an integer tensor compared in the dtype torch compares it in (result_type
of the tensor and the number), the folders are right; the comparison's value is unchanged.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten
COMPARISONS = (aten.lt.Scalar, aten.le.Scalar, aten.gt.Scalar, aten.ge.Scalar, aten.eq.Scalar, aten.ne.Scalar)


def comparison_scalars_in_tensor_kind(gm: torch.fx.GraphModule) -> int:
    """Rewrite the comparisons of `gm` in place; returns how many changed."""
    graph, changed = gm.graph, 0
    for node in [n for n in graph.nodes if n.target in COMPARISONS]:
        tensor, number = node.args[0], node.args[1]
        value = tensor.meta.get("val") if isinstance(tensor, torch.fx.Node) else None
        if not isinstance(value, torch.Tensor) or not isinstance(number, (bool, int, float)):
            continue
        if value.dtype.is_floating_point and not isinstance(number, float):
            node.args = (tensor, float(number), *node.args[2:])
        elif not value.dtype.is_floating_point and isinstance(number, float):
            dtype = torch.result_type(value, number)
            with graph.inserting_before(node):
                widened = graph.call_function(aten._to_copy.default, (tensor,), {"dtype": dtype})
            widened.meta["val"] = value.to(dtype)
            node.args = (widened, number, *node.args[2:])
        else:
            continue
        changed += 1
    if changed:
        gm.recompile()
    return changed
