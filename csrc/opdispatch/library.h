// Library, CppFunction and the OPDISPATCH_LIBRARY* macros: how C++ code
// defines operators and registers kernels.
//
// Example (an extension's .cpp file):
//
//   Tensor relu_cpu(const Tensor& x) { ... }
//   Tensor relu_meta(const Tensor& x) { return opdispatch::empty(x.sizes(), x.dtype(), x.device()); }
//
//   OPDISPATCH_LIBRARY(myops, m) {
//     m.def("relu(Tensor x) -> Tensor");
//   }
//   OPDISPATCH_LIBRARY_IMPL(myops, CPU, m) {
//     m.impl("relu", relu_cpu);
//   }
//   OPDISPATCH_LIBRARY_IMPL(myops, Meta, m) {
//     m.impl("relu", OPDISPATCH_FN(relu_meta));
//   }
//
// Each block registers when the shared library loads and deregisters when it
// unloads. PyTorch: torch/library.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <opdispatch/Macros.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/schema/InferSchema.h>
#include <opdispatch/schema/SchemaParser.h>

namespace opdispatch {

namespace detail {
template <class T, class = void>
struct is_functor : std::false_type {};
template <class T>
struct is_functor<T, std::void_t<decltype(&T::operator())>> : std::true_type {};
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
  template <class Lambda,
            std::enable_if_t<detail::is_functor<std::decay_t<Lambda>>::value &&
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
  /// A boxed function `void(const OperatorHandle&, DispatchKeySet, Stack*)`.
  template <KernelFunction::BoxedFunctionWithKeyset* func>
  static CppFunction makeFromBoxedFunctionWithKeyset() {
    return CppFunction(KernelFunction::makeFromBoxedFunctionWithKeyset<func>());
  }
  /// Any boxed KernelFunction (e.g. a Python kernel).
  static CppFunction makeFromKernelFunction(KernelFunction k) { return CppFunction(std::move(k)); }

  /// Sets the name shown in dumps instead of "registered at file:line".
  CppFunction&& debug(std::string d) && {
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
  std::string debug_;
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
  /// the namespace is added) or a FunctionSchema. `debug` ("registered at
  /// file:line") replaces the library's own site as the definition's origin
  /// (Python passes the line of each define call). Throws Error (ValueError
  /// for a malformed schema); nothing is registered then.
  Library& def(const std::string& schema, const std::vector<std::string>& tags = {}) &;
  Library& def(FunctionSchema schema, const std::vector<std::string>& tags = {}, std::string debug = "") &;
  /// Declares an operator and registers `f` as its CompositeImplicitAutograd
  /// kernel (or at f's dispatch key). With a bare name, the schema is
  /// inferred from f's C++ signature.
  template <class Func>
  Library& def(const std::string& name_or_schema, Func&& f, const std::vector<std::string>& tags = {}) & {
    return _def(parseSchemaOrName(name_or_schema), CppFunction(std::forward<Func>(f)), tags);
  }
  /// Registers a kernel for operator `name` ("relu", "relu.out" or "ns::relu")
  /// at the library's dispatch key (or the one given with dispatch()).
  template <class Func>
  Library& impl(const std::string& name, Func&& raw_f) & {
    return _impl(name, CppFunction(std::forward<Func>(raw_f)));
  }
  Library& impl(const std::string& name, CppFunction&& f) & { return _impl(name, std::move(f)); }
  /// Registers a backend fallback for the library's key (an alias key covers
  /// each of its runtime keys). Only in an IMPL library of namespace "_".
  template <class Func>
  Library& fallback(Func&& raw_f) & {
    return _fallback(CppFunction(std::forward<Func>(raw_f)));
  }
  Library& fallback(CppFunction&& f) & { return _fallback(std::move(f)); }

  Library& _def(std::variant<OperatorName, FunctionSchema>&& name_or_schema, CppFunction&& f,
                const std::vector<std::string>& tags = {}) &;
  Library& _impl(const std::string& name, CppFunction&& f) &;
  Library& _fallback(CppFunction&& f) &;

  /// Undoes every registration of this library now, newest first.
  void reset();

  Kind kind() const { return kind_; }
  const std::string& ns() const { return ns_; }
  std::optional<DispatchKey> dispatch_key() const { return dispatch_key_; }
  /// "registered at file:line".
  std::string debugString() const;

 private:
  FunctionSchema qualify(FunctionSchema schema) const;
  OperatorName qualifyName(OperatorName name) const;

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> dispatch_key_;
  std::string file_;
  uint32_t line_;
  std::vector<RegistrationHandleRAII> registrars_;
};

const char* toString(Library::Kind kind);

namespace detail {

/// Runs a library block at static-initialisation time. An error is caught,
/// the block's registrations are undone, and the message is recorded for
/// takeStaticRegistrationErrors() (so loading a bad extension raises in
/// Python instead of aborting the process).
class LibraryInit final {
 public:
  using InitFn = void(Library&);
  LibraryInit(Library::Kind kind, InitFn* fn, const char* ns, std::optional<DispatchKey> k, const char* file,
              uint32_t line);

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
#define OPDISPATCH_LIBRARY_FRAGMENT_UID(ns, m, uid)                                                      \
  static void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(::opdispatch::Library&);  \
  static const ::opdispatch::detail::LibraryInit OPDISPATCH_CONCAT(                                      \
      OPDISPATCH_LIBRARY_FRAGMENT_static_init_##ns##_, uid)(                                             \
      ::opdispatch::Library::FRAGMENT, &OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_FRAGMENT_init_##ns##_, uid), \
      #ns, std::nullopt, __FILE__, __LINE__);                                                             \
  void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(::opdispatch::Library & m)

#define OPDISPATCH_LIBRARY_IMPL(ns, k, m) OPDISPATCH_LIBRARY_IMPL_UID(ns, k, m, OPDISPATCH_UID)
#define OPDISPATCH_LIBRARY_IMPL_UID(ns, k, m, uid)                                                          \
  static void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(::opdispatch::Library&);   \
  static const ::opdispatch::detail::LibraryInit OPDISPATCH_CONCAT(                                         \
      OPDISPATCH_LIBRARY_IMPL_static_init_##ns##_##k##_, uid)(                                              \
      ::opdispatch::Library::IMPL, &OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_IMPL_init_##ns##_##k##_, uid), #ns, \
      std::make_optional(::opdispatch::DispatchKey::k), __FILE__, __LINE__);                                \
  void OPDISPATCH_CONCAT(OPDISPATCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(::opdispatch::Library & m)
