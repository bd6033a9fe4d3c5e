// Size, stride and byte arithmetic is checked everywhere a tensor is made
// (Note [Checked size arithmetic]): the helpers themselves, then every
// constructor and view path with geometries whose arithmetic overflows
// int64, and Scalar conversions that would not fit their type.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include <opdispatch/core/CheckedArithmetic.h>
#include <opdispatch/core/Exception.h>
#include <opdispatch/core/Scalar.h>
#include <opdispatch/core/Tensor.h>

using namespace opdispatch;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2pow62 = int64_t(1) << 62;

/// Runs `f`, expecting exception E whose message contains `needle`.
template <class E, class F>
void expectThrowWith(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one containing: " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(CheckedArithmetic, MulAndAddReportOverflow) {
  int64_t out = 0;
  EXPECT_FALSE(mulOverflows(int64_t(3), int64_t(4), &out));
  EXPECT_EQ(out, 12);
  EXPECT_TRUE(mulOverflows(k2pow62, int64_t(2), &out));
  EXPECT_TRUE(mulOverflows(kMin, int64_t(-1), &out));
  EXPECT_FALSE(mulOverflows(int64_t(-1), kMax, &out));
  EXPECT_EQ(out, -kMax);
  EXPECT_TRUE(addOverflows(kMax, int64_t(1), &out));
  EXPECT_FALSE(addOverflows(kMax, int64_t(0), &out));
  size_t u = 0;
  EXPECT_TRUE(addOverflows(std::numeric_limits<size_t>::max(), size_t(1), &u));
  EXPECT_TRUE(mulOverflows(std::numeric_limits<size_t>::max() / 2 + 1, size_t(2), &u));
}

TEST(CheckedArithmetic, NonzeroProductCountsZerosAsOne) {
  int64_t out = 0;
  EXPECT_FALSE(nonzeroProductOverflows({2, 3, 4}, &out));
  EXPECT_EQ(out, 24);
  EXPECT_FALSE(nonzeroProductOverflows({}, &out));
  EXPECT_EQ(out, 1);
  EXPECT_FALSE(nonzeroProductOverflows({0, 5}, &out));
  EXPECT_EQ(out, 5);
  // The zero does not hide the overflow of the others (PyTorch refuses too).
  EXPECT_TRUE(nonzeroProductOverflows({0, k2pow62, k2pow62}, &out));
  EXPECT_TRUE(nonzeroProductOverflows({k2pow62, 0, 4}, &out));
}

TEST(CheckedArithmetic, StorageNbytes) {
  int64_t out = 0;
  EXPECT_FALSE(storageNbytesOverflows({2, 3}, {3, 1}, 0, 4, &out));
  EXPECT_EQ(out, 24);
  EXPECT_FALSE(storageNbytesOverflows({2, 3}, {3, 1}, 5, 4, &out));
  EXPECT_EQ(out, 44);
  EXPECT_FALSE(storageNbytesOverflows({k2pow62}, {2}, 0, 1, &out));  // (2**62 - 1) * 2 + 1 = 2**63 - 1
  EXPECT_EQ(out, kMax);
  EXPECT_TRUE(storageNbytesOverflows({k2pow62 + 1}, {2}, 0, 1, &out));  // span
  EXPECT_TRUE(storageNbytesOverflows({2}, {1}, kMax - 1, 1, &out)); // offset + span + 1
  EXPECT_TRUE(storageNbytesOverflows({k2pow62}, {1}, 0, 4, &out));  // times itemsize
  EXPECT_TRUE(storageNbytesOverflows({3, 3}, {k2pow62, k2pow62}, 0, 1, &out)); // the sum of spans
}

TEST(CheckedArithmetic, ContiguousStridesRefuseOverflow) {
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(contiguousStrides({0, 3}), (std::vector<int64_t>{3, 1}));
  expectThrowWith<Error>([] { contiguousStrides({4, k2pow62, 2}); }, "contiguous strides of sizes [4, ");
}

// --- every constructor and view path -----------------------------------------------

TEST(CheckedArithmetic, EmptyRefusesSizesWhoseBytesOverflow) {
  for (Device device : {Device("cpu"), Device("meta")}) {
    // numel fits, bytes do not: 2**62 + 4 float32 elements (the case of the issue).
    expectThrowWith<Error>([&] { empty({k2pow62 + 4}, ScalarType::Float, device); },
                           "byte extent of a tensor with sizes [4611686018427387908]");
    // numel itself overflows.
    expectThrowWith<Error>([&] { empty({int64_t(1) << 32, int64_t(1) << 32}, ScalarType::Byte, device); },
                           "contiguous strides");
    expectThrowWith<Error>([&] { empty({0, k2pow62, k2pow62}, ScalarType::Byte, device); }, "contiguous strides");
    expectThrowWith<Error>([&] { empty_strided({0, k2pow62, k2pow62}, {1, 1, 1}, ScalarType::Byte, device); },
                           "number of elements");
    // The largest byte count that fits is accepted on meta (no memory).
    if (device.is_meta()) {
      Tensor t = empty({kMax}, ScalarType::Byte, device);
      EXPECT_EQ(t.numel(), kMax);
      EXPECT_EQ(t.strides()[0], 1);
    }
  }
}

