// Library: the C++ registration API as PyTorch users write it (torch/library.h
// with the name map): impl at a device type or key, dispatch(), def with every
// kind of callable, tags, the selective-build macros, and one namespace's
// fragments spread over translation units (the other half is in
// test_LibrarySelectiveBuild.cpp).
#include <gtest/gtest.h>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {

Tensor identity(const Tensor& x) { return x; }
Tensor twice(const Tensor& x) {
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  for (int64_t i = 0; i < x.numel(); ++i) {
    out.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
  }
  return out;
}
void boxedIdentity(const OperatorHandle&, Stack*) {}

OperatorHandle op(const std::string& name, const std::string& overload = "") {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

Tensor on(DeviceType t) { return empty({2}, ScalarType::Float, Device(t)); }

} // namespace

TEST(Library, ImplAtADeviceTypeOrKeyRegistersAtTheBackendKey) {
  Library lib(Library::DEF, "lib_a", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", kCPU, &identity);              // PyTorch: m.impl("f", torch::kCPU, &f)
  lib.impl("f", kXPU, OPDISPATCH_FN(identity));
  lib.impl("f", DeviceType::PrivateUse1, [](const Tensor& x) { return x; });
  lib.impl("f", DispatchKey::Meta, &identity);  // PyTorch: m.impl("f", c10::DispatchKey::Meta, &f)
  lib.impl("f", dispatch(kHPU, &identity));
  for (DispatchKey k :
       {DispatchKey::CPU, DispatchKey::XPU, DispatchKey::PrivateUse1, DispatchKey::Meta, DispatchKey::HPU}) {
    EXPECT_TRUE(op("lib_a::f").hasKernelForDispatchKey(k)) << toString(k);
  }
  EXPECT_FALSE(op("lib_a::f").hasKernelForDispatchKey(DispatchKey::CUDA));
  EXPECT_FALSE(op("lib_a::f").hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd));
  Tensor x = on(kXPU);
  EXPECT_TRUE(op("lib_a::f").typed<Tensor(const Tensor&)>().call(x).is_same(x));
}

TEST(Library, ImplAtADeviceTypeInsideAnImplBlockOfAnotherKeyIsAnError) {
  Library def(Library::DEF, "lib_b", std::nullopt, __FILE__, __LINE__);
  def.def("f(Tensor x) -> Tensor");
  Library impl(Library::IMPL, "lib_b", DispatchKey::Meta, __FILE__, __LINE__);
  try {
    impl.impl("f", kCPU, &identity);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Explicitly provided dispatch key (CPU) for lib_b::f is inconsistent with "
                                         "the dispatch key of the enclosing OPDISPATCH_LIBRARY_IMPL block (Meta)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(op("lib_b::f").hasKernelForDispatchKey(DispatchKey::CPU));
}

TEST(Library, DefTakesEveryKindOfCallable) {
  Library lib(Library::DEF, "lib_c", std::nullopt, __FILE__, __LINE__);
  int calls = 0;
  lib.def("ptr", &twice);                                          // inferred schema, function pointer
  lib.def("fn", OPDISPATCH_FN(twice));                             // OPDISPATCH_FN (PyTorch: TORCH_FN)
  lib.def("lambda(Tensor x) -> Tensor", [&calls](const Tensor& x) {  // stateful lambda, declared schema
    ++calls;
    return x;
  });
  lib.def("cpu_only(Tensor x) -> Tensor", dispatch(kCPU, &twice));  // a CppFunction with a key
  lib.def("boxed(Tensor x) -> ()", CppFunction::makeFromBoxedFunction<&boxedIdentity>());
  lib.def("unboxed_fn", CppFunction(&identity));
  EXPECT_EQ(op("lib_c::ptr").schema().toString(), "lib_c::ptr(Tensor _0) -> Tensor _0");
  EXPECT_TRUE(op("lib_c::ptr").hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd));
  EXPECT_TRUE(op("lib_c::fn").hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd));
  EXPECT_TRUE(op("lib_c::cpu_only").hasKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_FALSE(op("lib_c::cpu_only").hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd));
  EXPECT_TRUE(op("lib_c::boxed").hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd));
  EXPECT_EQ(op("lib_c::unboxed_fn").schema().toString(), "lib_c::unboxed_fn(Tensor _0) -> Tensor _0");

  Tensor x = empty({2}, ScalarType::Float);
  x.data_ptr<float>()[0] = 1.5f;
  x.data_ptr<float>()[1] = -1.0f;
  auto call = [&](const char* name) { return op(name).typed<Tensor(const Tensor&)>().call(x); };
  EXPECT_FLOAT_EQ(call("lib_c::ptr").data_ptr<float>()[0], 3.0f);
  EXPECT_FLOAT_EQ(call("lib_c::fn").data_ptr<float>()[1], -2.0f);
  EXPECT_FLOAT_EQ(call("lib_c::cpu_only").data_ptr<float>()[0], 3.0f);
  EXPECT_TRUE(call("lib_c::lambda").is_same(x));
  EXPECT_EQ(calls, 1);
  // A boxed function has no signature to infer a schema from.
  EXPECT_THROW(lib.def("boxed_no_schema", CppFunction::makeFromBoxedFunction<&boxedIdentity>()), Error);
}

