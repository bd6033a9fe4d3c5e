// Library: namespace checks, debug strings and registration of defs, impls
// and fallbacks with the Dispatcher.
#include <opdispatch/library.h>

#include <mutex>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Reclaimer.h>

namespace opdispatch {

const char* toString(Library::Kind kind) {
  switch (kind) {
    case Library::DEF:
      return "OPDISPATCH_LIBRARY";
    case Library::IMPL:
      return "OPDISPATCH_LIBRARY_IMPL";
    case Library::FRAGMENT:
      return "OPDISPATCH_LIBRARY_FRAGMENT";
  }
  return "Library";
}

namespace {
/// Whether `s` can be a namespace: what the schema parser reads before '::'.
bool isIdentifier(const std::string& s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !alpha(s[0])) {
    return false;
  }
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}
} // namespace

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> k, const char* file, uint32_t line)
    : kind_(kind),
      ns_(std::move(ns)),
      dispatch_key_(k),
      file_(file),
      line_(line) {
  OPDISPATCH_CHECK_VALUE(isIdentifier(ns_), "invalid namespace '", ns_, "' for an ", toString(kind_),
                         " block: a namespace is an identifier (letters, digits and '_', not starting with a "
                         "digit), or it could not be looked up again (",
                         debugString(), ")");
  if (kind_ == DEF) {
    OPDISPATCH_CHECK_VALUE(ns_ != "_", "the namespace '_' is reserved for fallback (IMPL) libraries (", debugString(),
                           ")");
    registrars_.emplace_back(Dispatcher::singleton().registerLibrary(ns_, debugString()));
  }
}

Library::~Library() { reset(); }

std::string Library::debugString() const { return "registered at " + file_ + ":" + std::to_string(line_); }

OperatorName Library::qualifyName(OperatorName name) const {
  auto pos = name.name.find("::");
  if (pos == std::string::npos) {
    std::string qualified;  // (one heap block, not a temporary per '+')
    qualified.reserve(ns_.size() + 2 + name.name.size());
    qualified.append(ns_).append("::").append(name.name);
    name.name = std::move(qualified);
    return name;
  }
  if (pos == ns_.size() && name.name.compare(0, pos, ns_) == 0) {
    return name;
  }
  std::string given = name.name.substr(0, pos);
  OPDISPATCH_CHECK(given == ns_, "Explicitly provided namespace (", given, ") in operator name ", name,
                   " does not match the namespace of the enclosing ", toString(kind_), " block (", ns_,
                   "); move it to a library for namespace ", given, " or drop the namespace from the name. (",
                   debugString(), ")");
  return name;
}

FunctionSchema Library::qualify(FunctionSchema schema) const {
  OperatorName name = qualifyName(schema.operator_name());
  return std::move(schema).cloneWithName(std::move(name));
}

namespace {
/// The tags' names, as the Dispatcher stores them.
std::vector<std::string> tagNames(const std::vector<Tag>& tags) {
  std::vector<std::string> names;
  names.reserve(tags.size());
  for (Tag t : tags) {
    names.emplace_back(toString(t));
  }
  return names;
}
} // namespace

Library& Library::def(const std::string& schema, const std::vector<Tag>& tags) & {
  return def(parseSchema(schema), tags);
}

Library& Library::def(FunctionSchema schema, const std::vector<Tag>& tags, InternedString debug,
                      std::optional<AliasAnalysisKind> alias_analysis) & {
  OPDISPATCH_CHECK(kind_ != IMPL, "Cannot define an operator inside an ", toString(kind_),
                   " block. All def()s belong in the OPDISPATCH_LIBRARY (or _FRAGMENT) block of their namespace. (",
                   debugString(), ")");
  registerDef(qualify(std::move(schema)), tags, std::move(debug), alias_analysis);
  return *this;
}

Library& Library::set_python_module(const char* pymodule, const char* context) & {
  OPDISPATCH_CHECK_VALUE(pymodule != nullptr && *pymodule != '\0', "set_python_module needs a module name (",
                         debugString(), ")");
  python_module_.emplace(pymodule, context == nullptr ? "" : context);
  return *this;
}

void Library::registerDef(FunctionSchema schema, const std::vector<Tag>& tags, InternedString debug,
                          std::optional<AliasAnalysisKind> alias_analysis) {
  std::optional<OperatorName> name;  // (a copy only when needed: most names are too long for the small-string buffer)
  if (python_module_) {
    name = schema.operator_name();
  }
  RegistrationHandleRAII def_handle = Dispatcher::singleton().registerDef(
      std::move(schema), debug.empty() ? InternedString(debugString()) : std::move(debug), tagNames(tags),
      alias_analysis);
  if (python_module_) {
    registrars_.emplace_back(
        Dispatcher::singleton().registerPythonModule(*name, python_module_->first, python_module_->second));
  }
  registrars_.emplace_back(std::move(def_handle));
}

Library& Library::_def(std::variant<OperatorName, FunctionSchema>&& name_or_schema, CppFunction&& f,
                       const std::vector<Tag>& tags) & {
  OPDISPATCH_CHECK(kind_ != IMPL, "Cannot define an operator inside an ", toString(kind_), " block (", debugString(),
                   ")");
  FunctionSchema schema = [&] {
    if (auto* s = std::get_if<FunctionSchema>(&name_or_schema)) {
      return std::move(*s);
    }
    OPDISPATCH_CHECK(f.schema_ != nullptr, "def(\"", std::get<OperatorName>(name_or_schema),
                     "\", f) needs a typed C++ function to infer the schema from; pass a full schema string "
                     "for a boxed kernel");
    return f.schema_->cloneWithName(std::get<OperatorName>(name_or_schema));
  }();
  FunctionSchema qualified = qualify(std::move(schema));
  OperatorName name = qualified.operator_name();
  size_t before = registrars_.size();
  registerDef(std::move(qualified), tags);
  InternedString debug = f.debug_.empty() ? InternedString(debugString()) : std::move(f.debug_);
  try {
    registrars_.emplace_back(Dispatcher::singleton().registerImpl(
        name, f.dispatch_key_, std::move(f.func_), f.cpp_signature_, std::move(f.schema_), std::move(debug)));
  } catch (...) {
    // The impl does not fit the def: undo the def too, newest first.
    while (registrars_.size() > before) {
      registrars_.pop_back();
    }
    throw;
  }
  return *this;
}

