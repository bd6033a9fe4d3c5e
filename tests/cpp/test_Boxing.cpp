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
std::tuple<Tensor, int64_t, double, bool, std::string, std::vector<Tensor>, std::vector<int64_t>>
everything(const Tensor& a, int64_t b, double c, bool d, const std::string& e, std::optional<int64_t> f,
           IntArrayRef g, const std::vector<Tensor>& h, const std::optional<Tensor>& i, ArrayRef<double> j,
           const std::vector<bool>& k, const Scalar& s, ScalarType t, const std::vector<std::optional<Tensor>>& u,
           std::string_view v, std::optional<std::vector<int64_t>> w, Device x) {
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
  auto [ra, rb, rc, rd, re, rf, rg] =
      op.call(a, 1, 2.5, true, "ab", 10, g, {h0}, i, j, {true, false}, Scalar(0.5), ScalarType::Double,
              {std::nullopt, h0}, "cd", std::vector<int64_t>{7}, Device(DeviceType::Meta));
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
  lib.impl("s", dispatch(DispatchKey::CPU, [](const Tensor& x) { return std::string("n=") + std::to_string(x.numel()); }));
  lib.impl("l", dispatch(DispatchKey::CPU, [](const Tensor& x) { return std::vector<Tensor>{x, x}; }));
  lib.impl("n", dispatch(DispatchKey::CPU, [&side_effect](const Tensor& x) { side_effect += x.numel(); }));
  lib.impl("o", dispatch(DispatchKey::CPU, [](const Tensor& x, bool give) {
             return give ? std::optional<Tensor>(x) : std::nullopt;
           }));
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

TEST(Boxing, WrongArgumentTypeOnStackIsATypeError) {
  Library lib(Library::DEF, "boxing_e", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x, int n) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&, int64_t n) { return n; }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("boxing_e::f", "");
  Stack s{makeTensor(1), std::string("not an int")};
  EXPECT_THROW(op.callBoxed(&s), TypeError);
}

TEST(Boxing, KeysetFirstKernelsReceiveTheKeySet) {
  Library lib(Library::DEF, "boxing_f", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, [](DispatchKeySet ks, const Tensor&) {
             return static_cast<int64_t>(ks.raw_repr());
           }));
  auto op = Dispatcher::singleton().findSchemaOrThrow("boxing_f::f", "").typed<int64_t(const Tensor&)>();
  EXPECT_EQ(op.call(makeTensor(1)), static_cast<int64_t>(DispatchKeySet(DispatchKey::CPU).raw_repr()));
}
