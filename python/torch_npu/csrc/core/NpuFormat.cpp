#include "torch_npu/csrc/core/NpuFormat.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>

#include <atomic>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu {
namespace {

// False as in torch_npu >= 2.8 on Atlas A2 (the 910B this device simulates).
std::atomic<bool> allowInternal{false};

// Conversions run as compiled kernels (npu::_npu_format_to_base / _npu_format_to_physical,
// references in eager/formats.py). A call the compiler rejects goes to the CPU fallback, which
// converts its internal-format input itself: that nested conversion takes the host task.
thread_local bool converting = false;

// Element types the sim target compiles conversions of correctly. Bool kernels of pad/permute
// come out wrong (measured: 88 of 200 elements), uint8 and complex are not compiled at all.
bool compiledConversion(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: case at::kHalf: case at::kBFloat16: case at::kDouble:
    case at::kLong: case at::kInt: case at::kShort: case at::kChar:
      return !converting && t.numel() > 0;
    default:
      return false;
  }
}

class ConversionScope {
 public:
  ConversionScope() { converting = true; }
  ~ConversionScope() { converting = false; }
  ConversionScope(const ConversionScope&) = delete;
  ConversionScope& operator=(const ConversionScope&) = delete;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The cube fractal's column count: 512 B rows of 16 elements, 32 for 1-byte types.
int64_t fractalC0(c10::ScalarType dtype) { return c10::elementSize(dtype) == 1 ? 32 : 16; }

// How an internal format maps its physical storage onto the logical tensor:
// physical viewed as `physView`, permuted by `perm`, is the zero-padded logical
// tensor (`padded`) viewed as `blocked`.
struct Blocking {
  std::vector<int64_t> padded;
  std::vector<int64_t> blocked;
  std::vector<int64_t> physical;
  std::vector<int64_t> physView;
  std::vector<int64_t> perm;
};

Blocking blockingOf(at::IntArrayRef sizes, AclFormat format, c10::ScalarType dtype) {
  Blocking b;
  switch (format) {
    case AclFormat::FRACTAL_NZ: {
      // (..., M, N) -> [..., N1, M1, 16, C0]
      const int64_t k = static_cast<int64_t>(sizes.size()) - 2;
      const int64_t m = sizes[k], n = sizes[k + 1], c0 = fractalC0(dtype);
      const int64_t m1 = ceilDiv(m, 16), n1 = ceilDiv(n, c0);
      std::vector<int64_t> batch(sizes.begin(), sizes.begin() + k);
      b.padded = batch, b.blocked = batch, b.physical = batch;
      b.padded.insert(b.padded.end(), {m1 * 16, n1 * c0});
      b.blocked.insert(b.blocked.end(), {m1, 16, n1, c0});
      b.physical.insert(b.physical.end(), {n1, m1, 16, c0});
      b.physView = b.physical;
      for (int64_t d = 0; d < k; ++d) b.perm.push_back(d);
      b.perm.insert(b.perm.end(), {k + 1, k + 2, k, k + 3});
      return b;
    }
    case AclFormat::NC1HWC0: {
      // (N, C, H, W) -> [N, C1, H, W, 16]
      const int64_t c1 = ceilDiv(sizes[1], 16);
      b.padded = {sizes[0], c1 * 16, sizes[2], sizes[3]};
      b.blocked = {sizes[0], c1, 16, sizes[2], sizes[3]};
      b.physical = {sizes[0], c1, sizes[2], sizes[3], 16};
      b.physView = b.physical;
      b.perm = {0, 1, 4, 2, 3};
      return b;
    }
    case AclFormat::FRACTAL_Z: {
      // (Co, Ci, Kh, Kw) -> [Ci1 * Kh * Kw, Co1, 16 (co), 16 (ci)]
      const int64_t co1 = ceilDiv(sizes[0], 16), ci1 = ceilDiv(sizes[1], 16), kh = sizes[2], kw = sizes[3];
      b.padded = {co1 * 16, ci1 * 16, kh, kw};
      b.blocked = {co1, 16, ci1, 16, kh, kw};
      b.physical = {ci1 * kh * kw, co1, 16, 16};
      b.physView = {ci1, kh, kw, co1, 16, 16};
      b.perm = {3, 4, 0, 5, 1, 2};
      return b;
    }
    default:
      b.padded = sizes.vec();
      b.blocked = b.padded, b.physical = b.padded, b.physView = b.padded;
      for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) b.perm.push_back(d);
      return b;
  }
}

// The logical region of the padded tensor.
at::Tensor unpadded(at::Tensor padded, at::IntArrayRef sizes) {
  for (int64_t d = 0; d < padded.dim(); ++d) padded = padded.narrow(d, 0, sizes[d]);
  return padded;
}

// CPU alias of t's storage in its physical shape.
at::Tensor physicalAlias(const at::Tensor& t, const NpuStorageDesc& desc) {
  at::Tensor alias = cpuAlias(t);
  alias.unsafeGetTensorImpl()->set_sizes_contiguous(desc.storageSizes);
  return alias;
}

