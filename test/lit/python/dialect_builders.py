# RUN: %PYTHON %s | FileCheck %s
# The Python builders of the ascend dialect: defaults, explicit false flags, optional operands,
# launches over arguments of several types, and verifier errors surfacing as diagnostics.

from torch_mlir import ir

from npu_mlir.dialects.ascend import (
    BinaryOp, FormatAttr, KernelOp, LaunchOp, MatmulOp, MemSpaceAttr, YieldOp, load_ascend, storage_shape,
)

with ir.Context() as ctx, ir.Location.unknown():
    load_ascend(ctx)
    load_ascend(ctx)  # idempotent
    f32 = ir.F32Type.get()
    t = lambda *shape: ir.RankedTensorType.get(list(shape), f32)
    module = ir.Module.parse("func.func private @f(tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>, f32)")
    func = module.body.operations[0]
    block = func.regions[0].blocks.append(t(4, 8), t(8, 3), t(3), f32)
    a, b, bias, s = block.arguments
    with ir.InsertionPoint(block):
        # CHECK: "ascend.matmul"(%arg0, %arg1) {acc_type = f32, transpose_a = false, transpose_b = false}
        plain = MatmulOp(a, b, ir.TypeAttr.get(f32), t(4, 3))
        print(plain)
        # CHECK: "ascend.matmul"(%arg0, %arg1, %arg2) {acc_type = f32, transpose_a = false, transpose_b = false}
        with_bias = MatmulOp(a, b, ir.TypeAttr.get(f32), t(4, 3), bias=bias, transpose_a=ir.BoolAttr.get(False))
        print(with_bias)
        # CHECK: bias None / bias %arg2
        print("bias", plain.bias, "/ bias", with_bias.bias.get_name())
        # CHECK: "ascend.binary"(%arg0, %arg3) {kind = "mul"} : (tensor<4x8xf32>, f32) -> tensor<4x8xf32>
        print(BinaryOp(a, s, ir.StringAttr.get("mul"), t(4, 8)))
        func_return = ir.Operation.create("func.return")
    # CHECK: #ascend.format<"FRACTAL_NZ"> #ascend.memspace<"l0c">
    print(FormatAttr.of("FRACTAL_NZ"), MemSpaceAttr.of("l0c"))
    # CHECK: [2, 3, 16, 16] [1, 1, 4, 4, 16] [9, 1, 16, 16] [2, 2, 16, 32]
    print(storage_shape("FRACTAL_NZ", [33, 20]), storage_shape("NC1HWC0", [1, 3, 4, 4]),
          storage_shape("FRACTAL_Z", [8, 3, 3, 3]), storage_shape("FRACTAL_NZ", [32, 40], bit_width=8))

    kernel_type = ir.FunctionType.get([t(4, 8), f32, t(4, 8)], [t(4, 8)])
    with ir.InsertionPoint(func):
        kernel = KernelOp(ir.StringAttr.get("k"), ir.TypeAttr.get(kernel_type), ir.StringAttr.get("aiv"),
                          ir.StringAttr.get("elementwise"))
    kblock = kernel.body.blocks.append(t(4, 8), f32, t(4, 8))
    with ir.InsertionPoint(kblock):
        x, y, z = kblock.arguments
        out = BinaryOp(BinaryOp(x, y, ir.StringAttr.get("mul"), t(4, 8)).result, z, ir.StringAttr.get("add"), t(4, 8))
        YieldOp([out.result])
    with ir.InsertionPoint(func_return):
        launch = LaunchOp(ir.FlatSymbolRefAttr.get("k"), [a, s, a], [t(4, 8)])
    # CHECK: block_dim = 1 : i64, core_type = "aiv"{{.*}}tiling = {}
    print(str(kernel).splitlines()[-1])
    # Three runs of argument types: tensor, scalar, tensor.
    # CHECK: "ascend.launch"(%arg0, %arg3, %arg0) {callee = @k, operandSegmentSizes = array<i32: 1, 1, 1, 0,
    print(launch)
    # CHECK: verified True
    print("verified", module.operation.verify())

    # CHECK: error: 'ascend.matmul' op contraction dims differ: lhs K = 8, rhs K = 4
    with ir.InsertionPoint(func_return):
        MatmulOp(a, a, ir.TypeAttr.get(f32), t(4, 8))
    try:
        module.operation.verify()
    except ir.MLIRError as err:
        print("error:", err.error_diagnostics[0].message)
