// Library, CppFunction and the OPDISPATCH_LIBRARY* macros: how C++ code
// defines operators and registers kernels. PyTorch: torch/library.h (with the
// name map torch::/c10::/at:: -> opdispatch::, TORCH_ -> OPDISPATCH_).
//
// Example (an extension's .cpp file):
//
//   Tensor relu_cpu(const Tensor& x) { ... }
//   void relu_out_cpu(const Tensor& x, Tensor& out) { ... }  // writes to `out`
//   Tensor relu_meta(const Tensor& x) { return opdispatch::empty(x.sizes(), x.dtype(), x.device()); }
//
//   OPDISPATCH_LIBRARY(myops, m) {
//     m.def("relu(Tensor x) -> Tensor", {opdispatch::Tag::pointwise});
//     m.def("relu_out(Tensor x, Tensor(a!) out) -> ()");
//   }
//   OPDISPATCH_LIBRARY_IMPL(myops, CPU, m) {
//     m.impl("relu", relu_cpu);
//     m.impl(OPDISPATCH_SELECTIVE_NAME("myops::relu_out"), OPDISPATCH_FN(relu_out_cpu));
//   }
//   OPDISPATCH_LIBRARY_FRAGMENT(myops, m) {  // in any number of files
//     m.impl("relu", opdispatch::kMeta, &relu_meta);
//   }
//
// Each block registers when the shared library loads and deregisters when it
// unloads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <opdispatch/Dispatch.h>
#include <opdispatch/Functions.h>
#include <opdispatch/Macros.h>
#include <opdispatch/Parallel.h>
#include <opdispatch/core/Device.h>
#include <opdispatch/core/GradMode.h>
#include <opdispatch/core/InternedString.h>
#include <opdispatch/core/StringView.h>
#include <opdispatch/core/Tag.h>
#include <opdispatch/core/TensorUtils.h>
#include <opdispatch/core/Warning.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/schema/InferSchema.h>
#include <opdispatch/schema/SchemaParser.h>

namespace opdispatch {

namespace detail {
template <class T, class = void>
struct is_functor : std::false_type {};
template <class T>
struct is_functor<T, std::void_t<decltype(&T::operator())>> : std::true_type {};

/// An operator name or schema from OPDISPATCH_SELECTIVE_NAME/_SCHEMA.
/// `Enabled` is false when a selective build leaves the operator out: then
/// Library::def and Library::impl ignore it. PyTorch: torch::detail::SelectiveStr.
template <bool Enabled>
class SelectiveStr {
 public:
  constexpr explicit SelectiveStr(const char* s) : s_(s) {}
  constexpr explicit operator const char*() const { return s_; }

 private:
  const char* s_;
};

/// Whether `name` is one of the ';'-separated entries of `allowlist`.
/// PyTorch: c10::impl::op_allowlist_contains.
constexpr bool allowlistContains(std::string_view allowlist, std::string_view name) {
  while (!allowlist.empty()) {
    size_t end = allowlist.find(';');
    if (allowlist.substr(0, end) == name) {
      return true;
    }
    allowlist = end == std::string_view::npos ? std::string_view() : allowlist.substr(end + 1);
  }
  return false;
}

/// The operator name of a schema string: what comes before '('.
constexpr std::string_view schemaOperatorName(std::string_view schema) { return schema.substr(0, schema.find('(')); }
} // namespace detail

/// A kernel ready for registration: the KernelFunction, plus (for typed C++
/// functions) its C++ signature and inferred schema, an optional dispatch key
/// and a debug name.
class CppFunction final {
 public:
  /// A function pointer: `m.impl("relu", relu_cpu)`.
  template <class Func, std::enable_if_t<std::is_function_v<Func>, int> = 0>
  explicit CppFunction(Func* f)
      : func_(KernelFunction::makeFromUnboxedRuntimeFunction(f)),
        cpp_signature_(CppSignature::make<Func>()),
        schema_(inferFunctionSchema<Func>()) {}
  /// A function known at compile time: `OPDISPATCH_FN(relu_cpu)` (calls can be inlined).
  template <class FuncPtr, std::enable_if_t<detail::is_compile_time_function_pointer<FuncPtr>::value, int> = 0>
  explicit CppFunction(FuncPtr f)
      : func_(KernelFunction::makeFromUnboxedFunction(f)),
        cpp_signature_(CppSignature::make<typename FuncPtr::FuncPtrType>()),
        schema_(inferFunctionSchema<std::remove_pointer_t<typename FuncPtr::FuncPtrType>>()) {}
  /// A lambda or functor with a typed operator().
  template <class Lambda, std::enable_if_t<detail::is_functor<std::decay_t<Lambda>>::value &&
                                               !detail::is_compile_time_function_pointer<std::decay_t<Lambda>>::value &&
                                               !std::is_same_v<std::decay_t<Lambda>, CppFunction>,
                                           int> = 0>
  explicit CppFunction(Lambda&& f)
      : func_(KernelFunction::makeFromUnboxedLambda(std::forward<Lambda>(f))),
        cpp_signature_(CppSignature::make<std::decay_t<Lambda>>()),
        schema_(inferFunctionSchema<typename detail::infer_function_traits_t<std::decay_t<Lambda>>::func_type>()) {}

