// Argument checks for kernels, with ATen's names and messages (TensorArg,
// CheckedFrom, checkDim, checkSize, checkAllSameType, ...): a kernel ported
// from ATen keeps its checks and its users see the errors they know.
// PyTorch: aten/src/ATen/TensorUtils.h.
#pragma once

#include <cstdint>
#include <ostream>

#include <opdispatch/core/ArrayRef.h>
#include <opdispatch/core/Tensor.h>

namespace opdispatch {

/// A tensor argument with its name and 1-based position (0: `self` or the
/// result), for messages: "argument #2 'weight'", or "'self'" for position 0.
struct TensorArg {
  const Tensor& tensor;
  const char* name;
  int pos;
  TensorArg(const Tensor& tensor, const char* name, int pos) : tensor(tensor), name(name), pos(pos) {}
  const Tensor* operator->() const { return &tensor; }
  const Tensor& operator*() const { return tensor; }
};
std::ostream& operator<<(std::ostream& os, const TensorArg& t);

/// The name of the function whose arguments are checked ("conv2d").
using CheckedFrom = const char*;

// Each throws opdispatch::Error with ATen's message, ending in
// "(while checking arguments for <c>)".
void checkDim(CheckedFrom c, const TensorArg& t, int64_t dim);
void checkDim(CheckedFrom c, const Tensor& tensor, const char* name, int pos, int64_t dim);
/// dim_start <= t.dim() < dim_end.
void checkDimRange(CheckedFrom c, const TensorArg& t, int64_t dim_start, int64_t dim_end);
void checkSameDim(CheckedFrom c, const TensorArg& t1, const TensorArg& t2);
void checkContiguous(CheckedFrom c, const TensorArg& t);
void checkAllContiguous(CheckedFrom c, ArrayRef<TensorArg> ts);
void checkSize(CheckedFrom c, const TensorArg& t, IntArrayRef sizes);
void checkSize(CheckedFrom c, const TensorArg& t, int64_t dim, int64_t size);
void checkNumel(CheckedFrom c, const TensorArg& t, int64_t numel);
void checkSameNumel(CheckedFrom c, const TensorArg& t1, const TensorArg& t2);
void checkAllSameNumel(CheckedFrom c, ArrayRef<TensorArg> tensors);
void checkSameSize(CheckedFrom c, const TensorArg& t1, const TensorArg& t2);
void checkAllSameSize(CheckedFrom c, ArrayRef<TensorArg> tensors);
/// Same dtype and device type ("CPUFloatType" in the message, as ATen's).
void checkSameType(CheckedFrom c, const TensorArg& t1, const TensorArg& t2);
void checkAllSameType(CheckedFrom c, ArrayRef<TensorArg> tensors);
void checkScalarType(CheckedFrom c, const TensorArg& t, ScalarType type);
void checkScalarTypes(CheckedFrom c, const TensorArg& t, ArrayRef<ScalarType> types);
void checkDefined(CheckedFrom c, const TensorArg& t);
void checkAllDefined(CheckedFrom c, ArrayRef<TensorArg> ts);
/// Every defined tensor of `tensors` is on a device of `device_type`.
void checkDeviceType(CheckedFrom c, ArrayRef<Tensor> tensors, DeviceType device_type);
void checkLayout(CheckedFrom c, const Tensor& t, Layout layout);

/// ATen's name of a tensor's type, backend and dtype: "CPUFloatType", "MetaLongType".
std::string typeName(const Tensor& t);

} // namespace opdispatch
