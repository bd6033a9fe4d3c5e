// C++ kernels for testing argument binding (tests/fuzz/fuzz_call_binding.py,
// tests/test_reliability.py), built with opdispatch.cpp_extension.load.
//
// call_binding::install(name, key) registers, for any operator, a boxed C++
// kernel that checks that every argument on the stack has the IValue kind
// its schema type promises (the oracle of the fuzz target: binding must
// never hand a kernel a value of another type) and returns a value of each
// declared return type. Also kernels whose results cannot become Python
// values (a str that is not UTF-8).
#include <memory>
#include <string>
#include <vector>

#include <opdispatch/core/Exception.h>
#include <opdispatch/library.h>

namespace {

using namespace opdispatch;

/// Whether `v` is what binding must produce for schema type `t`.
bool matches(const IValue& v, TypePtr t) {
  switch (t->kind()) {
    case TypeKind::Tensor:
      return v.isTensor();
    case TypeKind::Optional:
      return v.isNone() || matches(v, t->elem());
    case TypeKind::Int:
    case TypeKind::SymInt:
    case TypeKind::Layout:
    case TypeKind::MemoryFormat:
    case TypeKind::QScheme:
      return v.isInt();
    case TypeKind::Float:
      return v.isDouble();
    case TypeKind::Bool:
    case TypeKind::SymBool:
      return v.isBool();
    case TypeKind::Str:
      return v.isString();
    case TypeKind::Scalar:
      return v.isInt() || v.isDouble() || v.isBool();
    case TypeKind::ScalarType:
      return v.isScalarType() || (v.isInt() && isValidScalarType(v.toInt()));
    case TypeKind::Device:
      return v.isDevice();
    case TypeKind::Generator:
      return v.isPyObject();
    case TypeKind::Any:
      return true;
    case TypeKind::List: {
      if (!v.isList()) {
        return false;
      }
      if (v.listSize() == 0) {
        return true;
      }
      switch (t->elem()->kind()) {
        case TypeKind::Int:
        case TypeKind::SymInt:
          return v.isIntList();
        case TypeKind::Float:
          return v.isDoubleList();
        case TypeKind::Bool:
          return v.isBoolList();
        case TypeKind::Tensor:
          return v.isTensorList();
        default:
          break;
      }
      if (t->elem()->isOptional() && t->elem()->elem()->kind() == TypeKind::Tensor) {
        return v.isOptionalTensorList();
      }
      if (!v.isGenericList()) {
        return false;
      }
      for (const IValue& e : v.toGenericList()) {
        if (!matches(e, t->elem())) {
          return false;
        }
      }
      return true;
    }
  }
  return false;
}

/// A value of schema type `t` for a result.
IValue sample(TypePtr t) {
  switch (t->kind()) {
    case TypeKind::Tensor:
      return empty({0});
    case TypeKind::Int:
    case TypeKind::SymInt:
    case TypeKind::Layout:
    case TypeKind::MemoryFormat:
    case TypeKind::QScheme:
      return IValue(int64_t(0));
    case TypeKind::Float:
      return IValue(0.0);
    case TypeKind::Bool:
    case TypeKind::SymBool:
      return IValue(false);
    case TypeKind::Str:
      return IValue(std::string());
    case TypeKind::Scalar:
      return IValue(int64_t(1));
    case TypeKind::ScalarType:
      return IValue(ScalarType::Float);
    case TypeKind::Device:
      return IValue(Device("cpu"));
    case TypeKind::List:
      switch (t->elem()->kind()) {
        case TypeKind::Int:
        case TypeKind::SymInt:
          return IValue(std::vector<int64_t>{});
        case TypeKind::Float:
          return IValue(std::vector<double>{});
        case TypeKind::Bool:
          return IValue(std::vector<bool>{});
        case TypeKind::Tensor:
          return IValue(std::vector<Tensor>{});
        default:
          return IValue::genericList({});
      }
    case TypeKind::Optional:
    case TypeKind::Generator:
    case TypeKind::Any:
      return IValue();
  }
  return IValue();
}

void checkArguments(const OperatorHandle& op, Stack* stack) {
  const FunctionSchema& schema = op.schema();
  const auto& args = schema.arguments();
  OPDISPATCH_CHECK(stack->size() >= args.size(), "BINDING BUG: ", schema.operator_name(), " got ", stack->size(),
                   " values for ", args.size(), " arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    const IValue& v = peek(*stack, i, args.size());
    OPDISPATCH_CHECK(matches(v, args[i].type()), "BINDING BUG: ", schema.operator_name(), ": argument '",
                     args[i].name(), "' of type ", args[i].type()->toString(), " arrived as ", v.tagKind());
  }
  drop(*stack, args.size());
  for (const Argument& r : schema.returns()) {
    stack->push_back(sample(r.type()));
  }
}

std::vector<std::unique_ptr<Library>>& installed() {
  static std::vector<std::unique_ptr<Library>> libraries;
  return libraries;
}

/// Registers checkArguments as the kernel of `name` ("ns::op" or "ns::op.overload") at `key`.
void install(const std::string& name, const std::string& key) {
  size_t ns_end = name.find("::");
  OPDISPATCH_CHECK_VALUE(ns_end != std::string::npos, "install: '", name, "' is not 'ns::op'");
  auto lib = std::make_unique<Library>(Library::IMPL, name.substr(0, ns_end), parseDispatchKey(key), __FILE__,
                                       __LINE__);
  lib->impl(name.substr(ns_end + 2), CppFunction::makeFromBoxedFunction<&checkArguments>());
  installed().push_back(std::move(lib));
}

/// Undoes every install().
void uninstallAll() { installed().clear(); }

std::string badUtf8(const Tensor&) { return "ok \xff\xfe"; }

std::vector<std::string> badUtf8List(const Tensor&) { return {"fine", "\xc3"}; }

} // namespace

OPDISPATCH_LIBRARY(call_binding, m) {
  m.def("install(str name, str dispatch_key) -> ()", OPDISPATCH_FN(install));
  m.def("uninstall_all() -> ()", OPDISPATCH_FN(uninstallAll));
  m.def("bad_utf8(Tensor x) -> str", OPDISPATCH_FN(badUtf8));
  m.def("bad_utf8_list(Tensor x) -> str[]", OPDISPATCH_FN(badUtf8List));
}
