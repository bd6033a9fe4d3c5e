// The ATen-style part of the C++ Tensor API kernels use (issue 30): dtype
// constants, TensorOptions, metadata methods, the CHECK_EQ family and
// TensorUtils' argument checks with ATen's messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {
/// The message of the Error `fn` throws ("" if it throws none).
template <class Fn>
std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST(TensorApi, ScalarTypeConstantsAreAtensNames) {
  EXPECT_EQ(kFloat, ScalarType::Float);
  EXPECT_EQ(kLong, ScalarType::Long);
  EXPECT_EQ(kBool, ScalarType::Bool);
  EXPECT_EQ(kComplexFloat, ScalarType::ComplexFloat);
  EXPECT_EQ(static_cast<int>(kHalf), 5);  // PyTorch's numbering
}

TEST(TensorApi, TensorOptionsChainAndDefault) {
  TensorOptions defaults;
  EXPECT_EQ(defaults.dtype(), kFloat);
  EXPECT_EQ(defaults.device(), Device(kCPU));
  EXPECT_EQ(defaults.layout(), kStrided);
  EXPECT_FALSE(defaults.requires_grad());
  EXPECT_FALSE(defaults.has_dtype());
  TensorOptions chained = dtype(kDouble).device(kMeta).requires_grad(true);
  EXPECT_EQ(chained.dtype(), kDouble);
  EXPECT_TRUE(chained.device().is_meta());
  EXPECT_TRUE(chained.requires_grad());
  EXPECT_EQ(TensorOptions(kLong).dtype(), kLong);
}

TEST(TensorApi, MetadataMethods) {
  Tensor t = empty({2, 3, 4}, kDouble);
  EXPECT_EQ(t.ndimension(), 3);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(-3), 12);
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(t.is_cpu());
  EXPECT_EQ(t.layout(), kStrided);
  TensorOptions options = t.options();
  EXPECT_EQ(options.dtype(), kDouble);
  EXPECT_TRUE(options.device().is_cpu());
  EXPECT_FALSE(options.requires_grad());
  double* data = t.mutable_data_ptr<double>();
  data[0] = 1.5;
  EXPECT_EQ(t.const_data_ptr<double>()[0], 1.5);
  EXPECT_EQ(t.const_data_ptr(), t.data_ptr());
  EXPECT_THROW(t.const_data_ptr<float>(), TypeError);  // 4-byte elements of an 8-byte dtype
  EXPECT_FALSE(empty({1}, kFloat, Device(kMeta)).is_cpu());
}

TEST(TensorApi, CheckOpMacrosGiveAtensMessage) {
  int a = 1, b = 2;
  EXPECT_EQ(errorOf([&] { OPDISPATCH_CHECK_EQ(a, b); }), "Check failed: a == b (1 vs. 2). ");
  EXPECT_EQ(errorOf([&] { OPDISPATCH_CHECK_GT(a, b, "in my kernel"); }), "Check failed: a > b (1 vs. 2). in my kernel");
  EXPECT_EQ(errorOf([&] { OPDISPATCH_CHECK_LE(a, b); }), "");
  EXPECT_EQ(errorOf([&] { OPDISPATCH_CHECK_NE(a, b); }), "");
  EXPECT_NE(errorOf([&] { OPDISPATCH_CHECK_LT(b, a); }), "");
  EXPECT_NE(errorOf([&] { OPDISPATCH_CHECK_GE(a, b); }), "");
}

