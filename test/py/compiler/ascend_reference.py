"""A numpy reference for ascend tensor-level IR: run a module's host function, launches included.

Independent of every code generator, so tests can check that raising, format assignment and
fusion kept the program's meaning, op by op, against CPU PyTorch.
"""

import math

import numpy as np
import torch
from torch_mlir import ir

DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "bf16": np.float32,
          "i1": np.bool_, "i8": np.int8, "i32": np.int32, "i64": np.int64}
_erf = np.vectorize(math.erf, otypes=[np.float64])
UNARY = {
    "abs": np.abs, "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), "erf": _erf, "sin": np.sin,
    "cos": np.cos, "floor": np.floor, "ceil": np.ceil, "round": np.round, "not": np.logical_not,
    "silu": lambda x: x / (1 + np.exp(-x)),
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1, "tan": np.tan, "sinh": np.sinh,
    "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
          "min": np.minimum, "pow": np.power, "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
          "atan2": np.arctan2, "rem": np.fmod}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}
REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "mean": np.mean}
SCALAR_ARITH = {"arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
                "arith.divf": np.divide, "arith.negf": np.negative}


def dtype(t: ir.Type) -> type:
    return DTYPES[str(t.element_type if isinstance(t, ir.ShapedType) else t)]


def _attr(op: ir.OpView, name: str):
    a = op.attributes[name]
    if isinstance(a, ir.DenseI64ArrayAttr):
        return list(a)
    if isinstance(a, ir.StringAttr):
        return a.value
    return bool(ir.BoolAttr(a).value) if str(a.type) == "i1" else ir.IntegerAttr(a).value


def _constant(op: ir.OpView, t: ir.Type):
    value = op.attributes["value"]
    if isinstance(value, (ir.FloatAttr, ir.IntegerAttr)):
        return dtype(t)(value.value)
    return np.array(value).astype(dtype(t)).reshape(t.shape)


def _broadcast(x: np.ndarray, dims: list[int], shape: list[int]) -> np.ndarray:
    if x.ndim != len(shape):
        x = np.expand_dims(x, tuple(dims))
    return np.broadcast_to(x, shape)


def _matmul(op: ir.OpView, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _attr(op, "transpose_a"):
        a = np.swapaxes(a, -1, -2)
    if _attr(op, "transpose_b"):
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _conv(op: ir.OpView, x: np.ndarray, w: np.ndarray, bias) -> np.ndarray:
    out = torch.nn.functional.conv2d(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
                                     None if bias is None else torch.from_numpy(bias.astype(np.float64)),
                                     stride=_attr(op, "strides"), padding=_attr(op, "padding"),
                                     dilation=_attr(op, "dilations"), groups=_attr(op, "groups"))
    return out.numpy()


def evaluate_op(op: ir.OpView, args: list, module: ir.Module):
    name, out = op.operation.name, (op.results[0].type if len(op.results) else None)
    match name:
        case "arith.constant":
            return _constant(op, out)
        case "ascend.unary":
            r = UNARY[_attr(op, "kind")](args[0])
        case "ascend.binary":
            r = BINARY[_attr(op, "kind")](*args)
        case "ascend.ternary":
            a, b, c = args
            r = {"fma": lambda: a * b + c, "clamp": lambda: np.minimum(np.maximum(a, b), c),
                 "lerp": lambda: a + c * (b - a)}[_attr(op, "kind")]()
        case "ascend.cast" | "ascend.format_cast" | "arith.truncf" | "arith.extf" | "arith.sitofp":
            r = args[0]
        case "ascend.compare":
            r = COMPARE[_attr(op, "predicate")](*args)
        case "ascend.select":
            r = np.where(*args)
        case "ascend.broadcast":
            r = _broadcast(args[0], _attr(op, "dims"), out.shape)
        case "ascend.reduce":
            r = REDUCE[_attr(op, "kind")](args[0], axis=tuple(_attr(op, "dims")), keepdims=_attr(op, "keepdim"))
        case "ascend.transpose":
            r = np.transpose(args[0], _attr(op, "permutation"))
        case "ascend.matmul" | "ascend.batch_matmul":
            r = _matmul(op, args[0], args[1]) + (args[2] if len(args) > 2 else 0)
        case "ascend.conv2d":
            r = _conv(op, args[0], args[1], args[2] if len(args) > 2 else None)
        case "tensor.collapse_shape" | "tensor.expand_shape":
            r = np.reshape(args[0], out.shape)
        case "tensor.extract":  # a 0-d scalar parameter read inside a kernel
            r = np.asarray(args[0])[()]
        case "ascend.launch":
            kernel = next(k for k in module.body.operations if k.operation.name == "ascend.kernel"
                          and _attr(k, "sym_name") == ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            return run_block(kernel.regions[0].blocks[0], args, module)
        case _ if name in SCALAR_ARITH:
            r = SCALAR_ARITH[name](*args)
        case _:
            raise NotImplementedError(f"no reference for {name}")
    return np.asarray(r).astype(dtype(out)) if isinstance(out, ir.ShapedType) else dtype(out)(r)


def run_block(block: ir.Block, args: list, module: ir.Module) -> list:
    env = dict(zip(block.arguments, args))
    for op in block.operations:
        operands = [env[v] for v in op.operands]
        if op.operation.name in ("func.return", "ascend.yield"):
            return operands
        results = evaluate_op(op, operands, module)
        if op.operation.name == "ascend.launch":
            env.update(zip(op.results, results))
        else:
            env[op.results[0]] = results
    raise ValueError("block without terminator")


def run_main(module: ir.Module, inputs: list[np.ndarray]) -> list[np.ndarray]:
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    return run_block(main.regions[0].blocks[0], inputs, module)
