// torch's foreach ops on the NPU (torch.optim's default path for npu parameters): each call is one
// multi-tensor launch per device and dtype group (MultiTensorApply.h), not one launch per tensor.
// `_foreach_<op>[_].<overload>` applies the matching per-tensor aten op to element i of every list:
// Tensor[] -> its element, Scalar[] -> its element, Tensor / Scalar -> shared by every element;
// the per-tensor op's later arguments take their defaults. An in-place foreach op writes `self`
// through the per-tensor in-place op, or (maximum_) the functional one's result.
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <cmath>
#include <map>
#include <mutex>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/MultiTensorApply.h"

namespace torch_npu::native {
namespace {

struct ForeachSpec {
  std::string perTensor;  // "aten::add_.Tensor"
  std::vector<c10::IValue> defaults;  // the per-tensor op's trailing arguments
  std::vector<int> writes;  // {0}: self gets the functional per-tensor op's result
  bool returnsList = false;
  bool lerpWeightFlag = false;  // npu::_npu_lerp_scalar: the weight's formula flag follows the weight
};

// _foreach_lerp_.Scalar (torch.optim Adam's first moment) of floating tensors runs npu::_npu_lerp_scalar
// (references/fused_optim.py): aten::lerp's decomposition selects on the number weight, which leaves its
// kernel opaque (one block); the reference takes aten's formula for |weight| < 0.5 or not as a compiled-in
// flag, so each chunk is one split vector kernel.
bool lerpThroughReference(const c10::OperatorHandle& op, const torch::jit::Stack& stack, size_t argBase) {
  if (op.schema().name() != "aten::_foreach_lerp_" || op.schema().overload_name() != "Scalar") return false;
  const c10::IValue& self = stack[argBase];
  const c10::IValue& weight = stack[argBase + 2];
  if (!self.isTensorList() || self.toTensorList().empty() || weight.isComplexDouble()) return false;
  return at::isFloatingType(self.toTensorList().get(0).scalar_type());
}

ForeachSpec lerpScalarSpec() {
  ForeachSpec spec;
  spec.perTensor = "npu::_npu_lerp_scalar";
  spec.writes = {0};
  spec.lerpWeightFlag = true;
  return spec;
}

const std::map<std::string, std::string>& perTensorOverload() {
  static const std::map<std::string, std::string> overloads = {
      {"List", "Tensor"}, {"Tensor", "Tensor"}, {"Scalar", "Scalar"}, {"ScalarList", "Scalar"}, {"", ""}};
  return overloads;
}

bool isListOf(const c10::TypePtr& type, c10::TypeKind element) {
  auto list = type->cast<c10::ListType>();
  return list && list->getElementType()->kind() == element;
}

ForeachSpec deriveSpec(const c10::OperatorHandle& op) {
  const c10::FunctionSchema& schema = op.schema();
  const std::string prefix = "aten::_foreach_";
  TORCH_INTERNAL_ASSERT(schema.name().rfind(prefix, 0) == 0, schema.name(), " is not a foreach op");
  std::string base = schema.name().substr(prefix.size());
  const bool inPlace = base.back() == '_';
  std::string stem = inPlace ? base.substr(0, base.size() - 1) : base;
  auto mapped = perTensorOverload().find(schema.overload_name());
  TORCH_INTERNAL_ASSERT(mapped != perTensorOverload().end(), "foreach overload ", schema.overload_name());
  ForeachSpec spec;
  spec.returnsList = !schema.returns().empty();
  std::optional<c10::OperatorHandle> perTensor;
  for (const std::string& name : inPlace ? std::vector<std::string>{stem + "_", stem} : std::vector{stem}) {
    for (const std::string& overload : {mapped->second, std::string()}) {
      perTensor = c10::Dispatcher::singleton().findSchema({"aten::" + name, overload});
      if (perTensor) {
        spec.perTensor = "aten::" + name + (overload.empty() ? "" : "." + overload);
        if (inPlace && name == stem) spec.writes = {0};
        break;
      }
    }
    if (perTensor) break;
  }
  TORCH_INTERNAL_ASSERT(perTensor, "no per-tensor op for ", schema.name(), ".", schema.overload_name());
  const auto& foreachArgs = schema.arguments();
  const auto& tensorArgs = perTensor->schema().arguments();
  TORCH_INTERNAL_ASSERT(tensorArgs.size() >= foreachArgs.size(), spec.perTensor, " takes fewer arguments");
  for (size_t j = 0; j < foreachArgs.size(); ++j) {
    const c10::TypePtr& type = foreachArgs[j].real_type();
    c10::TypeKind want = isListOf(type, c10::TypeKind::TensorType) ? c10::TypeKind::TensorType
                         : isListOf(type, c10::TypeKind::NumberType) ? c10::TypeKind::NumberType
                                                                     : type->kind();
    TORCH_INTERNAL_ASSERT(tensorArgs[j].real_type()->kind() == want, spec.perTensor, " argument ", j,
                          " does not match ", schema.name(), "'s");
  }
  for (size_t j = foreachArgs.size(); j < tensorArgs.size(); ++j) {
    TORCH_INTERNAL_ASSERT(tensorArgs[j].default_value().has_value(), spec.perTensor, " argument ", j, " has no default");
    spec.defaults.push_back(*tensorArgs[j].default_value());
  }
  return spec;
}

const ForeachSpec& specOf(const c10::OperatorHandle& op) {
  static std::mutex mutex;
  static std::map<const c10::FunctionSchema*, ForeachSpec> specs;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = specs.find(&op.schema());
  if (it == specs.end()) it = specs.emplace(&op.schema(), deriveSpec(op)).first;
  return it->second;
}

// torch's check_foreach_api_restrictions, with its messages.
void checkLists(const std::vector<MultiTensorArg>& args, size_t count) {
  TORCH_CHECK(count > 0, "Tensor list must have at least one tensor.\n", errCode(SubModule::OPS, ErrCode::PARAM));
  for (const MultiTensorArg& arg : args) {
    if (arg.kind == MultiTensorArg::Kind::Chunked) {
      TORCH_CHECK(arg.list.size() == count, "Tensor lists must have the same number of tensors, got ", count,
                  " and ", arg.list.size(), "\n", errCode(SubModule::OPS, ErrCode::PARAM));
    } else if (arg.kind == MultiTensorArg::Kind::PerTensorValue) {
      TORCH_CHECK(arg.values.size() == count, "Tensor list must have same number of elements as scalar list, got ",
                  count, " and ", arg.values.size(), "\n", errCode(SubModule::OPS, ErrCode::PARAM));
    }
  }
}

void foreachKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const size_t argBase = stack->size() - n;
  static const ForeachSpec lerpSpec = lerpScalarSpec();
  const ForeachSpec& spec = lerpThroughReference(op, *stack, argBase) ? lerpSpec : specOf(op);
  std::vector<MultiTensorArg> args;
  args.reserve(n + spec.defaults.size());
  for (size_t j = 0; j < n; ++j) {
    const c10::IValue& v = (*stack)[argBase + j];
    if (v.isTensorList()) {
      args.push_back(MultiTensorArg::chunked(v.toTensorVector()));
    } else if (v.isList()) {
      args.push_back(MultiTensorArg::perTensorValues(v.toListRef().vec()));
    } else {
      args.push_back(MultiTensorArg::shared(v));
    }
  }
  for (const c10::IValue& v : spec.defaults) args.push_back(MultiTensorArg::shared(v));
  if (spec.lerpWeightFlag) {
    const double weight = args[2].value.toScalar().toDouble();
    args[2] = MultiTensorArg::shared(weight);
    args.push_back(MultiTensorArg::shared(std::abs(weight) >= 0.5));
  }
  const size_t count = args.front().list.size();
  checkLists(args, count);
  const std::string name = op.schema().name() + "." + op.schema().overload_name();
  // npu::_npu_lerp_scalar is elementwise, but a custom op carries no pointwise tag: say so.
  std::vector<std::vector<at::Tensor>> results =
      multiTensorApply(name, spec.perTensor, args, spec.writes, spec.lerpWeightFlag);
  torch::jit::drop(*stack, n);
  if (spec.returnsList) {
    std::vector<at::Tensor> out;
    out.reserve(count);
    for (auto& r : results) out.push_back(std::move(r.front()));
    stack->emplace_back(std::move(out));
  }
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name :
       {"_foreach_add_.Scalar", "_foreach_add_.List", "_foreach_add_.ScalarList", "_foreach_add_.Tensor",
        "_foreach_sub_.Scalar", "_foreach_sub_.List", "_foreach_sub_.ScalarList", "_foreach_mul_.Scalar",
        "_foreach_mul_.List", "_foreach_mul_.ScalarList", "_foreach_mul_.Tensor", "_foreach_div_.Scalar",
        "_foreach_div_.List", "_foreach_div_.ScalarList", "_foreach_div_.Tensor", "_foreach_lerp_.Scalar",
        "_foreach_lerp_.List", "_foreach_lerp_.ScalarList", "_foreach_addcmul_.Scalar", "_foreach_addcmul_.ScalarList",
        "_foreach_addcdiv_.Scalar", "_foreach_addcdiv_.ScalarList", "_foreach_sqrt_", "_foreach_neg_",
        "_foreach_reciprocal_", "_foreach_exp_", "_foreach_maximum_.List", "_foreach_add.Scalar", "_foreach_add.List",
        "_foreach_add.ScalarList", "_foreach_sub.List", "_foreach_mul.Scalar", "_foreach_mul.List",
        "_foreach_mul.ScalarList", "_foreach_div.List", "_foreach_div.ScalarList", "_foreach_sqrt", "_foreach_neg",
        "_foreach_maximum.List", "_foreach_addcmul.Scalar", "_foreach_addcdiv.ScalarList", "_foreach_lerp.Scalar"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&foreachKernel>());
  }
}

}  // namespace
}  // namespace torch_npu::native
