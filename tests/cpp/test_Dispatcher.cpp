// Dispatcher: def/impl/call, typed unboxed handles, TLS guards, redispatch,
// fallthrough, backend fallbacks, static OPDISPATCH_LIBRARY registration,
// errors that leave the registry unchanged, and calls racing registrations.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {

Tensor cpuTensor(bool requires_grad = false) {
  Tensor t = empty({3}, ScalarType::Float);
  t.set_requires_grad(requires_grad);
  return t;
}

int64_t tagOf(const Tensor&) { return 0; }

std::string dumpOf(const std::string& name) {
  auto op = Dispatcher::singleton().findOp(OperatorName(name, ""));
  return op ? op->dumpState() + op->dumpComputedTable() : std::string("(absent)");
}

} // namespace

// --- an operator registered statically, called through a typed handle ---------

namespace {
Tensor staticAddOne(const Tensor& x) {
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  for (int64_t i = 0; i < x.numel(); ++i) {
    out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
  }
  return out;
}
} // namespace

OPDISPATCH_LIBRARY(static_test, m) { m.def("add_one(Tensor x) -> Tensor"); }
OPDISPATCH_LIBRARY_IMPL(static_test, CPU, m) { m.impl("add_one", OPDISPATCH_FN(staticAddOne)); }

TEST(Dispatcher, StaticLibraryTypedUnboxedCall) {
  auto op = Dispatcher::singleton().findSchemaOrThrow("static_test::add_one", "").typed<Tensor(const Tensor&)>();
  Tensor x = cpuTensor();
  for (int i = 0; i < 3; ++i) {
    x.data_ptr<float>()[i] = float(i);
  }
  Tensor y = op.call(x);
  EXPECT_FLOAT_EQ(y.data_ptr<float>()[2], 3.0f);
  EXPECT_NE(op.dumpState().find("static_test::add_one(Tensor x) -> Tensor"), std::string::npos);
  EXPECT_NE(op.dumpState().find("CPU: registered at"), std::string::npos);
  EXPECT_NE(op.dumpState().find(":: (Tensor _0) -> Tensor _0 [ boxed unboxed ]"), std::string::npos);
}

TEST(Dispatcher, TypedHandleWithWrongSignatureIsRejected) {
  auto op = Dispatcher::singleton().findSchemaOrThrow("static_test::add_one", "");
  EXPECT_THROW(op.typed<Tensor(Tensor)>(), Error);
  EXPECT_THROW(op.typed<int64_t(const Tensor&)>(), Error);
}

// A namespace given by a macro is expanded by every library macro.
#define DISPATCHER_TEST_MACRO_NS static_macro_ns
OPDISPATCH_LIBRARY(DISPATCHER_TEST_MACRO_NS, m) { m.def("f(Tensor x) -> Tensor"); }
OPDISPATCH_LIBRARY_FRAGMENT(DISPATCHER_TEST_MACRO_NS, m) { m.def("g(Tensor x) -> Tensor"); }
OPDISPATCH_LIBRARY_IMPL(DISPATCHER_TEST_MACRO_NS, CPU, m) { m.impl("f", OPDISPATCH_FN(staticAddOne)); }

TEST(Dispatcher, LibraryMacrosExpandANamespaceMacro) {
  auto f = Dispatcher::singleton().findSchema(OperatorName("static_macro_ns::f", ""));
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->hasKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_TRUE(Dispatcher::singleton().findSchema(OperatorName("static_macro_ns::g", "")).has_value());
  EXPECT_FALSE(Dispatcher::singleton().findOp(OperatorName("DISPATCHER_TEST_MACRO_NS::f", "")).has_value());
}

// --- dispatch on keys -----------------------------------------------------------

