// Type promotion (core/TypePromotion.h) against PyTorch 2.13's torch.promote_types,
// torch.can_cast and torch.result_type, whose answers are written in each expectation.
#include <gtest/gtest.h>

#include <opdispatch/core/TypePromotion.h>

using opdispatch::canCast;
using opdispatch::kAllScalarTypes;
using opdispatch::promoteTypes;
using opdispatch::ResultTypeState;
using opdispatch::ScalarType;

namespace {
ScalarType resultOf(std::initializer_list<std::pair<ScalarType, int64_t>> tensors,
                    std::initializer_list<ScalarType> numbers = {}) {
  ResultTypeState state;
  for (auto [t, dim] : tensors) {
    state.addTensor(t, dim);
  }
  for (ScalarType t : numbers) {
    state.addNumber(t);
  }
  return state.result();
}
} // namespace

TEST(TypePromotion, PromoteTypesIsSymmetricAndIdempotent) {
  for (ScalarType a : kAllScalarTypes) {
    EXPECT_EQ(promoteTypes(a, a), a);
    for (ScalarType b : kAllScalarTypes) {
      EXPECT_EQ(promoteTypes(a, b), promoteTypes(b, a)) << a << " " << b;
    }
  }
  EXPECT_EQ(promoteTypes(ScalarType::Undefined, ScalarType::Float), ScalarType::Undefined);
}

TEST(TypePromotion, PromoteTypesAsPyTorch) {
  EXPECT_EQ(promoteTypes(ScalarType::Char, ScalarType::Byte), ScalarType::Short);
  EXPECT_EQ(promoteTypes(ScalarType::Bool, ScalarType::Byte), ScalarType::Byte);
  EXPECT_EQ(promoteTypes(ScalarType::Long, ScalarType::Half), ScalarType::Half); // NumPy: float64
  EXPECT_EQ(promoteTypes(ScalarType::Int, ScalarType::Float), ScalarType::Float); // NumPy: float64
  EXPECT_EQ(promoteTypes(ScalarType::Double, ScalarType::ComplexFloat), ScalarType::ComplexDouble);
  EXPECT_EQ(promoteTypes(ScalarType::Half, ScalarType::ComplexFloat), ScalarType::ComplexFloat);
}

TEST(TypePromotion, CanCastNeverToALowerCategoryNorToBool) {
  EXPECT_TRUE(canCast(ScalarType::Long, ScalarType::Byte));
  EXPECT_TRUE(canCast(ScalarType::Double, ScalarType::Half));
  EXPECT_TRUE(canCast(ScalarType::Bool, ScalarType::Float));
  EXPECT_FALSE(canCast(ScalarType::Float, ScalarType::Long));
  EXPECT_FALSE(canCast(ScalarType::ComplexFloat, ScalarType::Double));
  EXPECT_FALSE(canCast(ScalarType::Byte, ScalarType::Bool));
  EXPECT_TRUE(canCast(ScalarType::Bool, ScalarType::Bool));
}

TEST(TypePromotion, ResultTypeRanksTensorsWithDimensionsThenZeroDimThenNumbers) {
  // float32 tensor + float64 0-d tensor: float32; both 0-d: float64.
  EXPECT_EQ(resultOf({{ScalarType::Float, 1}, {ScalarType::Double, 0}}), ScalarType::Float);
  EXPECT_EQ(resultOf({{ScalarType::Float, 0}, {ScalarType::Double, 0}}), ScalarType::Double);
  // A lower class of a higher category counts: int32 tensor + float64 0-d tensor gives float64.
  EXPECT_EQ(resultOf({{ScalarType::Int, 2}, {ScalarType::Double, 0}}), ScalarType::Double);
  EXPECT_EQ(resultOf({{ScalarType::Char, 1}, {ScalarType::Long, 0}}), ScalarType::Char);
  // Python numbers: a float is the default float32, an int never widens an integer tensor.
  EXPECT_EQ(resultOf({{ScalarType::Long, 1}}, {ScalarType::Double}), ScalarType::Float);
  EXPECT_EQ(resultOf({{ScalarType::Char, 1}}, {ScalarType::Long}), ScalarType::Char);
  EXPECT_EQ(resultOf({{ScalarType::Bool, 1}}, {ScalarType::Long}), ScalarType::Long);
  EXPECT_EQ(resultOf({{ScalarType::Byte, 0}}, {ScalarType::Long}), ScalarType::Byte);
  EXPECT_EQ(resultOf({{ScalarType::Int, 0}}, {ScalarType::Double}), ScalarType::Float);
  // A complex lower class keeps a floating higher class's precision.
  EXPECT_EQ(resultOf({{ScalarType::Float, 1}, {ScalarType::ComplexDouble, 0}}), ScalarType::ComplexFloat);
  EXPECT_EQ(resultOf({{ScalarType::Long, 1}, {ScalarType::ComplexDouble, 0}}), ScalarType::ComplexDouble);
  EXPECT_EQ(resultOf({{ScalarType::Short, 1}}, {ScalarType::ComplexDouble}), ScalarType::ComplexFloat);
  EXPECT_EQ(resultOf({}), ScalarType::Undefined);
}
