// Binding a Python call's arguments to a schema and running it through the
// call unit (Note [Python call arguments], Note [One call path]).
#include "PythonCall.h"

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/CallUnit.h>

#include "IValueConversion.h"
#include "PythonKernelHolder.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

/// Whether converting `obj` to an IValue of `type` and back gives `obj`
/// itself (so the conversion can be skipped for a Python kernel).
bool keptAsIs(PyObject* obj, TypePtr type) {
  switch (type->kind()) {
    case TypeKind::Tensor:
      return isTensor(obj);
    case TypeKind::Optional:
      return obj == Py_None || keptAsIs(obj, type->elem());
    case TypeKind::Int:
    case TypeKind::SymInt: {
      if (!PyLong_CheckExact(obj)) {
        return false;
      }
      int overflow = 0;
      PyLong_AsLongLongAndOverflow(obj, &overflow);
      return overflow == 0;
    }
    case TypeKind::Bool:
    case TypeKind::SymBool:
      return PyBool_Check(obj);
    case TypeKind::Float:
      return PyFloat_CheckExact(obj);
    case TypeKind::Str:
      if (PyUnicode_CheckExact(obj) && PyUnicode_AsUTF8AndSize(obj, nullptr) != nullptr) {
        return true;
      }
      PyErr_Clear();  // not valid UTF-8: the conversion raises the error that names the argument
      return false;
    case TypeKind::Scalar:
      return PyBool_Check(obj) || PyFloat_CheckExact(obj) || keptAsIs(obj, Type::int_());
    default:
      return false;
  }
}

size_t positionalCount(const FunctionSchema& schema) {
  size_t n = 0;
  while (n < schema.arguments().size() && !schema.arguments()[n].kwarg_only()) {
    ++n;
  }
  return n;
}

} // namespace

BoundArguments::BoundArguments(const AnnotatedSchema& s, PyCallArguments call) : schema_(s), args_(s.num_arguments) {
  const FunctionSchema& schema = s.schema;
  const auto& arguments = schema.arguments();
  const size_t num_positional = positionalCount(schema);
  if (call.nargs > num_positional) {
    throw TypeError(detail::str(schema.operator_name(), "() takes ", num_positional, " positional argument",
                                num_positional == 1 ? "" : "s", " but ", call.nargs, " were given. Declaration: ",
                                schema));
  }
  const size_t num_kw = call.kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(call.kwnames)) : 0;
  size_t kw_used = 0;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Argument& arg = arguments[i];
    PyObject* value = i < call.nargs ? call.args[i] : nullptr;
    for (size_t k = 0; k < num_kw; ++k) {
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(call.kwnames, k), arg.name().c_str()) == 0) {
        if (value != nullptr) {
          throw TypeError(detail::str(schema.operator_name(), "() got multiple values for argument '", arg.name(),
                                      "'"));
        }
        value = call.args[call.nargs + k];
        ++kw_used;
      }
    }
    BoundArgument& b = args_[i];
    if (value != nullptr) {
      b.given = true;
      if (keptAsIs(value, arg.type())) {
        b.object = value;
      } else {
        b.value = toIValue(value, arg, schema, i);
      }
    } else if (arg.default_value()) {
      b.value = *arg.default_value();
    } else {
      throw TypeError(detail::str(schema.operator_name(), "() missing value for argument '", arg.name(),
                                  "'. Declaration: ", schema));
    }
  }
  if (kw_used != num_kw) {
    for (size_t k = 0; k < num_kw; ++k) {
      std::string name = py::cast<std::string>(PyTuple_GET_ITEM(call.kwnames, k));
      if (!schema.argumentIndexWithName(name)) {
        throw TypeError(detail::str(schema.operator_name(), "() got an unexpected keyword argument '", name,
                                    "'. Declaration: ", schema));
      }
    }
  }
}

BoundArguments::BoundArguments(const AnnotatedSchema& s, Stack& stack) : schema_(s), args_(s.num_arguments) {
  IValue* values = stack.data() + (stack.size() - s.num_arguments);
  for (size_t i = 0; i < s.num_arguments; ++i) {
    args_[i].value = std::move(values[i]);
    args_[i].given = true;
  }
  drop(stack, s.num_arguments);
}

void BoundArguments::pushIValues(Stack& stack) const {
  const FunctionSchema& schema = schema_.schema;
  for (size_t i = 0; i < args_.size(); ++i) {
    const BoundArgument& a = args_[i];
    if (a.object != nullptr) {
      stack.push_back(toIValue(a.object, schema.arguments()[i], schema, i));
    } else {
      stack.push_back(a.value);
    }
  }
}

bool BoundArguments::equalsDefault(size_t i) const {
  const BoundArgument& a = args_[i];
  if (!a.given) {
    return true;
  }
  const Argument& arg = schema_.schema.arguments()[i];
  const auto& d = arg.default_value();
  if (!d) {
    return false;
  }
  if (a.object == nullptr) {
    return a.value.equals(*d);
  }
  if (a.object == Py_None) {
    return d->isNone();
  }
  return toIValue(a.object, arg, schema_.schema, i).equals(*d);
}

