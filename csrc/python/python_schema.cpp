// parse_schema and the FunctionSchema / Argument / AliasInfo classes as
// Python sees them (as torch._C.parse_schema), and the schema types as
// structured objects (torch._C.Type, TensorType, OptionalType, ListType, ...).
#include <set>
#include <string>
#include <unordered_map>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/schema/SchemaParser.h>

#include "IValueConversion.h"
#include "StrView.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {
/// A Python set of alias set names ('a', '*', '$0'), as torch._C's AliasInfo returns them.
std::set<std::string> asSet(const std::vector<std::string>& sets) { return {sets.begin(), sets.end()}; }

// Note [Python type objects]
// Every interned Type has one Python object, made on first use and kept for
// the life of the process like the Type itself, so `arg.type is
// TensorType.get()` holds as in PyTorch (whose _library compares with `is`).
// Its Python class is PyTorch's for the kind (TensorType, OptionalType, ...;
// kinds PyTorch gives no class of their own are plain Type). Types made by a
// constructor (`ListType(TensorType.get())`) are new objects equal (==) to
// the interned one, as in PyTorch.
struct PyType {
  TypePtr type;
};
/// Classes with a get() of the one type of their kind, and the others.
// clang-format off
#define OPDISPATCH_PY_SINGLETON_TYPE_CLASSES(_)                                                           \
  _(TensorType, Tensor) _(IntType, Int) _(SymIntType, SymInt) _(FloatType, Float) _(ComplexType, Complex) \
  _(BoolType, Bool) _(SymBoolType, SymBool) _(StringType, Str) _(NumberType, Scalar)                     \
  _(DeviceObjType, Device) _(StreamObjType, Stream) _(NoneType, NoneType) _(AnyType, Any)
#define OPDISPATCH_PY_TYPE_CLASSES(_)                                                                    \
  OPDISPATCH_PY_SINGLETON_TYPE_CLASSES(_)                                                                \
  _(OptionalType, Optional) _(ListType, List) _(TupleType, Tuple) _(DictType, Dict) _(FutureType, Future) \
  _(AwaitType, Await) _(RRefType, RRef) _(UnionType, Union)
// clang-format on
#define OPDISPATCH_DECLARE(Name, Kind) \
  struct Py##Name : PyType {};
OPDISPATCH_PY_TYPE_CLASSES(OPDISPATCH_DECLARE)
#undef OPDISPATCH_DECLARE

