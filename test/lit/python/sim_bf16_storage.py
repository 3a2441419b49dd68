# RUN: %PYTHON %s | FileCheck %s
# bf16 values in a lowered kernel move as i16: a bf16 phi (block argument) needs __truncsfbf2 on
# x86, which the JIT cannot resolve. Constants are reinterpreted in place; bf16<->i16 bitcasts left
# by arith-expand vanish. A kernel that still computes on bf16 is not touched.

from torch_mlir import ir

from npu_mlir.targets.sim.bf16_storage import store_bf16_as_i16

MOVES = """
llvm.func @pad_or_copy(%src: !llvm.ptr, %dst: !llvm.ptr, %in_range: i1) {
  %zero = llvm.mlir.constant(dense<0.0> : vector<16xbf16>) : vector<16xbf16>
  llvm.cond_br %in_range, ^load, ^join(%zero : vector<16xbf16>)
^load:
  %row = llvm.getelementptr %src[16] : (!llvm.ptr) -> !llvm.ptr, bf16
  %v = llvm.load %row : !llvm.ptr -> vector<16xbf16>
  llvm.br ^join(%v : vector<16xbf16>)
^join(%tile: vector<16xbf16>):
  llvm.store %tile, %dst : vector<16xbf16>, !llvm.ptr
  llvm.return
}
llvm.func @widen(%src: !llvm.ptr) -> i16 {
  %x = llvm.load %src : !llvm.ptr -> bf16
  %bits = llvm.bitcast %x : bf16 to i16
  llvm.return %bits : i16
}
"""

COMPUTES = """
llvm.func @adds(%src: !llvm.ptr) {
  %x = llvm.load %src : !llvm.ptr -> bf16
  %y = llvm.fadd %x, %x : bf16
  llvm.store %y, %src : bf16, !llvm.ptr
  llvm.return
}
"""

with ir.Context(), ir.Location.unknown():
    module = ir.Module.parse(MOVES)
    # CHECK: moves retyped True
    print("moves retyped", store_bf16_as_i16(module))
    module.operation.verify()
    # CHECK-LABEL: llvm.func @pad_or_copy
    # CHECK: %[[ZERO:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<16xbf16>) : vector<16xbf16>
    # CHECK-NEXT: %[[BITS:.*]] = llvm.bitcast %[[ZERO]] : vector<16xbf16> to vector<16xi16>
    # CHECK-NEXT: llvm.cond_br %{{.*}}, ^bb1, ^bb2(%[[BITS]] : vector<16xi16>)
    # CHECK: llvm.getelementptr %{{.*}}[16] : (!llvm.ptr) -> !llvm.ptr, i16
    # CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr -> vector<16xi16>
    # CHECK: ^bb2(%[[TILE:.*]]: vector<16xi16>):
    # CHECK-NEXT: llvm.store %[[TILE]], %{{.*}} : vector<16xi16>, !llvm.ptr
    # CHECK-LABEL: llvm.func @widen
    # CHECK-NEXT: %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
    # CHECK-NEXT: llvm.return %[[X]] : i16
    print(module)

    module = ir.Module.parse(COMPUTES)
    before = str(module)
    # CHECK: computes retyped False unchanged True
    print("computes retyped", store_bf16_as_i16(module), "unchanged", str(module) == before)