TEST(Library, DefStoresTags) {
  Library lib(Library::DEF, "lib_d", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> Tensor", {Tag::pt2_compliant_tag, Tag::needs_fixed_stride_order});
  lib.def("g", &identity, {Tag::core});
  lib.def("h(Tensor x) -> Tensor");
  EXPECT_EQ(op("lib_d::f").tags(), (std::vector<std::string>{"pt2_compliant_tag", "needs_fixed_stride_order"}));
  EXPECT_EQ(op("lib_d::g").tags(), (std::vector<std::string>{"core"}));
  EXPECT_TRUE(op("lib_d::h").tags().empty());
  EXPECT_EQ(parseTag("view_copy"), Tag::view_copy);
  EXPECT_THROW(parseTag("not_a_tag"), ValueError);
}

// --- selective registration -----------------------------------------------------------------

static_assert(detail::allowlistContains("a::b;c::d.x", "c::d.x"), "an entry matches");
static_assert(!detail::allowlistContains("a::b;c::d.x", "c::d"), "an overload is part of the name");
static_assert(!detail::allowlistContains("a::bb", "a::b"), "entries match whole");
static_assert(!detail::allowlistContains("", "a::b"), "an empty allowlist has nothing");
static_assert(detail::schemaOperatorName("ns::f.o(Tensor x) -> Tensor") == "ns::f.o", "the name of a schema");

TEST(Library, SelectiveMacrosRegisterWhenNoAllowlistIsGiven) {
  Library lib(Library::DEF, "lib_e", std::nullopt, __FILE__, __LINE__);
  lib.def(OPDISPATCH_SELECTIVE_SCHEMA("lib_e::f(Tensor x) -> Tensor"));
  lib.def(OPDISPATCH_SELECTIVE_SCHEMA("lib_e::g"), &identity);
  lib.impl(OPDISPATCH_SELECTIVE_NAME("lib_e::f"), OPDISPATCH_FN(identity));
  lib.impl(OPDISPATCH_SELECTIVE_NAME("lib_e::g"), kMeta, &identity);
  EXPECT_TRUE(op("lib_e::f").hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd));
  EXPECT_TRUE(op("lib_e::g").hasKernelForDispatchKey(DispatchKey::Meta));
  // What a selective build gives for an operator it leaves out: nothing.
  lib.def(detail::SelectiveStr<false>("lib_e::h(Tensor x) -> Tensor"));
  lib.def(detail::SelectiveStr<false>("lib_e::i"), &identity);
  lib.impl(detail::SelectiveStr<false>("lib_e::f"), kCPU, &identity);
  lib.impl(detail::SelectiveStr<false>("lib_e::f"), &identity);
  EXPECT_FALSE(Dispatcher::singleton().findOp(OperatorName("lib_e::h", "")).has_value());
  EXPECT_FALSE(Dispatcher::singleton().findOp(OperatorName("lib_e::i", "")).has_value());
  EXPECT_FALSE(op("lib_e::f").hasKernelForDispatchKey(DispatchKey::CPU));
}

