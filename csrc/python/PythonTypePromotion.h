// Type promotion over Python operands (tensors and Python numbers): the
// bindings _promote_types, _can_cast, _result_type and _check_can_cast, and
// the test by which the NumPy kernels' fast path knows NumPy computes in the
// dtype PyTorch's rule gives (Note [Promotion on the fast path]).
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// Which calls a NumPy kernel's fast path takes, by the operands' dtypes
/// (Note [Promotion on the fast path]).
enum class FastPathDtypes : int {
  Any = 0,          ///< every call: fn handles dtypes itself
  Same = 1,         ///< the operands need no promotion
  SameFloating = 2, ///< as Same, and their dtype is floating or complex
};

/// Whether the operands `args[0..n)` (tensors; Python numbers; anything else
/// is not an operand) fit `dtypes`. Never raises.
bool operandsFit(FastPathDtypes dtypes, PyObject* const* args, Py_ssize_t n);

void initTypePromotionBindings(pybind11::module_& m);

} // namespace opdispatch::python