Library& Library::_impl(const std::string& name, CppFunction&& f) & {
  OPDISPATCH_CHECK(ns_ != "_", "impl() is not allowed in a fallback library (namespace '_'); use fallback() (",
                   debugString(), ")");
  OperatorName op = qualifyName(parseName(name));
  std::optional<DispatchKey> key = f.dispatch_key_ ? f.dispatch_key_ : dispatch_key_;
  OPDISPATCH_CHECK(!f.dispatch_key_ || !dispatch_key_ || *f.dispatch_key_ == *dispatch_key_,
                   "Explicitly provided dispatch key (", *f.dispatch_key_, ") for ", op,
                   " is inconsistent with the dispatch key of the enclosing ", toString(kind_), " block (",
                   *dispatch_key_, "). (", debugString(), ")");
  InternedString debug = f.debug_.empty() ? InternedString(debugString()) : std::move(f.debug_);
  registrars_.emplace_back(Dispatcher::singleton().registerImpl(
      std::move(op), key, std::move(f.func_), f.cpp_signature_, std::move(f.schema_), std::move(debug)));
  return *this;
}

Library& Library::_fallback(CppFunction&& f) & {
  OPDISPATCH_CHECK(kind_ == IMPL && ns_ == "_",
                   "fallback() is only allowed in OPDISPATCH_LIBRARY_IMPL(_, KEY, m) "
                   "(a library of kind IMPL for namespace '_'); this is a ",
                   toString(kind_), " block for ", ns_, " (", debugString(), ")");
  std::optional<DispatchKey> key = f.dispatch_key_ ? f.dispatch_key_ : dispatch_key_;
  OPDISPATCH_CHECK(key.has_value(), "a backend fallback needs a dispatch key (", debugString(), ")");
  InternedString debug = f.debug_.empty() ? InternedString(debugString()) : std::move(f.debug_);
  DispatchKeySet keys = getRuntimeDispatchKeySet(*key);
  OPDISPATCH_CHECK_VALUE(!keys.empty(), "cannot register a fallback for dispatch key ", *key, " (", debugString(), ")");
  std::vector<RegistrationHandleRAII> handles;
  for (DispatchKey k : keys) {
    handles.emplace_back(Dispatcher::singleton().registerFallback(k, f.func_, debug));
  }
  for (auto& h : handles) {
    registrars_.emplace_back(std::move(h));
  }
  return *this;
}

void Library::reset() { _undoTo(0); }

void Library::_undoTo(size_t mark) {
  while (registrars_.size() > mark) {
    registrars_.pop_back();
  }
}

namespace detail {

namespace {
std::mutex& errorsMutex() {
  static std::mutex m;
  return m;
}
std::vector<std::string>& staticErrors() {
  static std::vector<std::string> errors;
  return errors;
}
} // namespace

LibraryInit::LibraryInit(Library::Kind kind, InitFn* fn, const char* ns, std::optional<DispatchKey> k, const char* file,
                         uint32_t line) {
  try {
    lib_.emplace(kind, ns, k, file, line);
    fn(*lib_);
  } catch (const std::exception& e) {
    lib_.reset();
    std::lock_guard<std::mutex> g(errorsMutex());
    staticErrors().push_back(str(toString(kind), "(", ns, ") at ", file, ":", line, " failed: ", e.what()));
  }
}

// Note [Unloading an extension]
// A library block (OPDISPATCH_LIBRARY and the others) is a static object of
// the module that holds it; dlclose of an unloadable module (built with
// -fno-gnu-unique, say) runs its destructor and then unmaps the module's
// code. Undoing the registrations retires their kernels to the Reclaimer
// (Note [Reclaiming retired kernels]), whose later reclaim() would run the
// kernels' destructors -- code of the module, gone by then. So the block's
// destructor drains the Reclaimer: it waits (briefly) for the calls that
// may still use a retired kernel to return and frees it now; what it cannot
// free in time it abandons, leaking it rather than running unmapped code.
// PyTorch frees a deregistered kernel at once (its calls hold no lock-free
// references), so unloading is safe there too. The same holds for the
// registrations a RegisterOperators object owns.
void reclaimBeforeUnload() { Reclaimer::singleton().drain(std::chrono::milliseconds(200)); }

LibraryInit::~LibraryInit() {
  if (!lib_) {
    return;
  }
  lib_.reset();
  reclaimBeforeUnload();
}

std::vector<std::string> takeStaticRegistrationErrors() {
  std::lock_guard<std::mutex> g(errorsMutex());
  std::vector<std::string> out;
  out.swap(staticErrors());
  return out;
}

} // namespace detail

RegisterOperators::~RegisterOperators() {
  if (libraries_.empty()) {
    return;  // moved from, or registered nothing
  }
  while (!libraries_.empty()) {
    libraries_.pop_back();  // newest first
  }
  detail::reclaimBeforeUnload();
}

} // namespace opdispatch