TEST(Dispatcher, BackendAndAutogradRedispatch) {
  Library lib(Library::DEF, "disp_a", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 1; }));
  auto typed = Dispatcher::singleton().findSchemaOrThrow("disp_a::f", "").typed<int64_t(const Tensor&)>();
  lib.impl("f", dispatch(DispatchKey::AutogradCPU, [typed](DispatchKeySet ks, const Tensor& x) -> int64_t {
             EXPECT_TRUE(ks.has(DispatchKey::AutogradCPU));
             return 10 + typed.redispatch(ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU), x);
           }));
  EXPECT_EQ(typed.call(cpuTensor(false)), 1);  // plain tensors skip autograd entirely
  EXPECT_EQ(typed.call(cpuTensor(true)), 11);  // autograd kernel, then redispatch to CPU
  {
    AutoDispatchBelowAutograd guard;
    EXPECT_EQ(typed.call(cpuTensor(true)), 1);
  }
  EXPECT_EQ(typed.call(cpuTensor(true)), 11);
}

TEST(Dispatcher, TlsIncludeAndExcludeGuards) {
  Library lib(Library::DEF, "disp_b", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 1; }));
  lib.impl("f", dispatch(DispatchKey::Meta, [](const Tensor&) -> int64_t { return 2; }));
  lib.impl("f", dispatch(DispatchKey::PythonDispatcher, [](const Tensor&) -> int64_t { return 3; }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("disp_b::f", "").typed<int64_t(const Tensor&)>();
  Tensor x = cpuTensor();
  EXPECT_EQ(op.call(x), 1);
  {
    IncludeDispatchKeyGuard g(DispatchKey::Meta);
    EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::Meta));
    EXPECT_EQ(op.call(x), 2);
    {
      IncludeDispatchKeyGuard g2(DispatchKey::PythonDispatcher);
      EXPECT_EQ(op.call(x), 3);
      ExcludeDispatchKeyGuard e(DispatchKey::PythonDispatcher);
      EXPECT_EQ(op.call(x), 2);
    }
    ExcludeDispatchKeyGuard e(DispatchKeySet{DispatchKey::Meta, DispatchKey::CPU});
    EXPECT_THROW(op.call(x), NotImplementedError);
  }
  EXPECT_FALSE(tls_is_dispatch_key_included(DispatchKey::Meta));
  EXPECT_FALSE(tls_is_dispatch_key_excluded(DispatchKey::CPU));
  // A nested guard for an already-included key does not remove it on exit.
  tls_set_dispatch_key_included(DispatchKey::Meta, true);
  {
    IncludeDispatchKeyGuard g(DispatchKey::Meta);
  }
  EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::Meta));
  tls_set_dispatch_key_included(DispatchKey::Meta, false);
  EXPECT_THROW(tls_set_dispatch_key_included(DispatchKey::Autograd, true), ValueError);
}

TEST(Dispatcher, FallthroughSkipsTheKey) {
  Library lib(Library::DEF, "disp_c", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 1; }));
  lib.impl("f", dispatch(DispatchKey::AutogradCPU, [](const Tensor&) -> int64_t { return 2; }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("disp_c::f", "").typed<int64_t(const Tensor&)>();
  EXPECT_EQ(op.call(cpuTensor(true)), 2);
  {
    Library impl(Library::IMPL, "disp_c", DispatchKey::AutogradCPU, __FILE__, __LINE__);
    impl.impl("f", CppFunction::makeFallthrough());
    EXPECT_TRUE(op.isKernelFallthroughKernel(DispatchKey::AutogradCPU));
    EXPECT_FALSE(op.entry().nonFallthroughKeys().has(DispatchKey::AutogradCPU));
    EXPECT_EQ(op.call(cpuTensor(true)), 1);
  }
  EXPECT_EQ(op.call(cpuTensor(true)), 2);  // deregistration restores the previous kernel
}

namespace {
void countingFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  auto args = pop(*stack, op.schema().arguments().size());
  push(*stack, int64_t(100));
}
} // namespace