  CppFunction(CppFunction&&) noexcept = default;
  CppFunction& operator=(CppFunction&&) noexcept = default;

  /// "Skip this key": the dispatcher masks the key out. PyTorch: makeFallthrough.
  static CppFunction makeFallthrough() { return CppFunction(KernelFunction::makeFallthrough()); }
  /// A boxed function `void(const OperatorHandle&, Stack*)`.
  template <KernelFunction::BoxedFunction* func>
  static CppFunction makeFromBoxedFunction() {
    return CppFunction(KernelFunction::makeFromBoxedFunction<func>());
  }
  /// A boxed function that also takes the call's key set (to redispatch):
  /// `void(const OperatorHandle&, DispatchKeySet, Stack*)`. PyTorch spells
  /// both kinds makeFromBoxedFunction.
  template <KernelFunction::BoxedFunctionWithKeyset* func>
  static CppFunction makeFromBoxedFunction() {
    return CppFunction(KernelFunction::makeFromBoxedFunctionWithKeyset<func>());
  }
  /// A boxed function `void(const OperatorHandle&, DispatchKeySet, Stack*)`.
  template <KernelFunction::BoxedFunctionWithKeyset* func>
  static CppFunction makeFromBoxedFunctionWithKeyset() {
    return CppFunction(KernelFunction::makeFromBoxedFunctionWithKeyset<func>());
  }
  /// Any boxed KernelFunction (e.g. a Python kernel).
  static CppFunction makeFromKernelFunction(KernelFunction k) { return CppFunction(std::move(k)); }

  /// Sets the name shown in dumps instead of "registered at file:line".
  CppFunction&& debug(InternedString d) && {
    debug_ = std::move(d);
    return std::move(*this);
  }

 private:
  explicit CppFunction(KernelFunction k) : func_(std::move(k)) {}
  friend class Library;
  template <class Func>
  friend CppFunction dispatch(DispatchKey k, Func&& raw_f);

  std::optional<DispatchKey> dispatch_key_;
  KernelFunction func_;
  std::optional<CppSignature> cpp_signature_;
  std::unique_ptr<FunctionSchema> schema_;
  InternedString debug_;
};

/// A kernel for a specific key, for use in a DEF or FRAGMENT library:
/// `m.impl("relu", dispatch(DispatchKey::CPU, relu_cpu))`.
template <class Func>
CppFunction dispatch(DispatchKey k, Func&& raw_f) {
  CppFunction f(std::forward<Func>(raw_f));
  f.dispatch_key_ = k;
  return f;
}
template <>
inline CppFunction dispatch<CppFunction>(DispatchKey k, CppFunction&& f) {
  f.dispatch_key_ = k;
  return std::move(f);
}
/// A kernel for a device's backend key: `dispatch(kCPU, relu_cpu)` is
/// `dispatch(DispatchKey::CPU, relu_cpu)`. PyTorch: torch::dispatch(DeviceType, f).
template <class Func>
CppFunction dispatch(DeviceType type, Func&& raw_f) {
  return dispatch(backendKeyForDevice(type), std::forward<Func>(raw_f));
}

/// A set of registrations for one namespace, undone when the Library dies.
class Library final {
 public:
  /// DEF: defines the namespace's operators (one per namespace); IMPL: only
  /// kernels, for one dispatch key; FRAGMENT: more definitions for a namespace.
  enum Kind { DEF, IMPL, FRAGMENT };

  /// `ns` "_" (with kind IMPL) is for backend fallbacks. Throws ValueError if
  /// `ns` is not an identifier, Error if a DEF library already claims `ns`.
  Library(Kind kind, std::string ns, std::optional<DispatchKey> k, const char* file, uint32_t line);
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Library(Library&&) = default;
  Library& operator=(Library&&) = default;
  /// Undoes the library's registrations, newest first.
  ~Library();

