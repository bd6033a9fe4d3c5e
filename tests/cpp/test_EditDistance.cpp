// The edit distance behind "did you mean" hints (core/EditDistance.h).
#include <gtest/gtest.h>

#include <opdispatch/core/EditDistance.h>

using opdispatch::editDistance;
using opdispatch::isNearMiss;

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutionsIgnoringCase) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("abc", ""), 3u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("Cpu", "CPU"), 0u);
  EXPECT_EQ(editDistance("foo", "fooo"), 1u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("Autogradd", "Autograd"), 1u);
}

TEST(EditDistance, NearMissesAllowAThirdOfTheNameAndAtLeastOneEdit) {
  EXPECT_TRUE(isNearMiss("ad", "add"));
  EXPECT_TRUE(isNearMiss("foo", "fooo"));
  EXPECT_TRUE(isNearMiss("CPUU", "CPU"));
  EXPECT_FALSE(isNearMiss("Nope", "Meta"));
  EXPECT_FALSE(isNearMiss("relu", "gelu_backward"));
}
