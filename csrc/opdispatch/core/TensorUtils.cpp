// ATen's argument checks (TensorUtils.h), with its messages.
#include <opdispatch/core/TensorUtils.h>

#include <algorithm>
#include <sstream>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
constexpr const char* kWhile = " (while checking arguments for ";

/// Runs `check(c, first defined, t)` for every later defined tensor of `tensors`.
template <class Check>
void checkAllAgainstFirst(CheckedFrom c, ArrayRef<TensorArg> tensors, Check check) {
  const TensorArg* first = nullptr;
  for (const TensorArg& t : tensors) {
    if (!t->defined()) {
      continue;
    }
    if (first == nullptr) {
      first = &t;
    } else {
      check(c, *first, t);
    }
  }
}
} // namespace

std::ostream& operator<<(std::ostream& os, const TensorArg& t) {
  if (t.pos == 0) {
    return os << "'" << t.name << "'";
  }
  return os << "argument #" << t.pos << " '" << t.name << "'";
}

namespace {
/// ATen's capitalised name of a device type in messages ("CPU", "CUDA"): its backend key's name.
const char* deviceTypeName(DeviceType t) { return toString(backendKeyForDevice(t)); }
} // namespace

std::string typeName(const Tensor& t) {
  return detail::str(deviceTypeName(t.device().type()), toString(t.scalar_type()), "Type");
}

void checkDim(CheckedFrom c, const TensorArg& t, int64_t dim) {
  OPDISPATCH_CHECK(t->dim() == dim, "Expected ", dim, "-dimensional tensor, but got ", t->dim(),
                   "-dimensional tensor for ", t, kWhile, c, ")");
}

void checkDim(CheckedFrom c, const Tensor& tensor, const char* name, int pos, int64_t dim) {
  checkDim(c, TensorArg(tensor, name, pos), dim);
}

void checkDimRange(CheckedFrom c, const TensorArg& t, int64_t dim_start, int64_t dim_end) {
  OPDISPATCH_CHECK(t->dim() >= dim_start && t->dim() < dim_end, "Expected ", dim_start, " to ", dim_end - 1,
                   " dimensions, but got ", t->dim(), "-dimensional tensor for ", t, kWhile, c, ")");
}

void checkSameDim(CheckedFrom c, const TensorArg& t1, const TensorArg& t2) {
  OPDISPATCH_CHECK(t1->dim() == t2->dim(), "Expected tensor for ", t1, " to have the same dimension as tensor for ", t2,
                   "; but ", t1->dim(), " does not equal ", t2->dim(), kWhile, c, ")");
}

void checkContiguous(CheckedFrom c, const TensorArg& t) {
  OPDISPATCH_CHECK(t->is_contiguous(), "Expected contiguous tensor, but got non-contiguous tensor for ", t, kWhile, c,
                   ")");
}

void checkAllContiguous(CheckedFrom c, ArrayRef<TensorArg> ts) {
  for (const TensorArg& t : ts) {
    if (t->defined()) {
      checkContiguous(c, t);
    }
  }
}

void checkSize(CheckedFrom c, const TensorArg& t, IntArrayRef sizes) {
  checkDim(c, t, static_cast<int64_t>(sizes.size()));
  OPDISPATCH_CHECK(t->sizes().equals(sizes), "Expected tensor of size ", sizes, ", but got tensor of size ", t->sizes(),
                   " for ", t, kWhile, c, ")");
}

void checkSize(CheckedFrom c, const TensorArg& t, int64_t dim, int64_t size) {
  OPDISPATCH_CHECK(t->size(dim) == size, "Expected tensor to have size ", size, " at dimension ", dim,
                   ", but got size ", t->size(dim), " for ", t, kWhile, c, ")");
}

void checkNumel(CheckedFrom c, const TensorArg& t, int64_t numel) {
  OPDISPATCH_CHECK(t->numel() == numel, "Expected tensor for ", t, " to have ", numel,
                   " elements; but it actually has ", t->numel(), " elements", kWhile, c, ")");
}

