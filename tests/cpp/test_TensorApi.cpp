// The ATen-style part of the C++ Tensor API kernels use (issue 30): dtype
// constants, TensorOptions, metadata methods, the CHECK_EQ family and
// TensorUtils' argument checks with ATen's messages.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

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
