// Type promotion over Python operands (see PythonTypePromotion.h).
#include "PythonTypePromotion.h"

#include <algorithm>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/TypePromotion.h>

#include "Exceptions.h"
#include "PythonTensor.h"
#include "PythonTypes.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

/// The dtype a Python number has before promotion (PyTorch's wrapped numbers:
/// bool, int -> int64, float -> float64, complex -> complex128); Undefined for
/// anything else. Bool first: Python's bool is an int.
ScalarType numberType(PyObject* obj) {
  if (PyBool_Check(obj)) {
    return ScalarType::Bool;
  }
  if (PyLong_Check(obj)) {
    return ScalarType::Long;
  }
  if (PyFloat_Check(obj)) {
    return ScalarType::Double;
  }
  if (PyComplex_Check(obj)) {
    return ScalarType::ComplexDouble;
  }
  return ScalarType::Undefined;
}

/// _result_type(*operands): see the docstring in kMethods.
PyObject* resultType(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs > 0, "result_type() needs at least one tensor or number");
    ResultTypeState state;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      if (isTensor(args[i])) {
        TensorImpl* impl = unpackImpl(args[i]);
        state.addTensor(impl->dtype(), impl->dim());
        continue;
      }
      ScalarType t = numberType(args[i]);
      OPDISPATCH_CHECK_TYPE(t != ScalarType::Undefined, "result_type(): operand ", i,
                            " must be a tensor or a Python number (bool, int, float, complex), not ",
                            Py_TYPE(args[i])->tp_name);
      state.addNumber(t);
    }
    return dtypeObject(state.result());
  });
}

PyMethodDef kMethods[] = {
    {"_result_type", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(resultType)), METH_FASTCALL,
     "_result_type(*operands) -> dtype: the dtype PyTorch's promotion gives tensors and Python numbers (bool, "
     "int, float, complex) operated on together: tensors with dimensions first, then 0-d tensors, then numbers, "
     "a lower class counting only when its category (bool < integer < floating < complex) is higher (Note "
     "[Result type] in core/TypePromotion.h). TypeError for no operand or an operand of another type. "
     "PyTorch: at::native::result_type."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

// Note [Promotion on the fast path]
// A NumPy kernel's fast path (Note [NumPy kernels] in NumpyBridge.cpp) hands
// the operands to NumPy as they are, so it may take a call only when NumPy's
// promotion gives what PyTorch's does. It does when every tensor has one
// dtype and no Python number is of a higher category than that dtype: both
// rules then compute in that dtype (NumPy 2 casts such numbers to the
// tensors' dtype, PyTorch's wrapped numbers do not raise it). Operations
// that compute integer inputs in floating point (true division, sin, exp:
// PyTorch's promote_integer_inputs_to_float) also need that dtype to be
// floating, where NumPy would compute integers in float64 rather than the
// default float32. Every other call, mixed dtypes or 0-d tensors of another
// dtype, goes to the kernel written in Python, which casts the operands to
// the dtype _result_type gives before calling NumPy. The test reads each
// argument's type and a tensor's dtype: no Python call, no allocation.

bool operandsFit(FastPathDtypes dtypes, PyObject* const* args, Py_ssize_t n) {
  if (dtypes == FastPathDtypes::Any) {
    return true;
  }
  ScalarType common = ScalarType::Undefined;
  TypeCategory numbers = TypeCategory::Bool;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (isTensor(args[i])) {
      ScalarType t = unpackImpl(args[i])->dtype();
      if (common != ScalarType::Undefined && t != common) {
        return false;
      }
      common = t;
    } else if (ScalarType t = numberType(args[i]); t != ScalarType::Undefined) {
      numbers = std::max(numbers, typeCategory(t));
    }
  }
  if (common == ScalarType::Undefined) {
    return false;
  }
  TypeCategory category = typeCategory(common);
  return numbers <= category && (dtypes == FastPathDtypes::Same || category >= TypeCategory::Floating);
}

void initTypePromotionBindings(py::module_& m) {
  if (PyModule_AddFunctions(m.ptr(), kMethods) < 0) {
    throw py::error_already_set();
  }
  m.def(
      "_promote_types",
      [](py::handle type1, py::handle type2) {
        ScalarType a = toScalarType(type1, "promote_types(): type1");
        ScalarType b = toScalarType(type2, "promote_types(): type2");
        return py::reinterpret_steal<py::object>(dtypeObject(promoteTypes(a, b)));
      },
      py::arg("type1"), py::arg("type2"),
      "The smallest dtype both dtypes convert to without losing their kind (int8 with uint8: int16; an integer "
      "with float16: float16). TypeError for a non-dtype. PyTorch: torch.promote_types (c10::promoteTypes).");
  m.def(
      "_can_cast",
      [](py::handle from, py::handle to) {
        return canCast(toScalarType(from, "can_cast(): from_"), toScalarType(to, "can_cast(): to"));
      },
      py::arg("from_"), py::arg("to"),
      "Whether a result of dtype from_ may be written to a tensor of dtype to: not to a lower category "
      "(floating to integer, complex to floating, anything else to bool). PyTorch: torch.can_cast (c10::canCast).");
  m.def(
      "_check_can_cast",
      [](const std::string& op, py::handle result, py::handle desired) {
        ScalarType from = toScalarType(result, "result"), to = toScalarType(desired, "desired");
        OPDISPATCH_CHECK(canCast(from, to), op, ": result type ", toString(from),
                         " can't be cast to the desired output type ", toString(to));
      },
      py::arg("op"), py::arg("result"), py::arg("desired"),
      "RuntimeError naming op unless _can_cast(result, desired), with PyTorch's message (\"result type Float "
      "can't be cast to the desired output type Long\"). PyTorch: TensorIteratorBase::compute_types.");
}

} // namespace opdispatch::python
