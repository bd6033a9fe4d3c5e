// OpNode's backward call and saved tensors (see OpNode.h). PyTorch:
// torch._library.autograd.make_autograd_impl (the formula's call and its
// checks), torch/csrc/autograd/saved_variable.cpp (SavedVariable::unpack).
#include "OpNode.h"

#include <algorithm>
#include <string>
#include <vector>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/GradMode.h>

#include "AutogradMeta.h"
#include "CheckedCApi.h"
#include "Exceptions.h"
#include "PythonTensor.h"
#include "StaticType.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

// What _set_op_node_class installs (graph.py, at import).
PyObject* gApplyFunction = nullptr;   ///< OpNode.apply
PyObject* gReleaseFunction = nullptr; ///< OpNode.release
PyObject* gOneTensor = nullptr;       ///< OpNode.output_layout: the layout of one Tensor return
PyObject* gTensorLayout = nullptr;    ///< its entry: the input_layout entry of a Tensor input

// Attribute names, interned once.
PyObject* gApply = nullptr;
PyObject* gRelease = nullptr;
PyObject* gFormula = nullptr;
PyObject* gMaterialize = nullptr;
PyObject* gBackward = nullptr;
PyObject* gOutputLayout = nullptr;
PyObject* gGradsPerOutput = nullptr;
PyObject* gInputLayout = nullptr;
PyObject* gInputNames = nullptr;
PyObject* gNumPassed = nullptr;
PyObject* gOpName = nullptr;
PyObject* gPrivateOpName = nullptr;
PyObject* gSaved = nullptr;
PyObject* gVersions = nullptr;
PyObject* gSavedOutputs = nullptr;
PyObject* gDetach = nullptr;

/// `sizes` as Python prints a tuple of ints: "(2, 3)", "(3,)", "()".
std::string tupleString(IntArrayRef sizes) {
  std::string out = "(";
  for (size_t d = 0; d < sizes.size(); ++d) {
    out += (d ? ", " : "") + std::to_string(sizes[d]);
  }
  return out + (sizes.size() == 1 ? ",)" : ")");
}

/// The name of the `i`-th input of `formula` (formula.input_names[i]).
std::string inputName(PyObject* formula, Py_ssize_t i) {
  py::object names = attr(formula, gInputNames);
  return strOf(steal(PySequence_GetItem(names.ptr(), i)).ptr());
}

/// RuntimeError: the formula returned `g`, not a tensor, as the gradient of input `name`.
void badGrad(const std::string& op_name, const std::string& name, PyObject* g) {
  OPDISPATCH_CHECK(false, "The backward formula for ", op_name, " returned ", _PyType_Name(Py_TYPE(g)),
                   " as the gradient of input '", name, "'; expected a Tensor or None.");
}

/// Whether input_layout entry `layout` is the one of a Tensor input.
bool isTensorLayout(PyObject* layout) {
  if (layout == gTensorLayout) {
    return true;
  }
  int eq = PyObject_RichCompareBool(layout, gTensorLayout, Py_EQ);
  if (eq < 0) {
    throw py::error_already_set();
  }
  return eq != 0;
}

/// The formula's gradients of the inputs, flattened as the node's next_functions: one per Tensor input,
/// `n` per Tensor[] input of n tensors (None where there is none); `result` is what backward returned.
py::object flatten(PyObject* node, PyObject* formula, py::object result) {
  std::string op_name = strOf(attr(formula, gOpName).ptr());
  if (!PyTuple_Check(result.ptr())) {
    result = steal(PyTuple_Pack(1, result.ptr()));
  }
  py::object layouts = fastSequence(attr(node, gInputLayout).ptr(), "OpNode.input_layout must be a sequence");
  Py_ssize_t n_inputs = PySequence_Fast_GET_SIZE(layouts.ptr());
  Py_ssize_t num_passed = ssizeOf(attr(node, gNumPassed).ptr());
  Py_ssize_t n_result = PyTuple_GET_SIZE(result.ptr());
  if (n_result != num_passed && n_result != n_inputs) {
    std::string expected = num_passed == n_inputs ? std::to_string(n_inputs)
                                                  : std::to_string(num_passed) + " or " + std::to_string(n_inputs);
    OPDISPATCH_CHECK(false, "The backward formula for ", op_name,
                     " returned an incorrect number of gradients (expected ", expected, ", got ", n_result,
                     "). Expected one gradient for each forward input, or for each positional input to the "
                     "operator. Use None for inputs that do not require a gradient.");
  }
  py::object flat = steal(PyList_New(0));
  auto append = [&](PyObject* g) {
    if (PyList_Append(flat.ptr(), g) < 0) {
      throw py::error_already_set();
    }
  };
  for (Py_ssize_t i = 0; i < n_inputs; ++i) {
    PyObject* g = i < n_result ? PyTuple_GET_ITEM(result.ptr(), i) : Py_None;
    PyObject* layout = PySequence_Fast_GET_ITEM(layouts.ptr(), i);
    if (layout == Py_None) {
      OPDISPATCH_CHECK(g == Py_None, "The backward formula for ", op_name, " returned a gradient for input '",
                       inputName(formula, i), "', which is not a Tensor: return None for non-Tensor inputs.");
    } else if (isTensorLayout(layout)) {
      if (g != Py_None && !isTensor(g)) {
        badGrad(op_name, inputName(formula, i), g);
      }
      append(g);
    } else {
      Py_ssize_t n = ssizeOf(layout);
      if (g == Py_None) {
        for (Py_ssize_t k = 0; k < n; ++k) {
          append(Py_None);
        }
        continue;
      }
      bool is_sequence = PyList_Check(g) || PyTuple_Check(g);
      if (!is_sequence || PySequence_Fast_GET_SIZE(g) != n) {
        OPDISPATCH_CHECK(
            false, "The backward formula for ", op_name, " must return a list of ", n,
            " gradients (or None) for the Tensor[] input '", inputName(formula, i), "', got ", _PyType_Name(Py_TYPE(g)),
            is_sequence ? " of length " + std::to_string(PySequence_Fast_GET_SIZE(g)) : std::string(), ".");
      }
      for (Py_ssize_t k = 0; k < n; ++k) {
        PyObject* item = PySequence_Fast_GET_ITEM(g, k);
        if (item != Py_None && !isTensor(item)) {
          badGrad(op_name, inputName(formula, i) + "[" + std::to_string(k) + "]", item);
        }
        append(item);
      }
    }
  }
  return flat;
}