TEST(Dispatcher, BackendFallbackServesOperatorsWithoutKernel) {
  Library lib(Library::DEF, "disp_d", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.def("g(Tensor x) -> int");
  lib.impl("g", dispatch(DispatchKey::PrivateUse1, [](const Tensor&) -> int64_t { return 7; }));
  auto f = Dispatcher::singleton().findSchemaOrThrow("disp_d::f", "").typed<int64_t(const Tensor&)>();
  auto g = Dispatcher::singleton().findSchemaOrThrow("disp_d::g", "").typed<int64_t(const Tensor&)>();
  IncludeDispatchKeyGuard include(DispatchKey::PrivateUse1);
  EXPECT_THROW(f.call(cpuTensor()), NotImplementedError);
  {
    Library fb(Library::IMPL, "_", DispatchKey::PrivateUse1, __FILE__, __LINE__);
    fb.fallback(CppFunction::makeFromBoxedFunctionWithKeyset<&countingFallback>());
    EXPECT_TRUE(Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::PrivateUse1));
    EXPECT_EQ(f.call(cpuTensor()), 100);
    EXPECT_EQ(g.call(cpuTensor()), 7);  // a kernel beats the fallback
    EXPECT_NE(f.dumpComputedTable().find("PrivateUse1: registered at"), std::string::npos);
    EXPECT_NE(f.dumpComputedTable().find("[backend fallback]"), std::string::npos);
    Library fb2(Library::IMPL, "_", DispatchKey::PrivateUse1, __FILE__, __LINE__);
    EXPECT_THROW(fb2.fallback(CppFunction::makeFallthrough()), Error);
  }
  EXPECT_FALSE(Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::PrivateUse1));
  EXPECT_THROW(f.call(cpuTensor()), NotImplementedError);
}

TEST(Dispatcher, BackendFallbackRegisteredBeforeTheDefServesAnOperatorWithoutKernels) {
  Library fb(Library::IMPL, "_", DispatchKey::PrivateUse1, __FILE__, __LINE__);
  fb.fallback(CppFunction::makeFromBoxedFunctionWithKeyset<&countingFallback>());
  Library lib(Library::DEF, "disp_d2", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  auto f = Dispatcher::singleton().findSchemaOrThrow("disp_d2::f", "").typed<int64_t(const Tensor&)>();
  f.checkInvariants();
  IncludeDispatchKeyGuard include(DispatchKey::PrivateUse1);
  EXPECT_EQ(f.call(cpuTensor()), 100);
  // The default ADInplaceOrView fallthrough applies too: a tensor that requires grad reaches the fallback.
  EXPECT_FALSE(f.entry().nonFallthroughKeys().has(DispatchKey::ADInplaceOrView));
  EXPECT_EQ(f.call(cpuTensor(true)), 100);
}

TEST(Dispatcher, NoTensorArgumentsUseTheUndefinedEntry) {
  Library lib(Library::DEF, "disp_e", std::nullopt, __FILE__, __LINE__);
  lib.def("f(int n) -> int");
  auto op = Dispatcher::singleton().findSchemaOrThrow("disp_e::f", "").typed<int64_t(int64_t)>();
  try {
    op.call(1);
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor arguments"), std::string::npos);
  }
  lib.impl("f", dispatch(DispatchKey::CompositeExplicitAutograd, [](int64_t n) { return n + 1; }));
  EXPECT_EQ(op.call(1), 2);
}

TEST(Dispatcher, CallBoxedForDispatchKeyRunsTheKernelAtThatKey) {
  Library lib(Library::DEF, "disp_k", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", [](const Tensor&) -> int64_t { return 1; });  // CompositeImplicitAutograd
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 2; }));
  lib.impl("f", dispatch(DispatchKey::AutogradCPU, CppFunction::makeFallthrough()));
  auto op = Dispatcher::singleton().findSchemaOrThrow("disp_k::f", "");
  auto callAt = [&](DispatchKey k) {
    Stack stack;
    push(stack, cpuTensor());
    op.callBoxedForDispatchKey(k, &stack);
    return stack.back().toInt();
  };
  EXPECT_EQ(op.typed<int64_t(const Tensor&)>().call(cpuTensor()), 2);  // the backend kernel wins a normal call
  EXPECT_EQ(callAt(DispatchKey::CompositeImplicitAutograd), 1);          // the decomposition, on request
  EXPECT_EQ(callAt(DispatchKey::CPU), 2);
  EXPECT_EQ(callAt(DispatchKey::Meta), 1);  // no kernel at Meta: the table entry (the math kernel)
  EXPECT_THROW(callAt(DispatchKey::CompositeExplicitAutograd), Error);  // alias key without a kernel
  EXPECT_THROW(callAt(DispatchKey::AutogradCPU), Error);                // a fallthrough cannot be called
}

