// A kernel written with the ATen-style API, as PyTorch extensions write theirs:
// normalize_rows(x) divides each row of a 2-D tensor by its sum.
//   - argument checks with TensorArg / checkDim / checkScalarTypes (ATen's messages);
//   - a typed C++ call of another operator (this extension's rowsum) through
//     Dispatcher::findSchemaOrThrow(...).typed<...>();
//   - TensorOptions: the result takes x's dtype and device (x.options()), the
//     row sums are computed in float64 (.to(kDouble));
//   - a factory (empty) and Tensor methods and operators, which are dispatcher
//     calls of the built-in operators, so autograd, modes and Meta apply;
//   - OPDISPATCH_WARN for rows that sum to zero (a Python UserWarning).
// Registered at CompositeImplicitAutograd: it runs for every backend.
#include "myext.h"

namespace myext {
namespace {

Tensor normalizeRows(const Tensor& x) {
  using namespace opdispatch;
  const TensorArg x_arg{x, "x", 1};
  checkDim("normalize_rows", x_arg, 2);
  checkScalarTypes("normalize_rows", x_arg, {kFloat, kDouble});

  static const TypedOperatorHandle<Tensor(const Tensor&)> rowsum =
      Dispatcher::singleton().findSchemaOrThrow(MYEXT_NS_STR "::rowsum", "").typed<Tensor(const Tensor&)>();
  Tensor sums = rowsum.call(x.to(kDouble)).unsqueeze(1);  // (N, 1), float64
  if (sums.is_cpu()) {
    const Tensor flat = sums.contiguous();
    const double* s = flat.const_data_ptr<double>();
    int64_t zero_rows = 0;
    for (int64_t i = 0; i < flat.numel(); ++i) {
      zero_rows += s[i] == 0.0;
    }
    if (zero_rows > 0) {
      OPDISPATCH_WARN("normalize_rows: ", zero_rows, " of ", x.size(0), " rows sum to zero; they become inf or nan");
    }
  }
  Tensor out = empty(x.sizes(), x.options());  // x's dtype and device
  out.copy_(x.to(kDouble) / sums);
  return out;
}

} // namespace
} // namespace myext

OPDISPATCH_LIBRARY_IMPL(OPDISPATCH_EXAMPLE_NS, CompositeImplicitAutograd, m) {
  m.impl("normalize_rows", OPDISPATCH_FN(myext::normalizeRows));
}