// The host-side conversions: both run over CPU aliases, inside a stream task.
void physicalToLogical(const at::Tensor& physical, const at::Tensor& logical, const NpuStorageDesc& desc) {
  Blocking b = blockingOf(desc.baseSizes, desc.npuFormat, desc.dtype);
  at::Tensor padded = physical.view(b.physView).permute(b.perm).reshape(b.padded);
  logical.copy_(unpadded(padded, desc.baseSizes));
}

void logicalToPhysical(const at::Tensor& logical, const at::Tensor& physical, const NpuStorageDesc& desc) {
  Blocking b = blockingOf(desc.baseSizes, desc.npuFormat, desc.dtype);
  at::Tensor padded = at::zeros(b.padded, physical.options());
  unpadded(padded, desc.baseSizes).copy_(logical);
  physical.view(b.physView).permute(b.perm).copy_(padded.view(b.blocked));
}

std::string formatName(AclFormat format) {
  switch (format) {
    case AclFormat::NCHW: return "NCHW";
    case AclFormat::NHWC: return "NHWC";
    case AclFormat::ND: return "ND";
    case AclFormat::NC1HWC0: return "NC1HWC0";
    case AclFormat::FRACTAL_Z: return "FRACTAL_Z";
    case AclFormat::FRACTAL_NZ: return "FRACTAL_NZ";
    case AclFormat::NCDHW: return "NCDHW";
    case AclFormat::NDC1HWC0: return "NDC1HWC0";
    case AclFormat::FRACTAL_Z_3D: return "FRACTAL_Z_3D";
  }
  return "unknown";
}

}  // namespace

NpuStorageImpl::NpuStorageImpl(size_t nbytes, c10::Allocator* allocator, NpuStorageDesc desc)
    : c10::StorageImpl(c10::StorageImpl::use_byte_size_t(), nbytes, allocator, /*resizable=*/true),
      desc_(std::move(desc)) {}

bool isInternalFormat(AclFormat format) {
  return format == AclFormat::NC1HWC0 || format == AclFormat::FRACTAL_Z || format == AclFormat::FRACTAL_NZ;
}

AclFormat baseFormatOf(int64_t dim) {
  if (dim == 4) return AclFormat::NCHW;
  if (dim == 5) return AclFormat::NCDHW;
  return AclFormat::ND;
}

AclFormat checkedFormat(int64_t format, at::IntArrayRef sizes) {
  auto f = static_cast<AclFormat>(format);
  const int64_t dim = static_cast<int64_t>(sizes.size());
  switch (f) {
    case AclFormat::ND:
      return f;
    case AclFormat::NCHW:
    case AclFormat::NCDHW:
      // Base formats are interchangeable (the bytes are the same row-major layout), as in
      // torch_npu: NCHW / NCDHW asked of a tensor of another rank is that rank's base format.
      return f == baseFormatOf(dim) ? f : baseFormatOf(dim);
    case AclFormat::NC1HWC0:
    case AclFormat::FRACTAL_Z: {
      const int64_t needed = 4;
      TORCH_CHECK(dim == needed, "acl_format ", format, " (", formatName(f), ") needs a ", needed,
                  "-d tensor, got sizes ", sizes, "; use ND (2) for other ranks\n", ptaErr(ErrCode::PARAM));
      return f;
    }
    case AclFormat::FRACTAL_NZ:
      TORCH_CHECK(dim >= 2, "acl_format 29 (FRACTAL_NZ) needs at least 2 dims, got sizes ", sizes,
                  "; unsqueeze the tensor first\n", ptaErr(ErrCode::PARAM));
      return f;
    case AclFormat::NHWC:
    case AclFormat::NDC1HWC0:
    case AclFormat::FRACTAL_Z_3D:
      TORCH_CHECK(false, "acl_format ", format, " (", formatName(f), ") is not supported by this backend; use ",
                  "ND (2), NCHW (0), NCDHW (30), NC1HWC0 (3), FRACTAL_Z (4) or FRACTAL_NZ (29)\n",
                  ptaErr(ErrCode::NOT_SUPPORT));
  }
  TORCH_CHECK(false, "unknown acl_format ", format, "; use ND (2), NCHW (0), NCDHW (30), NC1HWC0 (3), ",
              "FRACTAL_Z (4) or FRACTAL_NZ (29)\n", ptaErr(ErrCode::PARAM));
}

std::vector<int64_t> storageSizesOf(at::IntArrayRef sizes, AclFormat format, c10::ScalarType dtype) {
  return blockingOf(sizes, format, dtype).physical;
}

const NpuStorageDesc* storageDesc(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return nullptr;
  const auto* impl = dynamic_cast<const NpuStorageImpl*>(t.storage().unsafeGetStorageImpl());
  return impl == nullptr ? nullptr : &impl->desc();
}

AclFormat npuFormatOf(const at::Tensor& t) {
  const NpuStorageDesc* desc = storageDesc(t);
  return desc != nullptr ? desc->npuFormat : baseFormatOf(t.dim());
}

const NpuStorageDesc* internalDesc(const at::Tensor& t) {
  const NpuStorageDesc* desc = storageDesc(t);
  return desc != nullptr && isInternalFormat(desc->npuFormat) ? desc : nullptr;
}