TEST(CheckedArithmetic, HugeButValidAllocationThrowsBadAlloc) {
  // 2**62 bytes fit int64 but no machine has them: bad_alloc (MemoryError in Python), no crash.
  EXPECT_THROW(empty({k2pow62}, ScalarType::Byte), std::bad_alloc);
  EXPECT_THROW(StorageImpl::allocate(std::numeric_limits<size_t>::max() - 8), std::bad_alloc);
}

TEST(CheckedArithmetic, EmptyStridedChecksRankAndSigns) {
  expectThrowWith<ValueError>([] { empty_strided({2, 3}, {1}, ScalarType::Float); }, "one stride per dimension");
  expectThrowWith<ValueError>([] { empty_strided({2}, {-1}, ScalarType::Float); }, "negative strides");
  expectThrowWith<ValueError>([] { empty_strided({-2}, {1}, ScalarType::Float); }, "sizes must be >= 0");
  expectThrowWith<Error>([] { empty_strided({3, 3}, {k2pow62, k2pow62}, ScalarType::Byte, Device("meta")); },
                         "byte extent");
  Tensor t = empty_strided({2, 3}, {1, 2}, ScalarType::Float);
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.unsafeGetTensorImpl()->storage()->nbytes(), 24u);
}

TEST(CheckedArithmetic, AsStridedBoundsDoNotWrap) {
  Tensor base = empty({2}, ScalarType::Float);
  // A view whose byte extent wraps to a small number must not pass the bounds check.
  expectThrowWith<Error>([&] { base.as_strided({k2pow62}, {k2pow62}, 0); }, "byte extent");
  expectThrowWith<Error>([&] { base.as_strided({2}, {1}, kMax / 2); }, "byte offset");
  expectThrowWith<Error>([&] { base.as_strided({3, 3}, {k2pow62, k2pow62}, 0); }, "byte extent");
  expectThrowWith<IndexError>([&] { base.as_strided({3}, {1}, 0); }, "reaches byte 12 of its storage, which has 8");
  expectThrowWith<IndexError>([&] { base.as_strided({1}, {1}, 2); }, "reaches byte 12");
  // Views without elements reach no bytes (PyTorch allows any offset and stride then).
  Tensor none = base.as_strided({0, 3}, {1, k2pow62}, 100);
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(base.as_strided({2}, {1}, 0).numel(), 2);
  Tensor meta = empty({4}, ScalarType::Float, Device("meta"));
  expectThrowWith<Error>([&] { meta.as_strided({k2pow62}, {4}, 0); }, "byte extent");
}

TEST(CheckedArithmetic, FromBlobRefusesAndReleasesTheMemory) {
  static int released = 0;
  released = 0;
  static float data[4];
  auto deleter = [](void*, void*) { ++released; };
  expectThrowWith<Error>([&] { from_blob(data, {k2pow62, 4}, {4, 1}, ScalarType::Float, deleter); },
                         "number of elements of a tensor with sizes [4611686018427387904, 4]");
  EXPECT_EQ(released, 1);
  {
    Tensor t = from_blob(data, {2, 2}, {2, 1}, ScalarType::Float, deleter);
    EXPECT_EQ(t.unsafeGetTensorImpl()->storage()->nbytes(), 16u);
  }
  EXPECT_EQ(released, 2);
}

TEST(CheckedArithmetic, ScalarConversionsAreChecked) {
  EXPECT_EQ(Scalar(3.9).toLong(), 3);
  EXPECT_EQ(Scalar(-9223372036854775808.0).toLong(), kMin);
  EXPECT_THROW(Scalar(9223372036854775808.0).toLong(), OverflowError);
  EXPECT_THROW(Scalar(std::numeric_limits<double>::quiet_NaN()).toLong(), OverflowError);
  EXPECT_THROW(Scalar(std::numeric_limits<double>::infinity()).to<int32_t>(), OverflowError);
  EXPECT_EQ(Scalar(int64_t(127)).to<int8_t>(), 127);
  EXPECT_THROW(Scalar(int64_t(128)).to<int8_t>(), OverflowError);
  EXPECT_THROW(Scalar(int64_t(-1)).to<uint8_t>(), OverflowError);
  EXPECT_THROW(Scalar(int64_t(1) << 40).to<int32_t>(), OverflowError);
  EXPECT_EQ(Scalar(int64_t(255)).to<uint8_t>(), 255);
  EXPECT_THROW(Scalar(1e300).to<float>(), OverflowError);
  EXPECT_EQ(Scalar(std::numeric_limits<double>::infinity()).to<float>(), std::numeric_limits<float>::infinity());
  EXPECT_FLOAT_EQ(Scalar(1.5).to<float>(), 1.5f);
}

} // namespace