TEST(TensorUtils, MessagesAreAtens) {
  Tensor input = empty({2, 3}, kFloat);
  Tensor weight = empty({4}, kDouble);
  TensorArg input_arg{input, "input", 1}, weight_arg{weight, "weight", 2}, self_arg{input, "self", 0};
  EXPECT_EQ(errorOf([&] { checkDim("conv2d", input_arg, 4); }),
            "Expected 4-dimensional tensor, but got 2-dimensional tensor for argument #1 'input' (while checking "
            "arguments for conv2d)");
  EXPECT_EQ(errorOf([&] { checkDim("op", self_arg, 3); }),
            "Expected 3-dimensional tensor, but got 2-dimensional tensor for 'self' (while checking arguments for op)");
  EXPECT_EQ(errorOf([&] { checkSize("op", input_arg, {2, 4}); }),
            "Expected tensor of size [2, 4], but got tensor of size [2, 3] for argument #1 'input' (while checking "
            "arguments for op)");
  EXPECT_EQ(errorOf([&] { checkSize("op", input_arg, 1, 5); }),
            "Expected tensor to have size 5 at dimension 1, but got size 3 for argument #1 'input' (while checking "
            "arguments for op)");
  EXPECT_EQ(errorOf([&] { checkAllSameType("op", {input_arg, weight_arg}); }),
            "Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 'weight'; but "
            "type CPUFloatType does not equal CPUDoubleType (while checking arguments for op)");
  EXPECT_EQ(errorOf([&] { checkScalarType("op", weight_arg, kFloat); }),
            "Expected tensor for argument #2 'weight' to have scalar type Float; but got CPUDoubleType instead (while "
            "checking arguments for op)");
  Tensor transposed = input.as_strided({3, 2}, {1, 3}, 0);
  TensorArg transposed_arg{transposed, "other", 3};
  EXPECT_EQ(errorOf([&] { checkContiguous("op", transposed_arg); }),
            "Expected contiguous tensor, but got non-contiguous tensor for argument #3 'other' (while checking "
            "arguments for op)");
  Tensor meta = empty({1}, kFloat, Device(kMeta));
  EXPECT_EQ(errorOf([&] { checkDeviceType("op", {input, meta}, kCPU); }),
            "Expected tensor to have CPU DeviceType, but got tensor with Meta DeviceType (while checking arguments "
            "for op)");
  EXPECT_EQ(errorOf([&] { checkDim("op", input_arg, 2); }), "");
  EXPECT_EQ(errorOf([&] { checkAllSameType("op", {input_arg, self_arg}); }), "");
  Tensor undefined;
  EXPECT_EQ(errorOf([&] { checkAllSameType("op", {input_arg, TensorArg(undefined, "bias", 3)}); }), "");
}