PythonKernelArguments::PythonKernelArguments(const BoundArguments& args) : schema_(args.schema().schema) {
  const FunctionSchema& schema = schema_;
  const auto& arguments = schema.arguments();
  const size_t n = arguments.size();
  const size_t num_positional = positionalCount(schema);
  num_positional_ = num_positional;
  while (num_positional_ > 0 && args.equalsDefault(num_positional_ - 1)) {
    --num_positional_;
  }
  InlineVector<uint8_t, 16> keyword(n);
  size_t num_keywords = 0;
  for (size_t i = num_positional; i < n; ++i) {
    keyword[i] = !args.equalsDefault(i);
    num_keywords += keyword[i] ? 1 : 0;
  }
  buffer_.resize(kPrefix + num_positional_ + num_keywords);
  owned_.resize(buffer_.size());
  for (size_t i = 0; i < num_positional_; ++i) {
    append(args, i);
  }
  if (num_keywords == 0) {
    return;
  }
  kwnames_ = py::reinterpret_steal<py::object>(PyTuple_New(static_cast<Py_ssize_t>(num_keywords)));
  if (!kwnames_) {
    throw py::error_already_set();
  }
  Py_ssize_t k = 0;
  for (size_t i = num_positional; i < n; ++i) {
    if (keyword[i]) {
      PyObject* name = PyUnicode_FromStringAndSize(arguments[i].name().data(),
                                                   static_cast<Py_ssize_t>(arguments[i].name().size()));
      if (name == nullptr) {
        throw py::error_already_set();
      }
      PyTuple_SET_ITEM(kwnames_.ptr(), k++, name);
      append(args, i);
    }
  }
}

PythonKernelArguments::~PythonKernelArguments() {
  for (size_t i = kPrefix; i < size_; ++i) {
    if (owned_[i]) {
      Py_DECREF(buffer_[i]);
    }
  }
}

void PythonKernelArguments::append(const BoundArguments& args, size_t i) {
  const BoundArgument& a = args[i];
  PyObject* obj = a.object;
  if (obj == nullptr) {
    obj = toPyObject(a.value, args.schema().schema.arguments()[i].type());
    if (obj == nullptr) {
      throw py::error_already_set();
    }
    owned_[size_] = true;
  }
  buffer_[size_++] = obj;
}

py::object PythonCallFrame::invoke(const OperatorHandle& op, KernelRef kernel, DispatchKeySet ks) {
  PythonKernelHolder* holder = PythonKernelHolder::of(kernel);
  if (holder == nullptr) {
    Stack stack;
    stack.reserve(args_.size());
    args_.pushIValues(stack);
    kernel.callBoxed(op, ks, &stack);
    PyObject* out = popResultsToPython(args_.schema().schema, stack);
    if (out == nullptr) {
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(out);
  }
  py::object func = holder->function();
  if (!func) {
    // Deregistered while this call was on its way here: run the table's
    // kernel now (no second round of effects: they belong to this call).
    const DispatchTable::Lookup now = op.entry().table().lookup(ks);
    holder->checkNotStillChosen(op, now.kernel);
    return invoke(op, now.kernel, now.ks);
  }
  PythonKernelArguments python_args(args_);
  return holder->call(func, op, ks, python_args);
}

const AnnotatedSchema& schemaForCall(const OperatorEntry& e) {
  const AnnotatedSchema* s = e.schemaPtr();
  OPDISPATCH_CHECK(s != nullptr, "operator ", e.operator_name(),
                   " has no schema: its definition was removed (the Library that defined it was destroyed)");
  return *s;
}

py::object callBound(const OperatorHandle& op, const BoundArguments& args, const DispatchKeySet* redispatch_ks) {
  PythonCallFrame frame(args);
  if (redispatch_ks != nullptr) {
    return redispatchOperator(op, *redispatch_ks, frame);
  }
  return callOperator(op, frame);
}

py::object callFromPython(const OperatorHandle& op, PyCallArguments call, const DispatchKeySet* redispatch_ks) {
  BoundArguments args(schemaForCall(op.entry()), call);
  return callBound(op, args, redispatch_ks);
}

PyCallArgumentsFromTuple::PyCallArgumentsFromTuple(PyObject* args, PyObject* kwargs) {
  nargs_ = args ? static_cast<size_t>(PyTuple_GET_SIZE(args)) : 0;
  const size_t nkw = kwargs ? static_cast<size_t>(PyDict_GET_SIZE(kwargs)) : 0;
  flat_.resize(nargs_ + nkw);
  for (size_t i = 0; i < nargs_; ++i) {
    flat_[i] = PyTuple_GET_ITEM(args, i);
  }
  if (nkw == 0) {
    return;
  }
  kwnames_ = py::reinterpret_steal<py::object>(PyTuple_New(static_cast<Py_ssize_t>(nkw)));
  if (!kwnames_) {
    throw py::error_already_set();
  }
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  size_t k = 0;
  while (PyDict_Next(kwargs, &pos, &key, &value)) {
    Py_INCREF(key);
    PyTuple_SET_ITEM(kwnames_.ptr(), static_cast<Py_ssize_t>(k), key);
    flat_[nargs_ + k] = value;
    ++k;
  }
}

} // namespace opdispatch::python
