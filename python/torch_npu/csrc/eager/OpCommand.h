// OpCommand: the C++ face of the eager path, for custom ops and kernels written in C++.
//
//   std::vector<at::Tensor> r = OpCommand().Name("aten::add.Tensor").Input(x).Input(y).Attr("alpha", 2.0).Run();
//   OpCommand().Name("aten::mul.Tensor").Input(x).Input(y).Output(out).Run();  // written into out
//
// Run() keys, compiles (once) and launches exactly as a dispatched call does (EagerDispatch.h),
// whether or not the op is listed in npu_native_functions.yaml. Tensor arguments are filled from
// Input() in schema order, other arguments from Attr() by name or from the schema's default.
// torch_npu's own ops ("npu::npu_rms_norm") run the same way: their PrivateUse1 kernels check the
// arguments and call OpCommand on themselves, which compiles their reference
// (compiler/npu_mlir/frontend/references/__init__.py) without going through the dispatcher again.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <utility>
#include <vector>

namespace torch_npu::eager {

class OpCommand {
 public:
  // "aten::add.Tensor", "aten::relu" (default overload) or "npu::npu_swiglu".
  OpCommand& Name(std::string qualifiedName);
  OpCommand& Input(const at::Tensor& tensor);
  OpCommand& Attr(const std::string& name, c10::IValue value);
  // The result goes into `tensor` (resized as out= does); one call per result, in order.
  OpCommand& Output(const at::Tensor& tensor);
  // Runs on the current stream; returns the results (the Output() tensors when given).
  std::vector<at::Tensor> Run();

 private:
  std::string name_;
  std::vector<at::Tensor> inputs_;
  std::vector<std::pair<std::string, c10::IValue>> attrs_;
  std::vector<at::Tensor> outputs_;
};

}  // namespace torch_npu::eager