/// The one Python object of `t` (Note [Python type objects]). GIL held.
py::object typeObject(TypePtr t) {
  static auto* cache = new std::unordered_map<TypePtr, py::object>();
  auto it = cache->find(t);
  if (it != cache->end()) {
    return it->second;
  }
  py::object obj;
  switch (t->kind()) {
#define OPDISPATCH_CASE(Name, Kind) \
  case TypeKind::Kind:              \
    obj = py::cast(Py##Name{{t}});  \
    break;
    OPDISPATCH_PY_TYPE_CLASSES(OPDISPATCH_CASE)
#undef OPDISPATCH_CASE
    default:
      obj = py::cast(PyType{t});
  }
  cache->emplace(t, obj);
  return obj;
}

py::list typeList(const std::vector<TypePtr>& types) {
  py::list out;
  for (TypePtr t : types) {
    out.append(typeObject(t));
  }
  return out;
}

std::vector<TypePtr> unwrapTypes(const std::vector<PyType>& types) {
  std::vector<TypePtr> out;
  out.reserve(types.size());
  for (const auto& t : types) {
    out.push_back(t.type);
  }
  return out;
}

/// `TensorType.get()` and the like: the interned base type.
template <class PyClass>
void defGet(PyClass& cls, TypeKind kind) {
  cls.def_static("get", [kind] { return typeObject(Type::get(kind)); }, "The (only) type of this kind.");
}

/// `getElementType()` of a type with one element (PyTorch: SingleElementType).
template <class PyClass>
void defElement(PyClass& cls) {
  cls.def("getElementType", [](const PyType& t) { return typeObject(t.type->elem()); }, "The element type.");
}

void initTypeBindings(py::module_& m) {
  py::class_<PyType>(m, "Type", "A schema type (PyTorch: torch._C.Type).")
      .def(
          "kind", [](const PyType& t) { return t.type->kindName(); },
          "PyTorch's kind name: 'TensorType', 'IntType', 'OptionalType', ...")
      .def(
          "str", [](const PyType& t) { return t.type->toString(); },
          "The type as written in a schema: 'Tensor?', 'int[]', 'SymInt'.")
      .def_property_readonly(
          "annotation_str", [](const PyType& t) { return t.type->annotationStr(); },
          "The type as a Python annotation: 'Optional[Tensor]', 'List[int]'.")
      .def(
          "containedTypes", [](const PyType& t) { return typeList(t.type->containedTypes()); },
          "The types this one is built from (element, members, key and value).")
      .def(
          "isSubtypeOf", [](const PyType& t, const PyType& other) { return t.type->isSubtypeOf(other.type); },
          py::arg("other"), "Whether every value of this type is a value of `other`.")
      .def(
          "__eq__", [](const PyType& a, const PyType& b) { return a.type == b.type; }, py::is_operator())
      .def("__eq__", [](const PyType&, const py::object&) { return false; })
      .def("__hash__", [](const PyType& t) { return std::hash<TypePtr>()(t.type); })
      .def("__str__", [](const PyType& t) { return t.type->annotationStr(); })
      .def("__repr__", [](const PyType& t) { return t.type->annotationStr(); });

#define OPDISPATCH_CLASS(Name, Kind) py::class_<Py##Name, PyType> cls##Name(m, #Name);
  OPDISPATCH_PY_TYPE_CLASSES(OPDISPATCH_CLASS)
#undef OPDISPATCH_CLASS
#define OPDISPATCH_GET(Name, Kind) defGet(cls##Name, TypeKind::Kind);
  OPDISPATCH_PY_SINGLETON_TYPE_CLASSES(OPDISPATCH_GET)
#undef OPDISPATCH_GET

  clsOptionalType.def(py::init([](const PyType& elem) { return PyOptionalType{{Type::optionalOf(elem.type)}}; }),
                      py::arg("element"), "`element?`. Raises ValueError for NoneType.");
  clsOptionalType.def_static("ofTensor", [] { return typeObject(Type::optionalOf(Type::tensor())); });
  defElement(clsOptionalType);
  clsListType.def(py::init([](const PyType& elem) { return PyListType{{Type::listOf(elem.type)}}; }),
                  py::arg("element"));
  defElement(clsListType);
  auto listOf = [&](const char* name, TypeKind kind) {
    clsListType.def_static(name, [kind] { return typeObject(Type::listOf(Type::get(kind))); });
  };
  listOf("ofInts", TypeKind::Int);
  listOf("ofFloats", TypeKind::Float);
  listOf("ofComplexDoubles", TypeKind::Complex);
  listOf("ofBools", TypeKind::Bool);
  listOf("ofStrings", TypeKind::Str);
  listOf("ofTensors", TypeKind::Tensor);
  clsTupleType
      .def(py::init([](const std::vector<PyType>& elems) { return PyTupleType{{Type::tupleOf(unwrapTypes(elems))}}; }),
           py::arg("elements"))
      .def("elements", [](const PyType& t) { return typeList(t.type->containedTypes()); });
  clsDictType
      .def(py::init([](const PyType& k, const PyType& v) { return PyDictType{{Type::dictOf(k.type, v.type)}}; }),
           py::arg("key"), py::arg("value"), "Raises ValueError for a key type PyTorch does not allow.")
      .def("getKeyType", [](const PyType& t) { return typeObject(t.type->containedTypes()[0]); })
      .def("getValueType", [](const PyType& t) { return typeObject(t.type->containedTypes()[1]); });
  clsFutureType.def(py::init([](const PyType& elem) { return PyFutureType{{Type::futureOf(elem.type)}}; }));
  defElement(clsFutureType);
  clsAwaitType.def(py::init([](const PyType& elem) { return PyAwaitType{{Type::awaitOf(elem.type)}}; }));
  defElement(clsAwaitType);
  defElement(clsRRefType);
  clsUnionType.def(py::init([](const std::vector<PyType>& members) {
                     TypePtr u = Type::unionOf(unwrapTypes(members));
                     OPDISPATCH_CHECK_VALUE(u->kind() == TypeKind::Union, "Union of ", u->toString(),
                                            " is an Optional: use OptionalType");
                     return PyUnionType{{u}};
                   }),
                   py::arg("types"),
                   "The normalised union (see Type::unionOf); raises ValueError for fewer than "
                   "two distinct types.");
}

std::string streamed(const Argument& a) {
  std::ostringstream ss;
  ss << a;
  return ss.str();
}
} // namespace