// --- a boxed call reads the keys of every tensor position --------------------

namespace {
/// A boxed kernel that drops its arguments and returns `result`.
template <int64_t result>
void dropArgumentsAndReturn(const OperatorHandle& op, Stack* stack) {
  drop(*stack, op.schema().arguments().size());
  push(*stack, result);
}

/// The schema text `f(int p0, ..., Tensor p<i> for each i in tensors, ...) -> int` of `n` arguments.
std::string schemaWithTensorsAt(size_t n, const std::set<size_t>& tensors) {
  std::string text = "f(";
  for (size_t i = 0; i < n; ++i) {
    text += (i ? ", " : "") + std::string(tensors.count(i) ? "Tensor p" : "int p") + std::to_string(i);
  }
  return text + ") -> int";
}

/// Defines `f` in `ns` with `n` arguments, tensors at `tensors`, and boxed
/// kernels returning 1 (CPU) and 2 (AutogradCPU); calls it boxed with only
/// the last tensor requiring grad, and without, and expects its autograd key
/// to choose the kernel.
void expectBoxedCallsReadEveryTensor(const std::string& ns, size_t n, const std::set<size_t>& tensors) {
  Library lib(Library::DEF, ns, std::nullopt, __FILE__, __LINE__);
  lib.def(schemaWithTensorsAt(n, tensors));
  lib.impl("f", dispatch(DispatchKey::CPU, CppFunction::makeFromBoxedFunction<&dropArgumentsAndReturn<1>>()));
  lib.impl("f", dispatch(DispatchKey::AutogradCPU, CppFunction::makeFromBoxedFunction<&dropArgumentsAndReturn<2>>()));
  auto op = Dispatcher::singleton().findSchemaOrThrow(ns + "::f", "");
  for (bool last_requires_grad : {false, true}) {
    Stack stack;
    for (size_t i = 0; i < n; ++i) {
      if (tensors.count(i)) {
        push(stack, cpuTensor(last_requires_grad && i == *tensors.rbegin()));
      } else {
        push(stack, int64_t(0));
      }
    }
    op.callBoxed(&stack);
    ASSERT_EQ(stack.size(), 1u) << ns;
    EXPECT_EQ(stack.back().toInt(), last_requires_grad ? 2 : 1) << ns;
  }
}
} // namespace

