// NPU storage formats (DESIGN.md section 4): a storage has a base (logical) format and
// an npu (physical) format with its own storage sizes, as torch_npu's NPUStorageDesc.
//
// The descriptor lives on the storage (NpuStorageImpl). A storage without one holds its
// tensor in the base format of the tensor's rank (NCHW for 4-d, NCDHW for 5-d, ND
// otherwise), so a tensor made by any path (empty, from_blob-like storages, views,
// deserialization) defaults to its base format. Only npu_format_cast / empty_with_format
// create descriptors.
//
// An internal-format storage (NC1HWC0, FRACTAL_Z, FRACTAL_NZ) holds its bytes in the
// physical order with zero padding. The one tensor that reads it correctly is the
// "formatted" tensor: the descriptor's logical sizes, contiguous, offset 0, its dtype.
// Any other tensor over such a storage (made by set_) is refused by every consumer.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/StorageImpl.h>

#include <cstdint>
#include <vector>

namespace torch_npu {

// aclFormat numbers.
enum class AclFormat : int64_t {
  NCHW = 0,
  NHWC = 1,
  ND = 2,
  NC1HWC0 = 3,
  FRACTAL_Z = 4,
  FRACTAL_NZ = 29,
  NCDHW = 30,
  NDC1HWC0 = 32,
  FRACTAL_Z_3D = 33,
};

struct NpuStorageDesc {
  AclFormat npuFormat = AclFormat::ND;
  std::vector<int64_t> baseSizes;     // logical sizes of the formatted tensor
  std::vector<int64_t> storageSizes;  // physical sizes, contiguous in the storage
  c10::ScalarType dtype = c10::ScalarType::Float;
};

class NpuStorageImpl : public c10::StorageImpl {
 public:
  NpuStorageImpl(size_t nbytes, c10::Allocator* allocator, NpuStorageDesc desc);
  const NpuStorageDesc& desc() const { return desc_; }

 private:
  NpuStorageDesc desc_;
};

bool isInternalFormat(AclFormat format);
// The base format of a tensor of this rank.
AclFormat baseFormatOf(int64_t dim);
// Checks that `format` is a known aclFormat this backend stores, for a tensor of
// `sizes`; raises ERR00001 (unknown number) or ERR00007 (known, not stored here).
AclFormat checkedFormat(int64_t format, at::IntArrayRef sizes);
// Physical sizes of a tensor of logical `sizes` stored in `format`.
std::vector<int64_t> storageSizesOf(at::IntArrayRef sizes, AclFormat format, c10::ScalarType dtype);

// The descriptor of t's storage, or null when it has none.
const NpuStorageDesc* storageDesc(const at::Tensor& t);
// t's npu format: the descriptor's, else the base format of t's rank.
AclFormat npuFormatOf(const at::Tensor& t);
// The descriptor when t's storage holds an internal format, else null.
const NpuStorageDesc* internalDesc(const at::Tensor& t);
// A uint8 tensor over the whole storage (torch's storage-level copies): raw bytes.
bool isWholeStorageBytes(const at::Tensor& t);
// t is the formatted tensor of the internal-format storage described by `desc`.
bool isFormattedView(const at::Tensor& t, const NpuStorageDesc& desc);
// Raises ERR00007 unless t is the formatted tensor of its internal-format storage.
void checkFormattedView(const at::Tensor& t, const NpuStorageDesc& desc, const char* what);

// Fresh NPU tensor of logical `sizes` stored in `format` (padding zeroed on the stream).
at::Tensor emptyWithFormat(at::IntArrayRef sizes, const at::TensorOptions& options, AclFormat format);
// A base-format NPU copy of an internal-format tensor, converted by a task on the current stream.
at::Tensor toBaseFormat(const at::Tensor& t);
// Writes the logical values of `source` (an NPU tensor of dst's sizes, any base layout and
// dtype) into the internal-format tensor `dst`, as a task on dst's current stream.
void writeFormatted(const at::Tensor& dst, const at::Tensor& source);

// torch.npu.config.allow_internal_format.
bool allowInternalFormat();
void setAllowInternalFormat(bool allow);

}  // namespace torch_npu