  /// Declares an operator from a schema string ("relu(Tensor x) -> Tensor";
  /// the namespace is added) or a FunctionSchema, with its tags
  /// (`{Tag::pt2_compliant_tag}`). `debug` ("registered at file:line")
  /// replaces the library's own site as the definition's origin (Python
  /// passes the line of each define call). `alias_analysis`: how the
  /// definition's alias annotations are read (Dispatcher::registerDef).
  /// Throws Error (ValueError for a malformed schema); nothing is registered then.
  Library& def(const std::string& schema, const std::vector<Tag>& tags = {}) &;
  Library& def(FunctionSchema schema, const std::vector<Tag>& tags = {}, InternedString debug = {},
               std::optional<AliasAnalysisKind> alias_analysis = AliasAnalysisKind::FROM_SCHEMA) &;
  /// Declares an operator and registers `f` as its CompositeImplicitAutograd
  /// kernel (or at f's dispatch key). With a bare name, the schema is
  /// inferred from f's C++ signature. `f`: a function pointer,
  /// OPDISPATCH_FN(f), a lambda or functor, or a CppFunction.
  template <class Func>
  Library& def(const std::string& name_or_schema, Func&& f, const std::vector<Tag>& tags = {}) & {
    return _def(parseSchemaOrName(name_or_schema), CppFunction(std::forward<Func>(f)), tags);
  }
  /// Declares that the fake (meta) kernels of the operators this library
  /// defines from now on are registered by Python module `pymodule`;
  /// `context` is help text (e.g. a build target). Read back with
  /// `_C._dispatch_pystub(name, overload)`. PyTorch: Library::set_python_module.
  Library& set_python_module(const char* pymodule, const char* context = "") &;
  /// PyTorch's older name for set_python_module, which real code still calls.
  Library& impl_abstract_pystub(const char* pymodule, const char* context = "") & {
    return set_python_module(pymodule, context);
  }

  /// OPDISPATCH_SELECTIVE_SCHEMA(...): defines the operator unless a selective
  /// build leaves it out.
  Library& def(detail::SelectiveStr<true> schema, const std::vector<Tag>& tags = {}) & {
    return def(std::string(static_cast<const char*>(schema)), tags);
  }
  Library& def(detail::SelectiveStr<false>, const std::vector<Tag>& = {}) & { return *this; }
  template <class Func>
  Library& def(detail::SelectiveStr<true> name_or_schema, Func&& f, const std::vector<Tag>& tags = {}) & {
    return def(std::string(static_cast<const char*>(name_or_schema)), std::forward<Func>(f), tags);
  }
  template <class Func>
  Library& def(detail::SelectiveStr<false>, Func&&, const std::vector<Tag>& = {}) & {
    return *this;
  }

  /// Registers a kernel for operator `name` ("relu", "relu.out" or "ns::relu")
  /// at the library's dispatch key (or the one given with dispatch()).
  template <class Func>
  Library& impl(const std::string& name, Func&& raw_f) & {
    return _impl(name, CppFunction(std::forward<Func>(raw_f)));
  }
  Library& impl(const std::string& name, CppFunction&& f) & { return _impl(name, std::move(f)); }
  /// Registers a kernel at a dispatch key or a device's backend key:
  /// `m.impl("relu", kCPU, &relu_cpu)` is `m.impl("relu", dispatch(kCPU, &relu_cpu))`.
  template <class Dispatch, class Func>
  Library& impl(const std::string& name, Dispatch&& key, Func&& raw_f) & {
    return _impl(name, dispatch(std::forward<Dispatch>(key), std::forward<Func>(raw_f)));
  }
  /// OPDISPATCH_SELECTIVE_NAME(...): registers unless a selective build
  /// leaves the operator out.
  template <class Func>
  Library& impl(detail::SelectiveStr<true> name, Func&& raw_f) & {
    return impl(std::string(static_cast<const char*>(name)), std::forward<Func>(raw_f));
  }
  template <class Func>
  Library& impl(detail::SelectiveStr<false>, Func&&) & {
    return *this;
  }
  template <class Dispatch, class Func>
  Library& impl(detail::SelectiveStr<true> name, Dispatch&& key, Func&& raw_f) & {
    return impl(std::string(static_cast<const char*>(name)), std::forward<Dispatch>(key), std::forward<Func>(raw_f));
  }
  template <class Dispatch, class Func>
  Library& impl(detail::SelectiveStr<false>, Dispatch&&, Func&&) & {
    return *this;
  }
  /// Registers a backend fallback for the library's key (an alias key covers
  /// each of its runtime keys). Only in an IMPL library of namespace "_".
  template <class Func>
  Library& fallback(Func&& raw_f) & {
    return _fallback(CppFunction(std::forward<Func>(raw_f)));
  }
  Library& fallback(CppFunction&& f) & { return _fallback(std::move(f)); }

