// Boxing and unboxing of every supported argument and return type: typed
// kernels called boxed (make_boxed_from_unboxed_functor), boxed kernels
// called typed (arguments boxed), and typed kernels called typed (unboxed).
#include <gtest/gtest.h>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {

Tensor makeTensor(float v) {
  Tensor t = empty({2}, ScalarType::Float);
  t.data_ptr<float>()[0] = v;
  t.data_ptr<float>()[1] = v;
  return t;
}

// One kernel taking every supported argument type; it returns a summary of
// what it received so the test sees each value arrive intact.
std::tuple<Tensor, int64_t, double, bool, std::string, std::vector<Tensor>, std::vector<int64_t>> everything(
    const Tensor& a, int64_t b, double c, bool d, const std::string& e, std::optional<int64_t> f, IntArrayRef g,
    const std::vector<Tensor>& h, const std::optional<Tensor>& i, ArrayRef<double> j, const std::vector<bool>& k,
    const Scalar& s, ScalarType t, const std::vector<std::optional<Tensor>>& u, std::string_view v,
    std::optional<std::vector<int64_t>> w, Device x) {
  int64_t sum = b + f.value_or(-1000);
  for (auto gi : g) {
    sum += gi;
  }
  double dsum = c + s.toDouble();
  for (auto jd : j) {
    dsum += jd;
  }
  bool all = d && k.size() == 2 && k[0] && !k[1] && t == ScalarType::Double && x.is_meta() && w.has_value() &&
             w->size() == 1;
  std::vector<Tensor> tensors = h;
  if (i) {
    tensors.push_back(*i);
  }
  for (const auto& o : u) {
    if (o) {
      tensors.push_back(*o);
    }
  }
  return {a, sum, dsum, all, e + std::string(v), tensors, std::vector<int64_t>(g.begin(), g.end())};
}

constexpr const char* kEverythingSchema =
    "everything(Tensor a, int b, float c, bool d, str e, int? f, int[] g, Tensor[] h, Tensor? i, float[] j, "
    "bool[] k, Scalar s, ScalarType t, Tensor?[] u, str v, int[]? w, Device x) "
    "-> (Tensor, int, float, bool, str, Tensor[], int[])";

Stack everythingStack(const Tensor& a, const Tensor& h0, const Tensor& i) {
  Stack s;
  push(s, a, int64_t(1), 2.5, true, std::string("ab"), int64_t(10), std::vector<int64_t>{100, 1000},
       std::vector<Tensor>{h0}, i, std::vector<double>{0.25}, std::vector<bool>{true, false}, Scalar(0.5),
       ScalarType::Double, std::vector<std::optional<Tensor>>{std::nullopt, h0}, std::string("cd"),
       std::vector<int64_t>{7}, Device(DeviceType::Meta));
  return s;
}

void checkEverythingResults(const Stack& s, const Tensor& a, const Tensor& h0, const Tensor& i) {
  ASSERT_EQ(s.size(), 7u);
  EXPECT_TRUE(s[0].toTensor().is_same(a));
  EXPECT_EQ(s[1].toInt(), 1 + 10 + 100 + 1000);
  EXPECT_DOUBLE_EQ(s[2].toDouble(), 2.5 + 0.5 + 0.25);
  EXPECT_TRUE(s[3].toBool());
  EXPECT_EQ(s[4].toStringRef(), "abcd");
  ASSERT_EQ(s[5].toTensorList().size(), 3u);
  EXPECT_TRUE(s[5].toTensorList()[0].is_same(h0));
  EXPECT_TRUE(s[5].toTensorList()[1].is_same(i));
  EXPECT_TRUE(s[5].toTensorList()[2].is_same(h0));
  EXPECT_EQ(s[6].toIntList(), (std::vector<int64_t>{100, 1000}));
}

} // namespace