TEST(Dispatcher, BoxedCallsReadTheKeysOfTensorsThatDoNotFitTheBoxedCallSummary) {
  // Note [Boxed call summary]: the summary holds six positions and up to 255
  // arguments; 7 and 16 tensor positions, and a tensor at position 300, are
  // read from the schema instead.
  expectBoxedCallsReadEveryTensor("disp_p6", 6, {0, 1, 2, 3, 4, 5});
  expectBoxedCallsReadEveryTensor("disp_p7", 7, {0, 1, 2, 3, 4, 5, 6});
  expectBoxedCallsReadEveryTensor("disp_p16", 16, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  expectBoxedCallsReadEveryTensor("disp_p300", 301, {0, 300});
}

TEST(Dispatcher, BoxedCallsReadTheSummaryOfTheCurrentDefinition) {
  // Note [Boxed call summary]: the entry's summary is replaced with the
  // schema; a definition removed and made again with the tensor elsewhere
  // (and another argument count) moves the position the call reads.
  expectBoxedCallsReadEveryTensor("disp_redef", 2, {0});
  expectBoxedCallsReadEveryTensor("disp_redef", 3, {2});
  expectBoxedCallsReadEveryTensor("disp_redef", 2, {1});
}

// --- one call path: every call form has the same effects ----------------------

namespace {
/// A CPU kernel of `f_(Tensor(a!) x, int n) -> Tensor(a!)` that returns x, or throws for n < 0.
Tensor mutateOrThrow(const Tensor& x, int64_t n) {
  OPDISPATCH_CHECK_VALUE(n >= 0, "n must not be negative");
  return x;
}

/// Calls f_ with (x, n) in the form `form`; returns what the kernel returned.
Tensor callInForm(const std::string& form, const OperatorHandle& op, const Tensor& x, int64_t n) {
  auto typed = op.typed<Tensor(const Tensor&, int64_t)>();
  if (form == "typed") {
    return typed.call(x, n);
  }
  if (form == "typed redispatch") {
    return typed.redispatch(x.key_set(), x, n);
  }
  Stack stack{x, n};
  if (form == "boxed") {
    op.callBoxed(&stack);
  } else {
    op.redispatchBoxed(x.key_set(), &stack);
  }
  return stack.at(0).toTensor();
}
} // namespace

TEST(Dispatcher, EveryCallFormBumpsMutatedArgumentsOnceOnSuccessAndNeverOnError) {
  Library lib(Library::DEF, "disp_forms", std::nullopt, __FILE__, __LINE__);
  lib.def("f_(Tensor(a!) x, int n) -> Tensor(a!)");
  lib.impl("f_", dispatch(DispatchKey::CPU, OPDISPATCH_FN(mutateOrThrow)));
  OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow("disp_forms::f_", "");
  for (const char* form : {"typed", "typed redispatch", "boxed", "boxed redispatch"}) {
    Tensor x = cpuTensor();
    EXPECT_TRUE(callInForm(form, op, x, 1).is_same(x)) << form;
    EXPECT_EQ(x.unsafeGetTensorImpl()->version(), 1u) << form;
    EXPECT_THROW(callInForm(form, op, x, -1), ValueError) << form;
    EXPECT_EQ(x.unsafeGetTensorImpl()->version(), 1u) << form;  // the kernel failed: no bump
    // Above the backend (an autograd kernel that redispatches) the bump happens once, below.
  }
  lib.impl("f_", dispatch(DispatchKey::AutogradCPU, [](DispatchKeySet ks, const Tensor& x, int64_t n) -> Tensor {
             return Dispatcher::singleton()
                 .findSchemaOrThrow("disp_forms::f_", "")
                 .typed<Tensor(const Tensor&, int64_t)>()
                 .redispatch(ks & after_autograd_keyset, x, n);
           }));
  for (const char* form : {"typed", "boxed"}) {
    Tensor x = cpuTensor(true);
    callInForm(form, op, x, 1);
    EXPECT_EQ(x.unsafeGetTensorImpl()->version(), 1u) << form;
  }
}

TEST(Dispatcher, AMissingKernelRaisesTheSameErrorInEveryCallForm) {
  Library lib(Library::DEF, "disp_forms_missing", std::nullopt, __FILE__, __LINE__);
  lib.def("f_(Tensor(a!) x, int n) -> Tensor(a!)");
  OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow("disp_forms_missing::f_", "");
  std::set<std::string> messages;
  for (const char* form : {"typed", "typed redispatch", "boxed", "boxed redispatch"}) {
    Tensor x = cpuTensor();
    try {
      callInForm(form, op, x, 1);
      ADD_FAILURE() << form;
    } catch (const NotImplementedError& e) {
      messages.insert(e.what());
    }
    EXPECT_EQ(x.unsafeGetTensorImpl()->version(), 0u) << form;
  }
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.begin()->rfind("Could not run 'disp_forms_missing::f_' with arguments from the 'CPU' backend", 0),
            0u);
}