bool isWholeStorageBytes(const at::Tensor& t) {
  return t.scalar_type() == at::kByte && t.dim() == 1 && t.storage_offset() == 0 &&
         static_cast<size_t>(t.numel()) == t.storage().nbytes();
}

bool isFormattedView(const at::Tensor& t, const NpuStorageDesc& desc) {
  return t.sizes() == at::IntArrayRef(desc.baseSizes) && t.is_contiguous() && t.storage_offset() == 0 &&
         t.scalar_type() == desc.dtype;
}

void checkFormattedView(const at::Tensor& t, const NpuStorageDesc& desc, const char* what) {
  TORCH_CHECK(isFormattedView(t, desc), what, ": the tensor (sizes ", t.sizes(), ", strides ", t.strides(), ", offset ",
              t.storage_offset(), ") is a partial view of a storage in ", formatName(desc.npuFormat),
              " format, whose bytes are not in logical order. Call torch_npu.npu_format_cast(t, 2) on the whole "
              "tensor first and take the view of the result\n",
              ptaErr(ErrCode::NOT_SUPPORT));
}

at::Tensor emptyWithFormat(at::IntArrayRef sizes, const at::TensorOptions& options, AclFormat format) {
  NpuStorageDesc desc{format, sizes.vec(), storageSizesOf(sizes, format, options.dtype().toScalarType()),
                      options.dtype().toScalarType()};
  int64_t elements = c10::multiply_integers(desc.storageSizes);
  size_t nbytes = static_cast<size_t>(elements) * options.dtype().itemsize();
  c10::intrusive_ptr<c10::StorageImpl> storage =
      c10::make_intrusive<NpuStorageImpl>(nbytes, npuAllocator(), std::move(desc));
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(std::move(storage)),
                                                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                         options.dtype());
  t.unsafeGetTensorImpl()->set_sizes_contiguous(sizes);
  if (isInternalFormat(format) && nbytes > 0) {
    // Kernels that read the physical layout rely on zero padding.
    c10::Stream stream = getCurrentStream(t.device().index());
    NPU_CHECK_ACL(aclrtMemsetAsync(t.data_ptr(), nbytes, 0, nbytes, nativeStream(stream)));
  }
  return t;
}

at::Tensor toBaseFormat(const at::Tensor& t) {
  const NpuStorageDesc* desc = internalDesc(t);
  TORCH_INTERNAL_ASSERT(desc != nullptr);
  checkFormattedView(t, *desc, "converting to the base format");
  c10::DeviceGuard guard(t.device());
  if (compiledConversion(t)) {
    ConversionScope scope;
    return eager::OpCommand().Name("npu::_npu_format_to_base").Input(t).Run().at(0);
  }
  at::Tensor out = at::empty(t.sizes(), t.options());
  if (t.numel() == 0) return out;
  c10::Stream stream = getCurrentStream(t.device().index());
  npuAllocator()->recordStream(t.storage().data_ptr(), stream);
  at::Tensor physical = physicalAlias(t, *desc);
  at::Tensor logical = cpuAlias(out);
  launchHostTask(stream, [physical, logical, d = *desc]() { physicalToLogical(physical, logical, d); });
  return out;
}

void writeFormatted(const at::Tensor& dst, const at::Tensor& source) {
  const NpuStorageDesc* desc = internalDesc(dst);
  TORCH_INTERNAL_ASSERT(desc != nullptr && source.device() == dst.device());
  checkFormattedView(dst, *desc, "writing into an internal-format tensor");
  if (dst.numel() == 0) return;
  c10::DeviceGuard guard(dst.device());
  c10::Stream stream = getCurrentStream(dst.device().index());
  if (compiledConversion(dst)) {
    ConversionScope scope;
    at::Tensor values = source.scalar_type() == dst.scalar_type() ? source : source.to(dst.scalar_type());
    at::Tensor physical = eager::OpCommand()
                              .Name("npu::_npu_format_to_physical")
                              .Input(values)
                              .Attr("acl_format", static_cast<int64_t>(desc->npuFormat))
                              .Run()
                              .at(0);
    size_t nbytes = dst.storage().nbytes();
    TORCH_INTERNAL_ASSERT(physical.is_contiguous() && physical.nbytes() == nbytes);
    npuAllocator()->recordStream(physical.storage().data_ptr(), stream);
    NPU_CHECK_ACL(aclrtMemcpyAsync(dst.storage().mutable_data(), nbytes, physical.const_data_ptr(), nbytes,
                                   ACL_MEMCPY_DEVICE_TO_DEVICE, nativeStream(stream)));
    return;
  }
  npuAllocator()->recordStream(source.storage().data_ptr(), stream);
  at::Tensor logical = cpuAlias(source);
  at::Tensor physical = physicalAlias(dst, *desc);
  launchHostTask(stream, [logical, physical, d = *desc]() { logicalToPhysical(logical, physical, d); });
}

bool allowInternalFormat() { return allowInternal.load(); }
void setAllowInternalFormat(bool allow) { allowInternal.store(allow); }

}  // namespace torch_npu