  Library& _def(std::variant<OperatorName, FunctionSchema>&& name_or_schema, CppFunction&& f,
                const std::vector<Tag>& tags = {}) &;
  Library& _impl(const std::string& name, CppFunction&& f) &;
  Library& _fallback(CppFunction&& f) &;

  /// Undoes every registration of this library now, newest first.
  void reset();
  /// How many registrations the library holds now: a mark for _undoTo.
  size_t _registrationCount() const { return registrars_.size(); }
  /// Undoes the registrations made since _registrationCount() was `mark`,
  /// newest first: a caller whose own step after a registration failed
  /// takes the registration back (all-or-nothing).
  void _undoTo(size_t mark);

  Kind kind() const { return kind_; }
  const std::string& ns() const { return ns_; }
  std::optional<DispatchKey> dispatch_key() const { return dispatch_key_; }
  /// "registered at file:line".
  std::string debugString() const;

 private:
  FunctionSchema qualify(FunctionSchema schema) const;
  OperatorName qualifyName(OperatorName name) const;
  /// Registers the definition of `schema` (and its python module, if set).
  void registerDef(FunctionSchema schema, const std::vector<Tag>& tags, InternedString debug = {},
                   std::optional<AliasAnalysisKind> alias_analysis = AliasAnalysisKind::FROM_SCHEMA);

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> dispatch_key_;
  std::string file_;
  uint32_t line_;
  /// (pymodule, context) from set_python_module, recorded with each later def.
  std::optional<std::pair<std::string, std::string>> python_module_;
  std::vector<RegistrationHandleRAII> registrars_;
};

const char* toString(Library::Kind kind);

/// The older registration API, kept by libraries written before
/// TORCH_LIBRARY: `static auto registry = RegisterOperators().op("ns::name",
/// &fn);` defines `ns::name` with the schema inferred from fn's signature and
/// registers fn as its catch-all (CompositeImplicitAutograd) kernel, as
/// Library::def(name, fn) does; a full schema may replace the name. The
/// registrations last as long as the object. Throws Error for a name without
/// a namespace, and as Library::def does. PyTorch: c10::RegisterOperators
/// (ATen/core/op_registration/op_registration.h), torch::RegisterOperators.
class RegisterOperators final {
 public:
  RegisterOperators() = default;
  RegisterOperators(RegisterOperators&&) noexcept = default;
  RegisterOperators& operator=(RegisterOperators&&) noexcept = default;
  /// Undoes the registrations, newest first, and frees what they retired
  /// before the code of the module holding the object can be unmapped, as a
  /// library block does (Note [Unloading an extension]).
  ~RegisterOperators();

  template <class FuncType>
  RegisterOperators&& op(const std::string& schemaOrName, FuncType* func) && {
    const size_t ns_end = schemaOrName.find("::");
    OPDISPATCH_CHECK(ns_end != std::string::npos, "RegisterOperators().op(\"", schemaOrName,
                     "\"): the operator needs a namespace, as 'ns::", schemaOrName, "'");
    libraries_.push_back(
        std::make_unique<Library>(Library::FRAGMENT, schemaOrName.substr(0, ns_end), std::nullopt, __FILE__, __LINE__));
    libraries_.back()->def(schemaOrName, func);
    return std::move(*this);
  }

 private:
  std::vector<std::unique_ptr<Library>> libraries_;
};

namespace detail {
/// Frees the kernels that undone registrations retired, waiting briefly for
/// calls still using them: what a module's static registrations run when it
/// is unloaded (Note [Unloading an extension]).
void reclaimBeforeUnload();

/// Runs a library block at static-initialisation time. An error is caught,
/// the block's registrations are undone, and the message is recorded for
/// takeStaticRegistrationErrors() (so loading a bad extension raises in
/// Python instead of aborting the process).
class LibraryInit final {
 public:
  using InitFn = void(Library&);
  LibraryInit(Library::Kind kind, InitFn* fn, const char* ns, std::optional<DispatchKey> k, const char* file,
              uint32_t line);
  /// Undoes the block's registrations and frees what they retired before the
  /// code of the module holding the block can be unmapped (Note [Unloading an extension]).
  ~LibraryInit();
  LibraryInit(const LibraryInit&) = delete;
  LibraryInit& operator=(const LibraryInit&) = delete;