TEST(TensorApi, ComputingMethodsNeedTheBuiltinOperatorsAndSaySo) {
  // The C++ tests run without Python, where no `od` operator is registered.
  Tensor t = empty({2, 2}, kFloat);
  EXPECT_NE(errorOf([&] { zeros({2}, dtype(kFloat)); }).find("od::zeros is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.contiguous(); }).find("import opdispatch"), std::string::npos);
  EXPECT_NE(errorOf([&] { (void)(t + t); }).find("od::add.Tensor is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { t *= 2.0; }).find("od::mul_.Scalar is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.max(0); }).find("od::max.dim is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.div(t, "floor"); }).find("od::div.Tensor_mode is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { cat({t, t}); }).find("od::cat is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { randperm(3); }).find("od::randperm is not registered"), std::string::npos);
}

TEST(TensorApi, InferenceModeTurnsGradModeOffForItsScope) {
  ASSERT_TRUE(GradMode::is_enabled());
  {
    InferenceMode guard;
    EXPECT_FALSE(GradMode::is_enabled());
    EXPECT_TRUE(InferenceMode::is_enabled());
    {
      InferenceMode off(false);
      EXPECT_TRUE(GradMode::is_enabled());
      EXPECT_FALSE(InferenceMode::is_enabled());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
  EXPECT_FALSE(InferenceMode::is_enabled());
}

TEST(TensorApi, ForceDispatchKeyGuardSetsBothSetsAndRestoresThem) {
  IncludeDispatchKeyGuard outer(DispatchKey::Python);
  LocalDispatchKeySet before = tls_local_dispatch_key_set();
  {
    ForceDispatchKeyGuard guard(DispatchKeySet(DispatchKey::PrivateUse1), DispatchKeySet(DispatchKey::AutogradCPU));
    LocalDispatchKeySet inside = tls_local_dispatch_key_set();
    EXPECT_EQ(inside.included_, DispatchKeySet(DispatchKey::PrivateUse1));
    EXPECT_EQ(inside.excluded_, DispatchKeySet(DispatchKey::AutogradCPU));
  }
  LocalDispatchKeySet after = tls_local_dispatch_key_set();
  EXPECT_EQ(after.included_, before.included_);
  EXPECT_EQ(after.excluded_, before.excluded_);
}

TEST(TensorApi, AccessorAndItem) {
  Tensor t = empty({2, 3}, kFloat);
  auto a = t.accessor<float, 2>();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      a[i][j] = static_cast<float>(10 * i + j);
    }
  }
  EXPECT_EQ(t.const_data_ptr<float>()[4], 11.0f);
  Tensor column = t.as_strided({2}, {3}, 1);  // a[:, 1]
  auto c = column.accessor<float, 1>();
  EXPECT_EQ(c[1], 11.0f);
  EXPECT_EQ(c.size(0), 2);
  EXPECT_NE(errorOf([&] { t.accessor<float, 1>(); }).find("TensorAccessor expected 1 dims but tensor has 2"),
            std::string::npos);
  EXPECT_THROW((t.accessor<double, 2>()), TypeError);

  Tensor one = t.as_strided({}, {}, 5);
  EXPECT_EQ(one.item<float>(), 12.0f);
  EXPECT_EQ(one.item<int64_t>(), 12);
  EXPECT_TRUE(one.item<bool>());
  EXPECT_EQ(one.item().toDouble(), 12.0);
  Tensor half = empty({1}, kHalf);
  *half.mutable_data_ptr<uint16_t>() = 0x3e00;  // 1.5 in binary16
  EXPECT_EQ(half.item<double>(), 1.5);
  EXPECT_NE(errorOf([&] { t.item<float>(); }).find("a Tensor with 6 elements cannot be converted to Scalar"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { empty({1}, kFloat, Device(kMeta)).item<float>(); }).find("meta"), std::string::npos);
  optional<int64_t> none = nullopt;  // ATen's c10::optional / c10::nullopt names
  EXPECT_FALSE(none.has_value());
}

TEST(TensorApi, DispatchMacrosRunTheLambdaWithScalarT) {
  auto bytes = [](ScalarType t) {
    return OPDISPATCH_DISPATCH_ALL_TYPES(t, "bytes", [&] { return static_cast<int>(sizeof(scalar_t)); });
  };
  EXPECT_EQ(bytes(kDouble), 8);
  EXPECT_EQ(bytes(kFloat), 4);
  EXPECT_EQ(bytes(kShort), 2);
  EXPECT_EQ(bytes(kByte), 1);
  bool is_signed = false;
  OPDISPATCH_DISPATCH_INTEGRAL_TYPES(kChar, "signedness", [&] { is_signed = std::is_signed_v<scalar_t>; });
  EXPECT_TRUE(is_signed);
  // PyTorch: AT_DISPATCH_FLOATING_TYPES(kInt, "my_kernel", ...) -> NotImplementedError
  // "\"my_kernel\" not implemented for 'Int'".
  EXPECT_EQ(errorOf([] { OPDISPATCH_DISPATCH_FLOATING_TYPES(kInt, "my_kernel", [&] {}); }),
            "\"my_kernel\" not implemented for 'Int'");
  EXPECT_THROW(OPDISPATCH_DISPATCH_INTEGRAL_TYPES(kBool, "k", [&] {}), NotImplementedError);
}

TEST(TensorApi, DispatchAndFormsAddTheListedTypes) {
  auto bytes = [](ScalarType t) {
    return OPDISPATCH_DISPATCH_ALL_TYPES_AND2(kHalf, ScalarType::Bool, t, "bytes",
                                              [&] { return static_cast<int>(sizeof(scalar_t)); });
  };
  EXPECT_EQ(bytes(kHalf), 2);
  EXPECT_EQ(bytes(kBool), 1);
  EXPECT_EQ(bytes(kLong), 8);
  EXPECT_THROW(bytes(kComplexFloat), NotImplementedError);
  bool half = false;
  OPDISPATCH_DISPATCH_FLOATING_TYPES_AND_HALF(kHalf, "f", [&] { half = std::is_same_v<scalar_t, Half>; });
  EXPECT_TRUE(half);
  EXPECT_EQ(errorOf([] { OPDISPATCH_DISPATCH_FLOATING_TYPES_AND_HALF(kInt, "my_kernel", [&] {}); }),
            "\"my_kernel\" not implemented for 'Int'");
  int seen = 0;
  OPDISPATCH_DISPATCH_FLOATING_TYPES_AND3(kHalf, kBool, kByte, kByte, "f", [&] { seen = sizeof(scalar_t); });
  EXPECT_EQ(seen, 1);
  OPDISPATCH_DISPATCH_INTEGRAL_TYPES_AND(kBool, kBool, "f", [&] { seen = std::is_same_v<scalar_t, bool> ? 7 : 0; });
  EXPECT_EQ(seen, 7);
  // The case-list style: OPDISPATCH_DISPATCH_SWITCH with OPDISPATCH_DISPATCH_CASE (PyTorch: AT_DISPATCH_CASE).
  auto is_double = [](ScalarType t) {
    return OPDISPATCH_DISPATCH_SWITCH(t, "is_double", OPDISPATCH_DISPATCH_CASE(ScalarType::Double, [&] {
                                        return std::is_same_v<scalar_t, double>;
                                      }) OPDISPATCH_DISPATCH_CASE(kShort, [&] { return false; }));
  };
  EXPECT_TRUE(is_double(kDouble));
  EXPECT_FALSE(is_double(kShort));
  EXPECT_THROW(is_double(kFloat), NotImplementedError);
}

TEST(TensorApi, HalfRoundsToNearestEvenAndReadsExactly) {
  // The bits numpy.float16 gives for the same floats.
  EXPECT_EQ(Half(1.0f).x, 0x3c00);
  EXPECT_EQ(Half(-2.0f).x, 0xc000);
  EXPECT_EQ(Half(65504.0f).x, 0x7bff);
  EXPECT_EQ(Half(65520.0f).x, 0x7c00);  // halfway to the next: rounds to even, which is inf
  EXPECT_EQ(Half(65519.0f).x, 0x7bff);
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).x, 0x3c00);  // a tie: to the even mantissa
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).x, 0x3c02);
  EXPECT_EQ(Half(5.960464477539063e-08f).x, 0x0001);  // 2^-24, the smallest subnormal
  EXPECT_EQ(Half(2.98023223876953125e-08f).x, 0x0000);  // 2^-25: a tie, to zero
  EXPECT_EQ(Half(1e-7f).x, 0x0002);
  EXPECT_EQ(Half(6.097555160522461e-05f).x, 0x03ff);  // the largest subnormal
  EXPECT_EQ(Half(std::numeric_limits<float>::infinity()).x, 0x7c00);
  EXPECT_EQ(Half(std::numeric_limits<float>::quiet_NaN()).x & 0x7e00, 0x7e00);
  EXPECT_EQ(static_cast<float>(Half(0x0001, Half::from_bits())), 5.960464477539063e-08f);
  EXPECT_EQ(static_cast<float>(Half(0xfbff, Half::from_bits())), -65504.0f);
  EXPECT_EQ(static_cast<float>(Half(0x3555, Half::from_bits())), 0.333251953125f);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(0x7e00, Half::from_bits()))));
  Half h = 1.5f;
  h += Half(2.0f);
  h *= Half(2.0f);
  EXPECT_EQ(static_cast<float>(h), 7.0f);
}