// --- default fallbacks are replaceable (Note [Default fallbacks]) ---------------

TEST(Dispatcher, AUserFallbackReplacesADefaultAndRemovingItRestoresTheDefault) {
  Library lib(Library::DEF, "disp_defaults", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::PrivateUse1, [](const Tensor&) -> int64_t { return 7; }));
  auto f = Dispatcher::singleton().findSchemaOrThrow("disp_defaults::f", "").typed<int64_t(const Tensor&)>();
  IncludeDispatchKeyGuard include(DispatchKeySet{DispatchKey::PrivateUse1, DispatchKey::AutogradPrivateUse1});
  const std::string before = f.dumpComputedTable();
  EXPECT_NE(before.find("AutogradPrivateUse1: registered at"), std::string::npos);
  EXPECT_EQ(f.call(cpuTensor()), 7);  // the default autograd fallback redispatches below autograd
  {
    // As an out-of-tree device plugin does (PyTorch accepts it over its own default too).
    Library plugin(Library::IMPL, "_", DispatchKey::AutogradPrivateUse1, __FILE__, __LINE__);
    plugin.fallback(CppFunction::makeFromBoxedFunctionWithKeyset<&countingFallback>());
    EXPECT_EQ(f.call(cpuTensor()), 100);
    f.checkInvariants();
    {
      // PyTorch accepts several at AutogradPrivateUse1: the newest wins, removing it restores the previous.
      Library second(Library::IMPL, "_", DispatchKey::AutogradPrivateUse1, __FILE__, __LINE__);
      second.fallback(CppFunction::makeFallthrough());
      EXPECT_EQ(f.call(cpuTensor()), 7);
    }
    EXPECT_EQ(f.call(cpuTensor()), 100);
    // Elsewhere a second user fallback is an error, and changes nothing.
    Library user(Library::IMPL, "_", DispatchKey::ADInplaceOrView, __FILE__, __LINE__);
    user.fallback(CppFunction::makeFromBoxedFunctionWithKeyset<&countingFallback>());  // replaces the default
    Library again(Library::IMPL, "_", DispatchKey::ADInplaceOrView, __FILE__, __LINE__);
    EXPECT_THROW(again.fallback(CppFunction::makeFallthrough()), Error);
  }
  EXPECT_EQ(f.call(cpuTensor()), 7);
  EXPECT_EQ(f.dumpComputedTable(), before);
  f.checkInvariants();
}

TEST(Dispatcher, ADefaultFallbackRegisteredAfterAUserOneDoesNotReplaceIt) {
  Library lib(Library::DEF, "disp_defaults2", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  auto f = Dispatcher::singleton().findSchemaOrThrow("disp_defaults2::f", "").typed<int64_t(const Tensor&)>();
  IncludeDispatchKeyGuard include(DispatchKey::PrivateUse1);
  Library user(Library::IMPL, "_", DispatchKey::PrivateUse1, __FILE__, __LINE__);
  user.fallback(CppFunction::makeFromBoxedFunctionWithKeyset<&countingFallback>());
  RegistrationHandleRAII later_default = Dispatcher::singleton().registerFallback(
      DispatchKey::PrivateUse1, KernelFunction::makeFallthrough(), "a later default", FallbackKind::Default);
  EXPECT_EQ(f.call(cpuTensor()), 100);
  user.reset();
  EXPECT_FALSE(f.entry().nonFallthroughKeys().has(DispatchKey::PrivateUse1));  // the default now
  later_default.reset();
  EXPECT_FALSE(Dispatcher::singleton().hasBackendFallbackForDispatchKey(DispatchKey::PrivateUse1));
  f.checkInvariants();
}

// --- errors leave the registry unchanged ----------------------------------------

TEST(Dispatcher, SecondDefLibraryForANamespaceIsAnError) {
  Library lib(Library::DEF, "disp_f", std::nullopt, "first.cpp", 1);
  try {
    Library again(Library::DEF, "disp_f", std::nullopt, "second.cpp", 2);
    FAIL();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("disp_f"), std::string::npos);
    EXPECT_NE(msg.find("first.cpp:1"), std::string::npos);
    EXPECT_NE(msg.find("second.cpp:2"), std::string::npos);
  }
  Library fragment(Library::FRAGMENT, "disp_f", std::nullopt, __FILE__, __LINE__);
  fragment.def("g(Tensor x) -> Tensor");
}