TEST(Boxing, TypedKernelCalledBoxed) {
  Library lib(Library::DEF, "boxing_a", std::nullopt, __FILE__, __LINE__);
  lib.def(kEverythingSchema);
  lib.impl("everything", dispatch(DispatchKey::CPU, &everything));
  auto op = Dispatcher::singleton().findSchemaOrThrow("boxing_a::everything", "");
  Tensor a = makeTensor(1), h0 = makeTensor(2), i = makeTensor(3);
  Stack s = everythingStack(a, h0, i);
  op.callBoxed(&s);
  checkEverythingResults(s, a, h0, i);
}

TEST(Boxing, TypedKernelCalledTypedUsesUnboxedEntry) {
  Library lib(Library::DEF, "boxing_b", std::nullopt, __FILE__, __LINE__);
  lib.def(kEverythingSchema);
  lib.impl("everything", dispatch(DispatchKey::CPU, OPDISPATCH_FN(everything)));
  auto op = Dispatcher::singleton().findSchemaOrThrow("boxing_b::everything", "").typed<decltype(everything)>();
  Tensor a = makeTensor(1), h0 = makeTensor(2), i = makeTensor(3);
  std::vector<int64_t> g{100, 1000};
  std::vector<double> j{0.25};
  auto [ra, rb, rc, rd, re, rf, rg] = op.call(a, 1, 2.5, true, "ab", 10, g, {h0}, i, j, {true, false}, Scalar(0.5),
                                              ScalarType::Double, {std::nullopt, h0}, "cd", std::vector<int64_t>{7},
                                              Device(DeviceType::Meta));
  EXPECT_TRUE(ra.is_same(a));
  EXPECT_EQ(rb, 1111);
  EXPECT_DOUBLE_EQ(rc, 3.25);
  EXPECT_TRUE(rd);
  EXPECT_EQ(re, "abcd");
  EXPECT_EQ(rf.size(), 3u);
  EXPECT_EQ(rg, g);
}

namespace {
// A boxed kernel for `f(Tensor x, int n, float? scale) -> (Tensor, int, float)`.
void boxedKernel(const OperatorHandle& op, Stack* stack) {
  auto args = pop(*stack, op.schema().arguments().size());
  double scale = args[2].isNone() ? 1.0 : args[2].toDouble();
  push(*stack, args[0].toTensor(), args[1].toInt() * 2, scale * 3);
}
} // namespace

TEST(Boxing, BoxedKernelCalledTyped) {
  Library lib(Library::DEF, "boxing_c", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x, int n, float? scale) -> (Tensor, int, float)");
  lib.impl("f", dispatch(DispatchKey::CPU, CppFunction::makeFromBoxedFunction<&boxedKernel>()));
  auto op = Dispatcher::singleton()
                .findSchemaOrThrow("boxing_c::f", "")
                .typed<std::tuple<Tensor, int64_t, double>(const Tensor&, int64_t, std::optional<double>)>();
  Tensor x = makeTensor(1);
  auto [t, n, s] = op.call(x, 21, std::nullopt);
  EXPECT_TRUE(t.is_same(x));
  EXPECT_EQ(n, 42);
  EXPECT_DOUBLE_EQ(s, 3.0);
  auto [t2, n2, s2] = op.call(x, 1, 2.0);
  EXPECT_DOUBLE_EQ(s2, 6.0);
}