/// _apply_op_node(node, grad_outputs): see the binding's docstring.
PyObject* applyOpNodeBinding(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return pythonEntry([&]() -> PyObject* {
    OPDISPATCH_CHECK_TYPE(nargs == 2 && PyList_Check(args[1]), "_apply_op_node(node, grad_outputs: list)");
    return applyOpNode(args[0], args[1]).release().ptr();
  });
}

/// _saved_tensors(ctx): see the binding's docstring.
PyObject* savedTensors(PyObject*, PyObject* ctx) {
  return pythonEntry([&]() -> PyObject* {
    py::object saved = attr(ctx, gSaved);
    OPDISPATCH_CHECK(
        saved.ptr() != Py_None,
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed): the tensors saved by ",
        strOf(attr(ctx, gPrivateOpName).ptr()),
        " were freed by the first backward. Specify retain_graph=True on the first backward() or autograd.grad() "
        "call if you need to backward through the graph a second time.");
    OPDISPATCH_CHECK_TYPE(PyTuple_Check(saved.ptr()), "saved_tensors: the saved values must be a tuple, got ",
                          _PyType_Name(Py_TYPE(saved.ptr())));
    py::object versions = fastSequence(attr(ctx, gVersions).ptr(), "saved_tensors: _versions must be a sequence");
    Py_ssize_t n = std::min(PyTuple_GET_SIZE(saved.ptr()), PySequence_Fast_GET_SIZE(versions.ptr()));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* t = PyTuple_GET_ITEM(saved.ptr(), i);
      if (!isTensor(t)) {
        continue;
      }
      unsigned long expected = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(versions.ptr(), i));
      if (expected == static_cast<unsigned long>(-1) && PyErr_Occurred()) {
        throw py::error_already_set();
      }
      TensorImpl* impl = unpackImpl(t);
      OPDISPATCH_CHECK(impl->version() == expected,
                       "one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: a tensor of shape ",
                       tupleString(impl->sizes()), " saved by ", strOf(attr(ctx, gPrivateOpName).ptr()),
                       " is at version ", impl->version(), "; expected version ", expected,
                       " instead. Hint: clone the tensor before modifying it in place, or do the in-place update "
                       "after calling backward.");
    }
    py::object saved_outputs = attr(ctx, gSavedOutputs);
    if (!truth(saved_outputs.ptr()) || !GradMode::is_enabled()) {
      return saved.release().ptr();
    }
    // Differentiating the backward pass: a saved output needs its place in the graph again.
    py::object relinked = steal(PySequence_List(saved.ptr()));
    py::object pairs = fastSequence(saved_outputs.ptr(), "saved_tensors: _saved_outputs must be a sequence");
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(pairs.ptr()); ++k) {
      py::object pair = fastSequence(PySequence_Fast_GET_ITEM(pairs.ptr(), k), "_saved_outputs: (index, output_nr)");
      OPDISPATCH_CHECK_VALUE(PySequence_Fast_GET_SIZE(pair.ptr()) == 2, "_saved_outputs: (index, output_nr) pairs");
      Py_ssize_t i = ssizeOf(PySequence_Fast_GET_ITEM(pair.ptr(), 0));
      Py_ssize_t nr = ssizeOf(PySequence_Fast_GET_ITEM(pair.ptr(), 1));
      OPDISPATCH_CHECK_INDEX(i >= 0 && i < PyList_GET_SIZE(relinked.ptr()), "_saved_outputs: index ", i,
                             " out of range");
      py::object detached = callMethod(PyList_GET_ITEM(relinked.ptr(), i), gDetach);
      OPDISPATCH_CHECK_TYPE(isTensor(detached.ptr()), "saved_tensors: detach() returned no tensor");
      setHistory(detached.ptr(), ctx, nr);
      PyList_SetItem(relinked.ptr(), i, detached.release().ptr()); // steals; the index is in range
    }
    return steal(PyList_AsTuple(relinked.ptr())).release().ptr();
  });
}