TEST(Dispatcher, DuplicateDefIsAnErrorAndChangesNothing) {
  Library lib(Library::DEF, "disp_g", std::nullopt, "lib.cpp", 10);
  lib.def("f(Tensor x) -> Tensor");
  std::string before = dumpOf("disp_g::f");
  Library frag(Library::FRAGMENT, "disp_g", std::nullopt, "frag.cpp", 20);
  try {
    frag.def("f(Tensor x) -> Tensor");
    FAIL();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("disp_g::f"), std::string::npos);
    EXPECT_NE(msg.find("lib.cpp:10"), std::string::npos);
    EXPECT_NE(msg.find("frag.cpp:20"), std::string::npos);
  }
  EXPECT_EQ(dumpOf("disp_g::f"), before);
}

TEST(Dispatcher, ImplWithMismatchedSchemaIsAnErrorAndChangesNothing) {
  Library lib(Library::DEF, "disp_h", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x, float alpha) -> Tensor");
  std::string before = dumpOf("disp_h::f");
  try {
    lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor& x, int64_t) { return x; }));
    FAIL();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("disp_h::f"), std::string::npos);
    EXPECT_NE(msg.find("(Tensor _0, int _1) -> Tensor _0"), std::string::npos);
    EXPECT_NE(msg.find("Type mismatch in argument 2 (alpha): float vs int"), std::string::npos);
  }
  EXPECT_EQ(dumpOf("disp_h::f"), before);
  // A kernel registered before the def is checked when the def arrives.
  Library impl(Library::IMPL, "disp_h", DispatchKey::CPU, __FILE__, __LINE__);
  impl.impl("g", [](const Tensor& x) { return x; });
  std::string dangling = dumpOf("disp_h::g");
  EXPECT_EQ(Dispatcher::singleton().findDanglingImpls().size() >= 1, true);
  EXPECT_THROW(lib.def("g(Tensor x, Tensor y) -> Tensor"), Error);
  EXPECT_EQ(dumpOf("disp_h::g"), dangling);
  lib.def("g(Tensor x) -> Tensor");
}

TEST(Dispatcher, MissingKernelErrorNamesOperatorAndKeys) {
  Library lib(Library::DEF, "disp_i", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::Meta, &tagOf));
  auto op = Dispatcher::singleton().findSchemaOrThrow("disp_i::f", "");
  Stack s{cpuTensor()};
  try {
    op.callBoxed(&s);
    FAIL();
  } catch (const NotImplementedError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("disp_i::f"), std::string::npos);
    EXPECT_NE(msg.find("'CPU'"), std::string::npos);
    EXPECT_NE(msg.find("[Meta"), std::string::npos);
  }
}

TEST(Dispatcher, FindSchemaOrThrowListsOverloads) {
  Library lib(Library::DEF, "disp_j", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> Tensor");
  lib.def("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  try {
    Dispatcher::singleton().findSchemaOrThrow("disp_j::f", "Scalar");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("default, out"), std::string::npos);
  }
}

TEST(Dispatcher, DeregistrationForgetsTheOperator) {
  {
    Library lib(Library::DEF, "disp_k", std::nullopt, __FILE__, __LINE__);
    lib.def("f(Tensor x) -> Tensor");
    EXPECT_TRUE(Dispatcher::singleton().findOp(OperatorName("disp_k::f", "")).has_value());
  }
  EXPECT_FALSE(Dispatcher::singleton().findOp(OperatorName("disp_k::f", "")).has_value());
  EXPECT_FALSE(Dispatcher::singleton().findSchema(OperatorName("disp_k::f", "")).has_value());
  // The namespace is free again.
  Library again(Library::DEF, "disp_k", std::nullopt, __FILE__, __LINE__);
}