void initSchemaBindings(py::module_& m) {
  initTypeBindings(m);

  py::class_<AliasInfo>(m, "_AliasInfo", "An alias annotation such as (a!) or (a -> *).")
      .def_readonly("is_write", &AliasInfo::is_write)
      .def_property_readonly(
          "before_set", [](const AliasInfo& a) { return asSet(a.before_set); },
          "Alias sets before the call: a set of names ('a', '*', '$0' for `Tensor!`).")
      .def_property_readonly("after_set", [](const AliasInfo& a) { return asSet(a.after_set); })
      .def_readonly("contained_types", &AliasInfo::contained_types)
      .def("__repr__", [](const AliasInfo& a) {
        std::ostringstream ss;
        ss << a;
        return ss.str();
      });

  py::class_<Argument>(m, "Argument", "One argument or return of a FunctionSchema.")
      .def_property_readonly("name", &Argument::name)
      .def_property_readonly(
          "type", [](const Argument& a) { return typeObject(a.type()->fakeType()); },
          "The type as PyTorch's Argument.type: SymInt, ScalarType, Layout and MemoryFormat "
          "read as int (see real_type). str(t) is its annotation ('Optional[Tensor]'), "
          "t.str() its schema spelling.")
      .def_property_readonly(
          "real_type", [](const Argument& a) { return typeObject(a.type()); },
          "The type as written: SymInt, ScalarType, ... kept.")
      .def_property_readonly("N", &Argument::N)
      .def_property_readonly("default_value",
                             [](const Argument& a) -> py::object {
                               if (!a.has_default_value()) {
                                 return py::none();
                               }
                               try {
                                 return py::reinterpret_steal<py::object>(toPyObject(*a.default_value(), a.type()));
                               } catch (const ValueError& e) {
                                 throw ValueError(
                                     detail::str("the default value of argument '", a.name(), "': ", e.what()));
                               }
                             })
      .def("has_default_value", &Argument::has_default_value)
      .def_property_readonly("kwarg_only", &Argument::kwarg_only)
      .def_property_readonly("is_write", &Argument::is_write)
      .def_property_readonly("is_out", [](const Argument& a) { return a.kwarg_only() && a.is_write(); })
      .def_property_readonly("alias_info",
                             [](const Argument& a) -> std::optional<AliasInfo> {
                               return a.alias_info() ? std::optional<AliasInfo>(*a.alias_info()) : std::nullopt;
                             })
      .def("__str__", &streamed)
      .def("__repr__", [](const Argument& a) { return "<Argument " + streamed(a) + ">"; });

  py::class_<FunctionSchema>(m, "FunctionSchema", "A parsed operator schema.")
      .def_property_readonly("name", &FunctionSchema::name)
      .def_property_readonly("overload_name", &FunctionSchema::overload_name)
      .def_property_readonly("arguments", &FunctionSchema::arguments)
      .def_property_readonly("returns", &FunctionSchema::returns)
      .def_property_readonly("is_mutable", &FunctionSchema::isMutable)
      .def_property_readonly("is_vararg", &FunctionSchema::is_vararg, "The arguments end with `...`.")
      .def_property_readonly("is_varret", &FunctionSchema::is_varret, "The returns end with `...`.")
      .def(
          "__eq__", [](const FunctionSchema& a, const FunctionSchema& b) { return a == b; }, py::is_operator())
      .def("__hash__", [](const FunctionSchema& s) { return std::hash<std::string>()(s.toString()); })
      .def("__str__", &FunctionSchema::toString)
      .def("__repr__", [](const FunctionSchema& s) { return "FunctionSchema(" + s.toString() + ")"; });

  m.def(
      "parse_schema", [](StrView schema, bool allow_typevars) { return parseSchema(schema.text, allow_typevars); },
      py::arg("schema"), py::arg("allow_typevars") = true,
      "Parses a schema string; raises ValueError with the position of the problem. allow_typevars: accept "
      "type variables such as `t` (operator definitions do not). PyTorch: torch._C.parse_schema.");
  m.def(
      "_parse_name",
      [](const std::string& n) {
        OperatorName name = parseName(n);
        return std::make_pair(name.name, name.overload_name);
      },
      "Parses 'ns::name[.overload]' into (name, overload_name).");
}

} // namespace opdispatch::python