TEST(TensorApi, ParallelForRunsTheRangeAsOneChunkInARegion) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  EXPECT_FALSE(in_parallel_region());
  parallel_for(3, 10, 2, [&](int64_t begin, int64_t end) {
    EXPECT_TRUE(in_parallel_region());
    EXPECT_EQ(get_thread_num(), 0);
    chunks.emplace_back(begin, end);
  });
  EXPECT_FALSE(in_parallel_region());
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0], std::make_pair(int64_t{3}, int64_t{10}));
  parallel_for(5, 5, 1, [&](int64_t, int64_t) { chunks.clear(); });  // empty range: f is not called
  EXPECT_EQ(chunks.size(), 1u);
  EXPECT_EQ(get_num_threads(), 1);
  int64_t sum = parallel_reduce(
      0, 5, 1, int64_t{100},
      [](int64_t begin, int64_t end, int64_t ident) {
        for (int64_t i = begin; i < end; ++i) {
          ident += i;
        }
        return ident;
      },
      [](int64_t a, int64_t b) { return a + b; });
  EXPECT_EQ(sum, 110);
  EXPECT_NE(errorOf([] { parallel_for(0, 1, -1, [](int64_t, int64_t) {}); }).find("grain_size"), std::string::npos);
}

TEST(TensorApi, FromBlobWithOptionsWrapsTheCallersMemory) {
  std::vector<double> values{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  Tensor t = from_blob(values.data(), {2, 3}, dtype(kDouble).requires_grad(true));
  EXPECT_EQ(t.data_ptr(), values.data());
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.scalar_type(), kDouble);
  EXPECT_TRUE(t.requires_grad());
  EXPECT_EQ((t.accessor<double, 2>()[1][2]), 6.0);
  float f = 0.5f;
  EXPECT_EQ(from_blob(&f, {}).scalar_type(), kFloat);  // float32 unless set
  EXPECT_NE(errorOf([&] { from_blob(&f, {1}, device(kMeta)); }).find("from_blob(): opdispatch wraps host memory only"),
            std::string::npos);
}