TEST(Dispatcher, KernelGenerationChangesWithEveryKernelOrFallbackRegistration) {
  Dispatcher& d = Dispatcher::singleton();
  uint64_t g0 = d.kernelGeneration();
  auto lib = std::make_unique<Library>(Library::DEF, "disp_gen", std::nullopt, __FILE__, __LINE__);
  lib->def("f(Tensor x) -> int");
  lib->impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 1; }));
  uint64_t g1 = d.kernelGeneration();
  EXPECT_GT(g1, g0);
  {
    Library fallback(Library::IMPL, "_", DispatchKey::XLA, __FILE__, __LINE__);
    fallback.fallback(CppFunction::makeFallthrough());
    EXPECT_GT(d.kernelGeneration(), g1);
    g1 = d.kernelGeneration();
  }
  EXPECT_GT(d.kernelGeneration(), g1);  // the fallback went
  g1 = d.kernelGeneration();
  lib.reset();
  EXPECT_GT(d.kernelGeneration(), g1);  // the kernel went
}

TEST(Dispatcher, CallsRacingRegistrationsSeeOldOrNewKernel) {
  Library lib(Library::DEF, "disp_race", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 1; }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("disp_race::f", "").typed<int64_t(const Tensor&)>();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> bad{0};
  std::thread caller([&] {
    Tensor x = cpuTensor();
    while (!stop.load()) {
      int64_t r = op.call(x);
      if (r != 1 && r != 2) {
        bad.fetch_add(1);
      }
    }
  });
  for (int i = 0; i < 2000; ++i) {
    Library impl(Library::IMPL, "disp_race", DispatchKey::CPU, __FILE__, __LINE__);
    int64_t two = 2;
    impl.impl("f", [two](const Tensor&) -> int64_t { return two; });
  }
  stop.store(true);
  caller.join();
  EXPECT_EQ(bad.load(), 0);
  Dispatcher::singleton().checkInvariants();
}

TEST(Dispatcher, MissingKernelErrorsAndInspectionRaceRegistrationsAtOtherKeys) {
  // Issue 9 item 1: the missing-kernel error and the table inspection read
  // the registrations; threads doing both race threads that register and
  // remove kernels at other keys of the same operator. Every call raises the
  // missing-kernel error, and nothing crashes.
  Library lib(Library::DEF, "disp_race_err", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  auto op = Dispatcher::singleton().findSchemaOrThrow("disp_race_err::f", "");
  auto typed = op.typed<int64_t(const Tensor&)>();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::atomic<int64_t> missing{0};
  std::atomic<int64_t> unexpected{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] {
      Tensor x = cpuTensor();
      while (std::chrono::steady_clock::now() < deadline) {
        try {
          typed.call(x);
          unexpected.fetch_add(1);
        } catch (const NotImplementedError& e) {
          bool named = std::string(e.what()).find("disp_race_err::f") != std::string::npos;
          (named ? missing : unexpected).fetch_add(1);
        }
        if (op.dispatchTableEntries().size() != static_cast<size_t>(kDispatchTableSize)) {
          unexpected.fetch_add(1);
        }
      }
    });
  }
  for (DispatchKey key : {DispatchKey::Meta, DispatchKey::XLA}) {
    threads.emplace_back([&, key] {
      while (std::chrono::steady_clock::now() < deadline) {
        Library impl(Library::IMPL, "disp_race_err", key, __FILE__, __LINE__);
        impl.impl("f", [](const Tensor&) -> int64_t { return 1; });
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_GT(missing.load(), 0);
  EXPECT_EQ(unexpected.load(), 0);
  Dispatcher::singleton().checkInvariants();
}