TEST(Boxing, SingleReturnsOfEachType) {
  Library lib(Library::DEF, "boxing_d", std::nullopt, __FILE__, __LINE__);
  lib.def("t(Tensor x) -> Tensor");
  lib.def("i(Tensor x) -> int");
  lib.def("f(Tensor x) -> float");
  lib.def("b(Tensor x) -> bool");
  lib.def("s(Tensor x) -> str");
  lib.def("l(Tensor x) -> Tensor[]");
  lib.def("n(Tensor x) -> ()");
  lib.def("o(Tensor x, bool give) -> Tensor?");
  int side_effect = 0;
  lib.impl("t", dispatch(DispatchKey::CPU, [](const Tensor& x) { return x; }));
  lib.impl("i", dispatch(DispatchKey::CPU, [](const Tensor& x) { return x.numel(); }));
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor& x) { return 0.5 * x.numel(); }));
  lib.impl("b", dispatch(DispatchKey::CPU, [](const Tensor& x) { return x.is_contiguous(); }));
  lib.impl("s",
           dispatch(DispatchKey::CPU, [](const Tensor& x) { return std::string("n=") + std::to_string(x.numel()); }));
  lib.impl("l", dispatch(DispatchKey::CPU, [](const Tensor& x) { return std::vector<Tensor>{x, x}; }));
  lib.impl("n", dispatch(DispatchKey::CPU, [&side_effect](const Tensor& x) { side_effect += x.numel(); }));
  lib.impl("o", dispatch(DispatchKey::CPU,
                         [](const Tensor& x, bool give) { return give ? std::optional<Tensor>(x) : std::nullopt; }));
  Tensor x = makeTensor(1);
  auto& d = Dispatcher::singleton();
  auto boxed = [&](const char* name, Stack s) {
    d.findSchemaOrThrow(std::string("boxing_d::") + name, "").callBoxed(&s);
    return s;
  };
  EXPECT_TRUE(boxed("t", {x})[0].toTensor().is_same(x));
  EXPECT_EQ(boxed("i", {x})[0].toInt(), 2);
  EXPECT_DOUBLE_EQ(boxed("f", {x})[0].toDouble(), 1.0);
  EXPECT_TRUE(boxed("b", {x})[0].toBool());
  EXPECT_EQ(boxed("s", {x})[0].toStringRef(), "n=2");
  EXPECT_EQ(boxed("l", {x})[0].toTensorList().size(), 2u);
  EXPECT_TRUE(boxed("n", {x}).empty());
  EXPECT_EQ(side_effect, 2);
  EXPECT_TRUE(boxed("o", {x, false})[0].isNone());
  EXPECT_TRUE(boxed("o", {x, true})[0].toTensor().is_same(x));

  EXPECT_EQ(d.findSchemaOrThrow("boxing_d::i", "").typed<int64_t(const Tensor&)>().call(x), 2);
  EXPECT_EQ(d.findSchemaOrThrow("boxing_d::s", "").typed<std::string(const Tensor&)>().call(x), "n=2");
  d.findSchemaOrThrow("boxing_d::n", "").typed<void(const Tensor&)>().call(x);
  EXPECT_EQ(side_effect, 4);
}

// Note [Boxed arguments are taken, not copied]: a by-value Tensor parameter
// takes the stack's reference (the kernel sees the caller's reference and
// the stack's, no third), and the result replaces the arguments in place,
// leaving the values below them untouched.
TEST(Boxing, ByValueTensorParametersTakeTheStacksReference) {
  Library lib(Library::DEF, "boxing_byvalue", std::nullopt, __FILE__, __LINE__);
  lib.def("take(Tensor a, Tensor b, int n) -> Tensor");
  static size_t seen_a = 0, seen_b = 0;
  lib.impl("take", dispatch(DispatchKey::CPU, [](Tensor a, Tensor b, int64_t n) {
             seen_a = a.use_count();
             seen_b = b.use_count();
             return n == 0 ? a : b;
           }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("boxing_byvalue::take", "");
  Tensor x = makeTensor(1), y = makeTensor(2);
  Stack s;
  push(s, int64_t(-7), x, y, int64_t(1));
  op.callBoxed(&s);
  EXPECT_EQ(seen_a, 2u);  // x and the stack's reference, moved into the parameter
  EXPECT_EQ(seen_b, 2u);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].toInt(), -7);
  EXPECT_TRUE(s[1].toTensor().is_same(y));
  EXPECT_EQ(x.use_count(), 1u);  // the arguments' references are gone
  EXPECT_EQ(y.use_count(), 2u);  // y and the result
}