// --- one namespace, several translation units ------------------------------------------------

OPDISPATCH_LIBRARY_FRAGMENT(lib_fragments, m) { m.def("from_test_library(Tensor x) -> Tensor"); }
// Kernels for an operator another file's fragment defines.
OPDISPATCH_LIBRARY_IMPL(lib_fragments, CPU, m) {
  m.impl("from_selective_build", &twice);
  m.impl("from_test_library", OPDISPATCH_FN(identity));
}

TEST(Library, FragmentsOfOneNamespaceInSeveralFilesAllRegister) {
  Tensor x = empty({2}, ScalarType::Float);
  x.data_ptr<float>()[0] = 4.0f;
  EXPECT_TRUE(op("lib_fragments::from_test_library").typed<Tensor(const Tensor&)>().call(x).is_same(x));
  EXPECT_FLOAT_EQ(op("lib_fragments::from_selective_build").typed<Tensor(const Tensor&)>().call(x).data_ptr<float>()[0],
                  8.0f);
  EXPECT_TRUE(op("lib_fragments::from_selective_build").hasKernelForDispatchKey(DispatchKey::Meta));
}

TEST(Library, SetPythonModuleRecordsAPystubForLaterDefs) {
  auto& d = Dispatcher::singleton();
  {
    Library lib(Library::DEF, "lib_pystub", std::nullopt, __FILE__, __LINE__);
    lib.def("before(Tensor x) -> Tensor");
    lib.set_python_module("my_pkg.fake_impls", "//my:target");
    lib.def("after(Tensor x) -> Tensor");
    lib.def("with_kernel", &identity);
    EXPECT_FALSE(d.getPyStub(OperatorName("lib_pystub::before", "")).has_value());
    auto stub = d.getPyStub(OperatorName("lib_pystub::after", ""));
    ASSERT_TRUE(stub.has_value());
    EXPECT_EQ(stub->first, "my_pkg.fake_impls");
    EXPECT_EQ(stub->second, "//my:target");
    EXPECT_EQ(d.getPyStub(OperatorName("lib_pystub::with_kernel", ""))->first, "my_pkg.fake_impls");
    {
      // Another library naming a module for the same operator wins until it is undone.
      Library frag(Library::FRAGMENT, "lib_pystub", std::nullopt, __FILE__, __LINE__);
      frag.impl_abstract_pystub("other_pkg");  // PyTorch's older name
      auto handle = d.registerPythonModule(OperatorName("lib_pystub::after", ""), "newest", "");
      EXPECT_EQ(d.getPyStub(OperatorName("lib_pystub::after", ""))->first, "newest");
    }
    EXPECT_EQ(d.getPyStub(OperatorName("lib_pystub::after", ""))->first, "my_pkg.fake_impls");
    // A def whose kernel does not fit is undone with its pystub.
    EXPECT_THROW(lib.def("bad(int x) -> Tensor", &identity), Error);
    EXPECT_FALSE(d.findOp(OperatorName("lib_pystub::bad", "")).has_value());
    EXPECT_FALSE(d.getPyStub(OperatorName("lib_pystub::bad", "")).has_value());
  }
  EXPECT_FALSE(d.getPyStub(OperatorName("lib_pystub::after", "")).has_value());
}

namespace {
int keysetCalls = 0;
void countingKeysetFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  ++keysetCalls;
  op.redispatchBoxed(ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::AutocastPrivateUse1), stack);
}
} // namespace