 private:
  std::optional<Library> lib_;
};

/// Returns and clears the errors recorded by LibraryInit since the last call.
std::vector<std::string> takeStaticRegistrationErrors();

} // namespace detail
} // namespace opdispatch

// The public macros expand their `ns` argument before use, so a namespace can
// come from a macro (`-DMY_NS=myops` then `OPDISPATCH_LIBRARY(MY_NS, m)`).
#define OPDISPATCH_LIBRARY(ns, m) OPDISPATCH_LIBRARY_EXPANDED(ns, m)
#define OPDISPATCH_LIBRARY_EXPANDED(ns, m)                                                               \
  static void OPDISPATCH_LIBRARY_init_##ns(::opdispatch::Library&);                                      \
  static const ::opdispatch::detail::LibraryInit OPDISPATCH_LIBRARY_static_init_##ns(                    \
      ::opdispatch::Library::DEF, &OPDISPATCH_LIBRARY_init_##ns, #ns, std::nullopt, __FILE__, __LINE__); \
  void OPDISPATCH_LIBRARY_init_##ns(::opdispatch::Library& m)

#define OPDISPATCH_LIBRARY_FRAGMENT(ns, m) OPDISPATCH_LIBRARY_FRAGMENT_UID(ns, m, OPDISPATCH_UID)
#define OPDISPATCH_LIBRARY_FRAGMENT_UID(ns, m, uid)                                                                 \
  static void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(::opdispatch::Library&);             \
  static const ::opdispatch::detail::LibraryInit OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_FRAGMENT_static_init_##ns##_, \
                                                                   uid)(                                            \
      ::opdispatch::Library::FRAGMENT, &OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_FRAGMENT_init_##ns##_, uid), #ns,      \
      std::nullopt, __FILE__, __LINE__);                                                                            \
  void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(::opdispatch::Library & m)

#define OPDISPATCH_LIBRARY_IMPL(ns, k, m) OPDISPATCH_LIBRARY_IMPL_UID(ns, k, m, OPDISPATCH_UID)
#define OPDISPATCH_LIBRARY_IMPL_UID(ns, k, m, uid)                                                                    \
  static void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(::opdispatch::Library&);             \
  static const ::opdispatch::detail::LibraryInit OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_IMPL_static_init_##ns##_##k##_, \
                                                                   uid)(                                              \
      ::opdispatch::Library::IMPL, &OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_IMPL_init_##ns##_##k##_, uid), #ns,          \
      std::make_optional(::opdispatch::DispatchKey::k), __FILE__, __LINE__);                                          \
  void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(::opdispatch::Library & m)

// OPDISPATCH_SELECTIVE_NAME("ns::op") and OPDISPATCH_SELECTIVE_SCHEMA("ns::op(...) -> ...")
// mark registrations a selective build may leave out: compiled with
// -DOPDISPATCH_OPERATOR_ALLOWLIST='ns::a;ns::b.overload', only the listed
// operators are defined and implemented; without it, every one is. PyTorch:
// TORCH_SELECTIVE_NAME, TORCH_SELECTIVE_SCHEMA (TORCH_OPERATOR_WHITELIST).
#if defined(OPDISPATCH_OPERATOR_ALLOWLIST)
#define OPDISPATCH_SELECTIVE_NAME(n)                                          \
  ::opdispatch::detail::SelectiveStr<::opdispatch::detail::allowlistContains( \
      OPDISPATCH_STRINGIZE(OPDISPATCH_OPERATOR_ALLOWLIST), n)>(n)
#define OPDISPATCH_SELECTIVE_SCHEMA(n)                                        \
  ::opdispatch::detail::SelectiveStr<::opdispatch::detail::allowlistContains( \
      OPDISPATCH_STRINGIZE(OPDISPATCH_OPERATOR_ALLOWLIST), ::opdispatch::detail::schemaOperatorName(n))>(n)
#else
#define OPDISPATCH_SELECTIVE_NAME(n) ::opdispatch::detail::SelectiveStr<true>(n)
#define OPDISPATCH_SELECTIVE_SCHEMA(n) ::opdispatch::detail::SelectiveStr<true>(n)
#endif
