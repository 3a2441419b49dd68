#include "torch_npu/csrc/eager/OpCommand.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/Resize.h>

#include <algorithm>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/eager/EagerDispatch.h"

namespace torch_npu::eager {
namespace {

bool isTensorArgument(const c10::Argument& arg) {
  c10::TypePtr type = arg.real_type();
  if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return type->kind() == c10::TypeKind::TensorType;
}

std::string paramErr() { return errCode(SubModule::OPS, ErrCode::PARAM); }

}  // namespace

OpCommand& OpCommand::Name(std::string qualifiedName) {
  name_ = std::move(qualifiedName);
  return *this;
}

OpCommand& OpCommand::Input(const at::Tensor& tensor) {
  inputs_.push_back(tensor);
  return *this;
}

OpCommand& OpCommand::Attr(const std::string& name, c10::IValue value) {
  attrs_.emplace_back(name, std::move(value));
  return *this;
}

OpCommand& OpCommand::Output(const at::Tensor& tensor) {
  outputs_.push_back(tensor);
  return *this;
}

std::vector<at::Tensor> OpCommand::Run() {
  TORCH_CHECK(!name_.empty(), "OpCommand: call Name(\"aten::op.overload\") before Run()\n", paramErr());
  size_t dot = name_.find('.');
  std::string overload = dot == std::string::npos ? "" : name_.substr(dot + 1);
  auto op = c10::Dispatcher::singleton().findSchema({name_.substr(0, dot), overload});
  TORCH_CHECK(op.has_value(), "OpCommand: no operator ", name_, "; give its full name, e.g. aten::add.Tensor\n",
              errCode(SubModule::OPS, ErrCode::NOT_FOUND));
  const c10::FunctionSchema& schema = op->schema();

  torch::jit::Stack stack;
  size_t nextInput = 0, usedAttrs = 0, nextOut = 0;
  for (const c10::Argument& arg : schema.arguments()) {
    if (arg.is_out()) {
      TORCH_CHECK(nextOut < outputs_.size(), "OpCommand ", name_, ": give Output() for out argument '", arg.name(),
                  "'\n", paramErr());
      stack.emplace_back(outputs_[nextOut++]);
      continue;
    }
    auto attr = std::find_if(attrs_.begin(), attrs_.end(), [&](const auto& a) { return a.first == arg.name(); });
    if (attr != attrs_.end()) {
      stack.push_back(attr->second);
      ++usedAttrs;
    } else if (isTensorArgument(arg) && nextInput < inputs_.size()) {
      stack.emplace_back(inputs_[nextInput++]);
    } else if (arg.default_value().has_value()) {
      stack.push_back(*arg.default_value());
    } else {
      TORCH_CHECK(false, "OpCommand ", name_, ": argument '", arg.name(), "' has no value; pass it with ",
                  isTensorArgument(arg) ? "Input()" : "Attr()", "\n", paramErr());
    }
  }
  TORCH_CHECK(nextInput == inputs_.size() && usedAttrs == attrs_.size(), "OpCommand ", name_, ": ",
              inputs_.size() - nextInput, " inputs and ", attrs_.size() - usedAttrs,
              " attributes match no argument of ", schema, "\n", paramErr());
  bool hasOutArgs = nextOut > 0;

  compiledKernel(*op, &stack);

  std::vector<at::Tensor> results;
  for (c10::IValue& v : stack) results.push_back(v.toTensor());
  if (hasOutArgs || outputs_.empty()) return results;
  TORCH_CHECK(outputs_.size() == results.size(), "OpCommand ", name_, " returns ", results.size(),
              " tensors, Output() was given ", outputs_.size(), "\n", paramErr());
  for (size_t i = 0; i < results.size(); ++i) {
    at::native::resize_output(outputs_[i], results[i].sizes());
    outputs_[i].copy_(results[i]);
  }
  return outputs_;
}

}  // namespace torch_npu::eager