TEST(Library, MakeFromBoxedFunctionTakesAKeysetFunctionAsPyTorchDoes) {
  // Device plugins: TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(makeFromBoxedFunction<&f>()); }
  // with f taking the DispatchKeySet.
  Library fb(Library::IMPL, "_", DispatchKey::AutocastPrivateUse1, __FILE__, __LINE__);
  fb.fallback(CppFunction::makeFromBoxedFunction<&countingKeysetFallback>());
  Library lib(Library::DEF, "lib_keyset", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", kPrivateUse1, &identity);
  Tensor x = on(kPrivateUse1);
  auto f = op("lib_keyset::f").typed<Tensor(const Tensor&)>();
  EXPECT_TRUE(f.call(x).is_same(x));
  EXPECT_EQ(keysetCalls, 0);
  IncludeDispatchKeyGuard autocast(DispatchKey::AutocastPrivateUse1);
  EXPECT_TRUE(f.call(x).is_same(x));
  EXPECT_EQ(keysetCalls, 1);
}

// PyTorch: TORCH_LIBRARY_IMPL(ns, CatchAll, m), an alias of CompositeImplicitAutograd.
OPDISPATCH_LIBRARY(lib_catchall, m) { m.def("f(Tensor x) -> Tensor"); }
OPDISPATCH_LIBRARY_IMPL(lib_catchall, CatchAll, m) { m.impl("f", &twice); }

TEST(Library, CatchAllRegistersAtCompositeImplicitAutograd) {
  EXPECT_EQ(DispatchKey::CatchAll, DispatchKey::CompositeImplicitAutograd);
  EXPECT_STREQ(toString(DispatchKey::CatchAll), "CompositeImplicitAutograd");
  EXPECT_TRUE(op("lib_catchall::f").hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd));
  EXPECT_NE(op("lib_catchall::f").dumpState().find("CompositeImplicitAutograd[alias]: registered at "),
            std::string::npos)
      << op("lib_catchall::f").dumpState();
  Tensor x = on(DeviceType::CPU);
  x.data_ptr<float>()[0] = 1.5f;
  x.data_ptr<float>()[1] = -2.0f;
  Tensor y = op("lib_catchall::f").typed<Tensor(const Tensor&)>().call(x);  // CPU runs the CatchAll kernel
  EXPECT_EQ(y.data_ptr<float>()[0], 3.0f);
  EXPECT_EQ(y.data_ptr<float>()[1], -4.0f);
  EXPECT_THROW(parseDispatchKey("CatchAll"), ValueError);  // PyTorch: "could not parse dispatch key: CatchAll"
}

namespace {
Tensor registeredTheOldWay(Tensor x, std::optional<Tensor> y) { return y.has_value() ? *y : x; }
} // namespace

TEST(Library, RegisterOperatorsDefinesWithTheInferredSchemaForItsLifetime) {
  // PyTorch 2.13 infers "lib_old::pick(Tensor _0, Tensor? _1) -> Tensor _0" and registers a catch-all kernel.
  {
    auto registry = RegisterOperators().op("lib_old::pick", &registeredTheOldWay);
    EXPECT_EQ(op("lib_old::pick").schema().toString(), "lib_old::pick(Tensor _0, Tensor? _1) -> Tensor _0");
    Tensor x = empty({1}, kFloat);
    Tensor y = empty({1}, kFloat);
    auto pick = op("lib_old::pick").typed<Tensor(Tensor, std::optional<Tensor>)>();
    EXPECT_TRUE(pick.call(x, std::nullopt).is_same(x));
    EXPECT_TRUE(pick.call(x, y).is_same(y));
  }
  EXPECT_FALSE(Dispatcher::singleton().findSchema(OperatorName("lib_old::pick", "")).has_value());
  EXPECT_THROW(RegisterOperators().op("pick", &registeredTheOldWay), Error);
}

TEST(Library, AtenOlderErrorMacros) {
  try {
    OPDISPATCH_ERROR("Not compiled with CUDA support");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Not compiled with CUDA support");
  }
  try {
    OPDISPATCH_ASSERTM(1 + 1 == 3, "Input mismatch");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("INTERNAL ASSERT FAILED at "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("1 + 1 == 3. Input mismatch"), std::string::npos);
  }
}