TEST(Boxing, WrongArgumentTypeOnStackIsATypeError) {
  Library lib(Library::DEF, "boxing_e", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x, int n) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&, int64_t n) { return n; }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("boxing_e::f", "");
  Stack s{makeTensor(1), std::string("not an int")};
  try {
    op.callBoxed(&s);
    FAIL() << "expected a TypeError";
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(),
                 "boxed call of boxing_e::f: argument 1 ('n') on the stack is a str but the kernel takes a int; push "
                 "the arguments in schema order with the schema's types");
  }
  ASSERT_EQ(s.size(), 2u);  // the arguments stay on the stack
  lib.def("g(Tensor x, Tensor y) -> int");
  lib.impl("g", dispatch(DispatchKey::CPU, [](const Tensor&, const Tensor&) { return int64_t(0); }));
  Stack t{int64_t(3), makeTensor(1)};
  try {
    Dispatcher::singleton().findSchemaOrThrow("boxing_e::g", "").callBoxed(&t);
    FAIL() << "expected a TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 0 ('x') on the stack is a int but the kernel takes a Tensor"),
              std::string::npos)
        << e.what();
  }
}

TEST(Boxing, KeysetFirstKernelsReceiveTheKeySet) {
  Library lib(Library::DEF, "boxing_f", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU,
                         [](DispatchKeySet ks, const Tensor&) { return static_cast<int64_t>(ks.raw_repr()); }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("boxing_f::f", "").typed<int64_t(const Tensor&)>();
  EXPECT_EQ(op.call(makeTensor(1)), static_cast<int64_t>(DispatchKeySet(DispatchKey::CPU).raw_repr()));
}

// --- Tensor& parameters and results (in-place and out= kernels) ----------------------------
// See Note [Tensor& kernel parameters].

namespace {
float at(const Tensor& t, int64_t i) { return t.data_ptr<float>()[i]; }

// out = a + b, written through the Tensor& out parameter.
void addOut(const Tensor& a, const Tensor& b, Tensor& out) {
  for (int64_t i = 0; i < out.numel(); ++i) {
    out.data_ptr<float>()[i] = at(a, i) + at(b, i);
  }
}
// In place: self += other, returns self (PyTorch's add_ signature).
Tensor& addInplace(Tensor& self, const Tensor& other) {
  for (int64_t i = 0; i < self.numel(); ++i) {
    self.data_ptr<float>()[i] += at(other, i);
  }
  return self;
}
// out= with the result returned: the last argument (PyTorch's add.out signature).
Tensor& addOutReturning(const Tensor& a, const Tensor& b, Tensor& out) {
  addOut(a, b, out);
  return out;
}
// Two outputs written and returned, as PyTorch's max.dim_max.
std::tuple<Tensor&, Tensor&> sumAndDiffOut(const Tensor& a, const Tensor& b, Tensor& sum, Tensor& diff) {
  for (int64_t i = 0; i < a.numel(); ++i) {
    sum.data_ptr<float>()[i] = at(a, i) + at(b, i);
    diff.data_ptr<float>()[i] = at(a, i) - at(b, i);
  }
  return {sum, diff};
}
} // namespace

TEST(Boxing, MutableTensorParametersAliasTheCallersTensorCalledBoxed) {
  Library lib(Library::DEF, "boxing_g", std::nullopt, __FILE__, __LINE__);
  lib.def("add_out(Tensor a, Tensor b, Tensor(a!) out) -> ()");
  lib.def("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  lib.def("add.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("sum_diff.out(Tensor a, Tensor b, *, Tensor(a!) sum, Tensor(b!) diff) -> (Tensor(a!), Tensor(b!))");
  lib.impl("add_out", kCPU, &addOut);
  lib.impl("add_", kCPU, &addInplace);
  lib.impl("add.out", kCPU, OPDISPATCH_FN(addOutReturning));
  lib.impl("sum_diff.out", DispatchKey::CPU, &sumAndDiffOut);
  auto& d = Dispatcher::singleton();
  Tensor a = makeTensor(3), b = makeTensor(1), out = makeTensor(0), diff = makeTensor(0);

  Stack s{a, b, out};
  d.findSchemaOrThrow("boxing_g::add_out", "").callBoxed(&s);
  EXPECT_TRUE(s.empty());
  EXPECT_FLOAT_EQ(at(out, 1), 4.0f);

  s = {a, b};
  d.findSchemaOrThrow("boxing_g::add_", "").callBoxed(&s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].toTensor().is_same(a));
  EXPECT_FLOAT_EQ(at(a, 0), 4.0f);

  s = {a, b, out};
  d.findSchemaOrThrow("boxing_g::add", "out").callBoxed(&s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].toTensor().is_same(out));
  EXPECT_FLOAT_EQ(at(out, 0), 5.0f);

  s = {a, b, out, diff};
  d.findSchemaOrThrow("boxing_g::sum_diff", "out").callBoxed(&s);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(s[0].toTensor().is_same(out));
  EXPECT_TRUE(s[1].toTensor().is_same(diff));
  EXPECT_FLOAT_EQ(at(out, 0), 5.0f);
  EXPECT_FLOAT_EQ(at(diff, 0), 3.0f);
}