PyMethodDef kModuleMethods[] = {
    {"_apply_op_node", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(applyOpNodeBinding)), METH_FASTCALL,
     "_apply_op_node(node, grad_outputs: list) -> list: OpNode.apply: calls node.formula.backward(node, *grads) "
     "(one gradient per output of the operator, as OpNode._grads_per_output groups and materializes them) and "
     "flattens what it returns into one gradient per next_functions entry, raising RuntimeError, with the "
     "operator's name, for a wrong number of gradients, a gradient for a non-Tensor input, or one that is not "
     "a Tensor or None."},
    {"_saved_tensors", savedTensors, METH_O,
     "_saved_tensors(ctx) -> tuple: BackwardContext.saved_tensors: the values ctx saved, RuntimeError if they "
     "were freed by a backward without retain_graph or if a saved tensor was modified in place since (its "
     "version moved); while grad mode is on, a saved output of ctx's node is given its history again. "
     "PyTorch: SavedVariable::unpack."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

bool runsOpNodeApply(PyTypeObject* type) {
  return gApplyFunction != nullptr && _PyType_Lookup(type, gApply) == gApplyFunction;
}

bool runsOpNodeRelease(PyTypeObject* type) {
  return gReleaseFunction != nullptr && _PyType_Lookup(type, gRelease) == gReleaseFunction;
}

py::object applyOpNode(PyObject* node, PyObject* grad_outputs) {
  OPDISPATCH_CHECK(gOneTensor != nullptr, "_apply_op_node: no OpNode class is installed (graph.py installs it)");
  py::object formula = attr(node, gFormula);
  py::object grads = py::reinterpret_borrow<py::object>(grad_outputs);
  if (attr(formula.ptr(), gMaterialize).ptr() != Py_None || attr(node, gOutputLayout).ptr() != gOneTensor) {
    grads = fastSequence(callMethod(node, gGradsPerOutput, grad_outputs).ptr(),
                         "OpNode._grads_per_output must return a sequence");
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(grads.ptr());
  std::vector<PyObject*> call_args(static_cast<size_t>(n) + 1);
  call_args[0] = node;
  for (Py_ssize_t i = 0; i < n; ++i) {
    call_args[static_cast<size_t>(i) + 1] = PySequence_Fast_GET_ITEM(grads.ptr(), i);
  }
  py::object backward = attr(formula.ptr(), gBackward);
  py::object result = steal(PyObject_Vectorcall(backward.ptr(), call_args.data(), call_args.size(), nullptr));
  return flatten(node, formula.ptr(), std::move(result));
}

void releaseOpNode(PyObject* node) {
  if (PyObject_SetAttr(node, gSaved, Py_None) < 0) {
    throw py::error_already_set();
  }
}

void initOpNodeBindings(py::module_& m) {
  intern(gApply, "apply");
  intern(gRelease, "release");
  intern(gFormula, "formula");
  intern(gMaterialize, "materialize");
  intern(gBackward, "backward");
  intern(gOutputLayout, "output_layout");
  intern(gGradsPerOutput, "_grads_per_output");
  intern(gInputLayout, "input_layout");
  intern(gInputNames, "input_names");
  intern(gNumPassed, "num_passed");
  intern(gOpName, "op_name");
  intern(gPrivateOpName, "_op_name");
  intern(gSaved, "_saved");
  intern(gVersions, "_versions");
  intern(gSavedOutputs, "_saved_outputs");
  intern(gDetach, "detach");
  if (PyModule_AddFunctions(m.ptr(), kModuleMethods) < 0) {
    throw py::error_already_set();
  }
  m.def(
      "_set_op_node_class",
      [](py::object cls) {
        py::object apply = cls.attr("apply");
        py::object release = cls.attr("release");
        py::tuple one_tensor = cls.attr("output_layout");
        OPDISPATCH_CHECK_VALUE(one_tensor.size() == 1, "_set_op_node_class: output_layout must have one entry");
        py::object tensor_layout = one_tensor[0];
        Py_XSETREF(gApplyFunction, apply.release().ptr());
        Py_XSETREF(gReleaseFunction, release.release().ptr());
        Py_XSETREF(gOneTensor, one_tensor.release().ptr());
        Py_XSETREF(gTensorLayout, tensor_layout.release().ptr());
      },
      py::arg("cls"),
      "Installs graph.OpNode: the engine runs its apply and release in C (_apply_op_node, and dropping the "
      "saved tensors) for nodes whose class keeps them; its output_layout is the layout of one Tensor return.");
}

} // namespace opdispatch::python