TEST(TensorApi, FpsMethodsNeedTheBuiltinOperators) {
  Tensor t = empty({2, 2}, kFloat);
  EXPECT_NE(errorOf([&] { (void)t[0]; }).find("od::select.int is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.pow_(2); }).find("od::pow_.Scalar is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { (void)t.ceil(); }).find("od::ceil is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { (void)min(t, t); }).find("od::min.other is not registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { (void)rand({2}); }).find("od::rand is not registered"), std::string::npos);
  EXPECT_EQ(internal::GRAIN_SIZE, 32768);  // ATen's
}

TEST(TensorApi, BFloat16IsANameWithoutTensors) {
  EXPECT_EQ(static_cast<int>(kBFloat16), 15);  // PyTorch's number
  EXPECT_STREQ(toString(kBFloat16), "BFloat16");
  EXPECT_FALSE(isValidScalarType(15));
  EXPECT_NE(errorOf([] { empty({2}, kBFloat16); }).find("opdispatch has no bfloat16 tensors"), std::string::npos);
  // Its C++ type rounds as c10::BFloat16: bits and values from PyTorch 2.13's float32 -> bfloat16.
  const float in[] = {1.0f,        3.14159f,   -2.5f, 1e-40f, 65504.0f, 3.0e38f, std::numeric_limits<float>::infinity(),
                      1.00390625f, 1.01171875f};
  const uint16_t bits[] = {16256, 16457, 49184, 1, 18304, 32610, 32640, 16256, 16258};
  for (size_t i = 0; i < std::size(in); ++i) {
    EXPECT_EQ(BFloat16(in[i]).x, bits[i]) << in[i];
  }
  EXPECT_EQ(float(BFloat16(3.14159f)), 3.140625f);
  EXPECT_TRUE(std::isnan(float(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  // The _AND forms take it (graclus' AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16, ...)); its scalar_t is BFloat16.
  bool is_bfloat16 = OPDISPATCH_DISPATCH_FLOATING_TYPES_AND(kBFloat16, kBFloat16, "f",
                                                            [&] { return std::is_same_v<scalar_t, BFloat16>; });
  EXPECT_TRUE(is_bfloat16);
}