TEST(Boxing, MutableTensorParametersCalledTypedAreTheCallersTensors) {
  Library lib(Library::DEF, "boxing_h", std::nullopt, __FILE__, __LINE__);
  lib.def("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  lib.def("sum_diff.out(Tensor a, Tensor b, *, Tensor(a!) sum, Tensor(b!) diff) -> (Tensor(a!), Tensor(b!))");
  lib.impl("add_", kCPU, OPDISPATCH_FN(addInplace));
  lib.impl("sum_diff.out", kCPU, &sumAndDiffOut);
  auto& d = Dispatcher::singleton();
  Tensor a = makeTensor(3), b = makeTensor(1), sum = makeTensor(0), diff = makeTensor(0);
  auto add_ = d.findSchemaOrThrow("boxing_h::add_", "").typed<Tensor&(Tensor&, const Tensor&)>();
  uint32_t version = a._version();
  Tensor& r = add_.call(a, b);
  EXPECT_EQ(&r, &a);  // the very object the caller passed
  EXPECT_FLOAT_EQ(at(a, 1), 4.0f);
  EXPECT_EQ(a._version(), version + 1);  // Tensor(a!): bumped by the dispatcher
  auto sd = d.findSchemaOrThrow("boxing_h::sum_diff", "out")
                .typed<std::tuple<Tensor&, Tensor&>(const Tensor&, const Tensor&, Tensor&, Tensor&)>();
  auto [rs, rd] = sd.call(a, b, sum, diff);
  EXPECT_EQ(&rs, &sum);
  EXPECT_EQ(&rd, &diff);
  EXPECT_FLOAT_EQ(at(sum, 0), 5.0f);
  EXPECT_FLOAT_EQ(at(diff, 0), 3.0f);
}

namespace {
// A boxed kernel for add_: returns (on the stack) the tensor it wrote to.
void boxedAddInplace(const OperatorHandle&, Stack* stack) {
  Tensor other = pop(*stack).toTensor();
  Tensor self = pop(*stack).toTensor();
  for (int64_t i = 0; i < self.numel(); ++i) {
    self.data_ptr<float>()[i] += at(other, i);
  }
  push(*stack, self);
}
// A boxed kernel for add.out.
void boxedAddOut(const OperatorHandle&, Stack* stack) {
  auto args = pop(*stack, 3);
  Tensor out = args[2].toTensor();
  addOut(args[0].toTensor(), args[1].toTensor(), out);
  push(*stack, out);
}
// A boxed kernel for an out= op with two outputs.
void boxedSumDiffOut(const OperatorHandle&, Stack* stack) {
  auto args = pop(*stack, 4);
  Tensor sum = args[2].toTensor(), diff = args[3].toTensor();
  sumAndDiffOut(args[0].toTensor(), args[1].toTensor(), sum, diff);
  push(*stack, sum, diff);
}
} // namespace

TEST(Boxing, BoxedKernelsCalledTypedReturnTheMutatedArguments) {
  // PyTorch (BoxedKernelWrapper): a Tensor& result is the first Tensor& argument
  // (in-place) or the last ones (out=), not a copy read from the stack.
  Library lib(Library::DEF, "boxing_i", std::nullopt, __FILE__, __LINE__);
  lib.def("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  lib.def("add.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("sum_diff.out(Tensor a, Tensor b, *, Tensor(a!) sum, Tensor(b!) diff) -> (Tensor(a!), Tensor(b!))");
  lib.impl("add_", kCPU, CppFunction::makeFromBoxedFunction<&boxedAddInplace>());
  lib.impl("add.out", kCPU, CppFunction::makeFromBoxedFunction<&boxedAddOut>());
  lib.impl("sum_diff.out", kCPU, CppFunction::makeFromBoxedFunction<&boxedSumDiffOut>());
  auto& d = Dispatcher::singleton();
  Tensor a = makeTensor(3), b = makeTensor(1), out = makeTensor(0), diff = makeTensor(0);
  Tensor& r = d.findSchemaOrThrow("boxing_i::add_", "").typed<Tensor&(Tensor&, const Tensor&)>().call(a, b);
  EXPECT_EQ(&r, &a);
  EXPECT_FLOAT_EQ(at(a, 0), 4.0f);
  Tensor& o = d.findSchemaOrThrow("boxing_i::add", "out")
                  .typed<Tensor&(const Tensor&, const Tensor&, Tensor&)>()
                  .call(a, b, out);
  EXPECT_EQ(&o, &out);
  EXPECT_FLOAT_EQ(at(out, 0), 5.0f);
  auto [rs, rd] = d.findSchemaOrThrow("boxing_i::sum_diff", "out")
                      .typed<std::tuple<Tensor&, Tensor&>(const Tensor&, const Tensor&, Tensor&, Tensor&)>()
                      .call(a, b, out, diff);
  EXPECT_EQ(&rs, &out);
  EXPECT_EQ(&rd, &diff);
  EXPECT_FLOAT_EQ(at(diff, 1), 3.0f);
}

// --- the parameter types real kernels declare ---------------------------------------------

namespace {
// Every parameter spelling below is taken from real kernels (vLLM, torchvision,
// FBGEMM, PyTorch's native functions).
std::vector<int64_t> realWorldTypes(const Tensor& x, TensorList xs, const std::vector<Tensor>& ys,
                                    const std::optional<Tensor>& maybe, std::optional<Tensor> maybe_by_value,
                                    IntArrayRef sizes, ArrayRef<int64_t> strides, std::optional<IntArrayRef> dims,
                                    string_view mode, const std::string& name, const Scalar& alpha,
                                    std::optional<ScalarType> dtype, bool flag, double scale, int64_t n,
                                    const std::vector<int64_t>& block, const std::optional<std::vector<Tensor>>& outs,
                                    const std::optional<double>& limit) {
  return {x.numel(),
          static_cast<int64_t>(xs.size() + ys.size()),
          maybe.has_value() + 2 * maybe_by_value.has_value(),
          sizes.empty() ? -1 : sizes[0],
          strides.empty() ? -1 : strides.back(),
          dims ? static_cast<int64_t>(dims->size()) : -1,
          static_cast<int64_t>(mode.size() + name.size()),
          alpha.toLong(),
          dtype ? static_cast<int64_t>(*dtype) : -1,
          flag,
          static_cast<int64_t>(scale * 10),
          n,
          static_cast<int64_t>(block.size()),
          outs ? static_cast<int64_t>(outs->size()) : -1,
          limit ? static_cast<int64_t>(*limit) : -1};
}
constexpr const char* kRealWorldSchema =
    "real(Tensor x, Tensor[] xs, Tensor[] ys, Tensor? maybe, Tensor? maybe_by_value, SymInt[] sizes, int[] strides, "
    "int[]? dims, str mode, str name, Scalar alpha, ScalarType? dtype, bool flag, float scale, SymInt n, "
    "int[] block, Tensor[](a!)? outs, float? limit) -> int[]";
} // namespace

TEST(Boxing, RealWorldParameterTypesInferTheirSchemaAndRoundTripBothWays) {
  EXPECT_EQ(inferFunctionSchema<decltype(realWorldTypes)>()->toString(),
            "(Tensor _0, Tensor[] _1, Tensor[] _2, Tensor? _3, Tensor? _4, int[] _5, int[] _6, int[]? _7, str _8, "
            "str _9, Scalar _10, ScalarType? _11, bool _12, float _13, int _14, int[] _15, Tensor[]? _16, "
            "float? _17) -> int[] _0");
  Library lib(Library::DEF, "boxing_j", std::nullopt, __FILE__, __LINE__);
  lib.def(kRealWorldSchema);
  lib.impl("real", kCPU, &realWorldTypes);
  auto& d = Dispatcher::singleton();
  Tensor x = makeTensor(1);
  const std::vector<int64_t> expected{2, 3, 2, 4, 6, 2, 5, 7, 4, 1, 25, 9, 3, 1, 7};
  Stack s;
  push(s, x, std::vector<Tensor>{x}, std::vector<Tensor>{x, x}, IValue(), x, std::vector<int64_t>{4, 5},
       std::vector<int64_t>{6}, std::vector<int64_t>{0, 1}, std::string("ab"), std::string("cde"), int64_t(7),
       ScalarType::Long, true, 2.5, int64_t(9), std::vector<int64_t>{1, 2, 3}, std::vector<Tensor>{x}, 7.9);
  d.findSchemaOrThrow("boxing_j::real", "").callBoxed(&s);
  EXPECT_EQ(s.at(0).toIntList(), expected);

  auto typed = d.findSchemaOrThrow("boxing_j::real", "").typed<decltype(realWorldTypes)>();
  std::vector<int64_t> dims{0, 1};
  EXPECT_EQ(typed.call(x, {x}, {x, x}, std::nullopt, x, {4, 5}, {6}, IntArrayRef(dims), "ab", "cde", 7,
                       ScalarType::Long, true, 2.5, 9, {1, 2, 3}, std::vector<Tensor>{x}, 7.9),
            expected);
}

namespace {
int64_t version() noexcept { return 42; }
} // namespace

TEST(Boxing, NoexceptKernelsHaveThePlainSignature) {
  // torchvision: `int64_t cuda_version() noexcept` registered with m.def("_cuda_version", &cuda_version).
  Library lib(Library::DEF, "boxing_k", std::nullopt, __FILE__, __LINE__);
  lib.def("version", &version);
  lib.def("version2", OPDISPATCH_FN(version));
  lib.def("version3", [](const Tensor& x) noexcept { return x.numel(); });
  auto& d = Dispatcher::singleton();
  EXPECT_EQ(d.findSchemaOrThrow("boxing_k::version", "").schema().toString(), "boxing_k::version() -> int _0");
  EXPECT_EQ(d.findSchemaOrThrow("boxing_k::version", "").typed<int64_t()>().call(), 42);
  EXPECT_EQ(d.findSchemaOrThrow("boxing_k::version2", "").typed<int64_t()>().call(), 42);
  EXPECT_EQ(d.findSchemaOrThrow("boxing_k::version3", "").typed<int64_t(const Tensor&)>().call(makeTensor(0)), 2);
}

TEST(Boxing, DeclaredAliasAnnotationsAcceptTensorReferences) {
  // PyTorch infers plain `Tensor` for `Tensor&`; the declared `Tensor(a!)` is accepted
  // (alias annotations are not compared), a declared type that differs is not.
  Library lib(Library::DEF, "boxing_l", std::nullopt, __FILE__, __LINE__);
  lib.def("add_out(Tensor a, Tensor b, Tensor(a!) out) -> ()", &addOut);
  lib.def("bad(Tensor a, Tensor b, int out) -> ()");
  try {
    lib.impl("bad", kCPU, &addOut);
    FAIL() << "expected a schema mismatch";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("boxing_l::bad"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Type mismatch in argument 3 (out): int vs Tensor"), std::string::npos) << msg;
  }
  Tensor a = makeTensor(2), b = makeTensor(1), out = makeTensor(0);
  Dispatcher::singleton()
      .findSchemaOrThrow("boxing_l::add_out", "")
      .typed<void(const Tensor&, const Tensor&, Tensor&)>()
      .call(a, b, out);
  EXPECT_FLOAT_EQ(at(out, 0), 3.0f);
}

// --- the result count of boxed kernels whose results the dispatcher checks -------------------

namespace {
// Boxed kernels for `f(Tensor x) -> Tensor` that leave the wrong number of values.
void leavesNothing(const OperatorHandle&, Stack* stack) { stack->pop_back(); }
void leavesTwo(const OperatorHandle&, Stack* stack) {
  Tensor x = pop(*stack).toTensor();
  push(*stack, empty({1}), empty({1}));
}
void popsTooMuch(const OperatorHandle&, Stack* stack) { stack->clear(); }
void correct(const OperatorHandle&, Stack* stack) { stack->back() = empty({1}); }
} // namespace

TEST(Boxing, CheckedResultsOfABoxedKernelMustMatchTheSchemasReturns) {
  Library lib(Library::DEF, "boxing_m", std::nullopt, __FILE__, __LINE__);
  lib.def("nothing(Tensor x) -> Tensor");
  lib.def("two(Tensor x) -> Tensor");
  lib.def("popper(Tensor x) -> Tensor");
  lib.def("fine(Tensor x) -> Tensor");
  auto& d = Dispatcher::singleton();
  // Kernels with the output alias check on (custom_op's kernels have it): the
  // dispatcher walks their results.
  auto checked = [&](const char* name, KernelFunction k) {
    return d.registerImpl(OperatorName(std::string("boxing_m::") + name, ""), DispatchKey::CPU,
                          std::move(k).checkOutputAliasing(), std::nullopt, nullptr, name);
  };
  auto h1 = checked("nothing", KernelFunction::makeFromBoxedFunction<&leavesNothing>());
  auto h2 = checked("two", KernelFunction::makeFromBoxedFunction<&leavesTwo>());
  auto h3 = checked("popper", KernelFunction::makeFromBoxedFunction<&popsTooMuch>());
  auto h4 = checked("fine", KernelFunction::makeFromBoxedFunction<&correct>());
  Tensor x = makeTensor(1);
  auto expectCount = [&](const char* name, bool caller_value_below, const char* left) {
    SCOPED_TRACE(name);
    Stack s;
    if (caller_value_below) {
      s.emplace_back(int64_t(7));  // a value of the caller's, below the arguments
    }
    s.emplace_back(x);
    try {
      d.findSchemaOrThrow(std::string("boxing_m::") + name, "").callBoxed(&s);
      FAIL() << "expected an error for the result count";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("boxed kernel of boxing_m::") + name + " left " + left +
                         " value(s) on the stack in place of its arguments, but the schema declares 1 return(s)"),
                std::string::npos)
          << msg;
    }
  };
  expectCount("nothing", false, "0");  // the walk would read before the stack's first value
  expectCount("nothing", true, "0");   // ... or take the caller's value for the result
  expectCount("two", false, "2");
  expectCount("popper", true, "-1");
  Stack s{int64_t(7), x};
  d.findSchemaOrThrow("boxing_m::fine", "").callBoxed(&s);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].toInt(), 7);
  EXPECT_FALSE(s[1].toTensor().is_same(x));
}
