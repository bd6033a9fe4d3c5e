// Argument checks and result shapes shared by the CPU and Meta kernels, so
// both devices accept and reject exactly the same calls.
#include "myext.h"

#include <sstream>

#include <opdispatch/core/Exception.h>

namespace myext {

std::string qualified(const char* op) { return std::string(MYEXT_NS_STR) + "::" + op; }

std::string shapeString(IntArrayRef sizes) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    os << (i ? ", " : "") << sizes[i];
  }
  os << "]";
  return os.str();
}

void checkFloating(const char* op, const Tensor& x) {
  OPDISPATCH_CHECK_TYPE(x.dtype() == ScalarType::Float || x.dtype() == ScalarType::Double, qualified(op),
                        ": unsupported dtype ", opdispatch::toPythonName(x.dtype()), " (supported: float32, float64)");
}

std::vector<int64_t> fmaResultShape(const Tensor& a, const Tensor& b, const Tensor& c) {
  const std::string op = qualified("fma");
  OPDISPATCH_CHECK_TYPE(a.dtype() == b.dtype() && a.dtype() == c.dtype(), op,
                        ": a, b and c must have the same dtype, got ", opdispatch::toPythonName(a.dtype()), ", ",
                        opdispatch::toPythonName(b.dtype()), " and ", opdispatch::toPythonName(c.dtype()));
  checkFloating("fma", a);
  OPDISPATCH_CHECK(a.device() == b.device() && a.device() == c.device(), op,
                   ": a, b and c must be on the same device, got ", a.device(), ", ", b.device(), " and ", c.device());
  // Operands with one element broadcast; the others must have one shape.
  const std::array<const Tensor*, 3> operands{&a, &b, &c};
  const char* names[] = {"a", "b", "c"};
  const Tensor* full = nullptr;
  for (const Tensor* t : operands) {
    if (t->numel() == 1) {
      continue;
    }
    OPDISPATCH_CHECK_VALUE(full == nullptr || full->sizes().equals(t->sizes()), op, ": shape mismatch: a ",
                           shapeString(a.sizes()), ", b ", shapeString(b.sizes()), ", c ", shapeString(c.sizes()),
                           "; the operands must have the same shape, or a single element (which is broadcast)");
    full = full ? full : t;
  }
  if (full == nullptr) {  // every operand has one element: NumPy's result, the longest shape
    for (const Tensor* t : operands) {
      full = (full == nullptr || t->dim() > full->dim()) ? t : full;
    }
    return full->sizes().vec();
  }
  for (size_t k = 0; k < operands.size(); ++k) {  // keeps the result equal to NumPy's broadcast
    OPDISPATCH_CHECK_VALUE(operands[k]->dim() <= full->dim(), op, ": single-element operand ", names[k], " of shape ",
                           shapeString(operands[k]->sizes()), " has more dimensions than the result ",
                           shapeString(full->sizes()));
  }
  return full->sizes().vec();
}

std::vector<int64_t> rowsumResultShape(const Tensor& x) {
  OPDISPATCH_CHECK_VALUE(x.dim() == 2, qualified("rowsum"), ": expected a 2-D tensor (N, M), got shape ",
                         shapeString(x.sizes()));
  checkFloating("rowsum", x);
  return {x.size(0)};
}

} // namespace myext