void checkSameNumel(CheckedFrom c, const TensorArg& t1, const TensorArg& t2) {
  OPDISPATCH_CHECK(t1->numel() == t2->numel(), "Expected tensor for ", t1,
                   " to have same number of elements as tensor for ", t2, "; but ", t1->numel(), " does not equal ",
                   t2->numel(), kWhile, c, ")");
}

void checkAllSameNumel(CheckedFrom c, ArrayRef<TensorArg> tensors) {
  checkAllAgainstFirst(c, tensors,
                       [](CheckedFrom c, const TensorArg& a, const TensorArg& b) { checkSameNumel(c, a, b); });
}

void checkSameSize(CheckedFrom c, const TensorArg& t1, const TensorArg& t2) {
  OPDISPATCH_CHECK(t1->sizes().equals(t2->sizes()), "Expected tensor for ", t1, " to have same size as tensor for ", t2,
                   "; but ", t1->sizes(), " does not equal ", t2->sizes(), kWhile, c, ")");
}

void checkAllSameSize(CheckedFrom c, ArrayRef<TensorArg> tensors) {
  checkAllAgainstFirst(c, tensors,
                       [](CheckedFrom c, const TensorArg& a, const TensorArg& b) { checkSameSize(c, a, b); });
}

void checkSameType(CheckedFrom c, const TensorArg& t1, const TensorArg& t2) {
  OPDISPATCH_CHECK(t1->options().type_equal(t2->options()), "Expected tensor for ", t1,
                   " to have the same type as tensor for ", t2, "; but type ", typeName(*t1), " does not equal ",
                   typeName(*t2), kWhile, c, ")");
}

void checkAllSameType(CheckedFrom c, ArrayRef<TensorArg> tensors) {
  checkAllAgainstFirst(c, tensors,
                       [](CheckedFrom c, const TensorArg& a, const TensorArg& b) { checkSameType(c, a, b); });
}

void checkScalarType(CheckedFrom c, const TensorArg& t, ScalarType type) {
  OPDISPATCH_CHECK(t->scalar_type() == type, "Expected tensor for ", t, " to have scalar type ", toString(type),
                   "; but got ", typeName(*t), " instead", kWhile, c, ")");
}

void checkScalarTypes(CheckedFrom c, const TensorArg& t, ArrayRef<ScalarType> types) {
  if (std::find(types.begin(), types.end(), t->scalar_type()) != types.end()) {
    return;
  }
  std::ostringstream names;
  for (size_t i = 0; i < types.size(); ++i) {
    names << (i ? ", " : "") << toString(types[i]);
  }
  OPDISPATCH_CHECK(false, "Expected tensor for ", t, " to have one of the following scalar types: ", names.str(),
                   "; but got ", typeName(*t), " instead", kWhile, c, ")");
}

void checkDefined(CheckedFrom c, const TensorArg& t) {
  OPDISPATCH_CHECK(t->defined(), "Expected tensor for ", t, " to be non-null, but it was undefined ", kWhile, c, ")");
}

void checkAllDefined(CheckedFrom c, ArrayRef<TensorArg> ts) {
  for (const TensorArg& t : ts) {
    checkDefined(c, t);
  }
}

void checkDeviceType(CheckedFrom c, ArrayRef<Tensor> tensors, DeviceType device_type) {
  for (const Tensor& t : tensors) {
    OPDISPATCH_CHECK(!t.defined() || t.device().type() == device_type, "Expected tensor to have ",
                     deviceTypeName(device_type), " DeviceType, but got tensor with ",
                     deviceTypeName(t.device().type()), " DeviceType (while checking arguments for ", c, ")");
  }
}

void checkLayout(CheckedFrom c, const Tensor& t, Layout layout) {
  OPDISPATCH_CHECK(!t.defined() || t.layout() == layout, "Expected tensor to have ", layout,
                   " Layout, but got tensor with ", t.layout(), " Layout (while checking arguments for ", c, ")");
}

} // namespace opdispatch
