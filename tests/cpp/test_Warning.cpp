// OPDISPATCH_WARN / OPDISPATCH_WARN_ONCE and the warning handlers (PyTorch:
// TORCH_WARN, TORCH_WARN_ONCE, c10::WarningUtils).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {
/// Records the warnings it receives, as a test's handler.
struct Recorder : WarningHandler {
  void process(const Warning& warning) override { seen.push_back(warning); }
  std::vector<Warning> seen;
};

void warnOnce(int i) { OPDISPATCH_WARN_ONCE("once from call ", i); }
} // namespace

TEST(Warning, WarnConcatenatesItsArgumentsAndNamesItsSource) {
  Recorder recorder;
  WarningUtils::WarningHandlerGuard guard(&recorder);
  const int line = __LINE__ + 1;
  OPDISPATCH_WARN("x has ", 3, " dims and ", 2.5, " scale");
  ASSERT_EQ(recorder.seen.size(), 1u);
  const Warning& w = recorder.seen[0];
  EXPECT_EQ(w.msg(), "x has 3 dims and 2.5 scale");
  EXPECT_TRUE(std::holds_alternative<UserWarning>(w.type()));
  EXPECT_FALSE(w.verbatim());
  EXPECT_EQ(w.source_location().line, static_cast<uint32_t>(line));
  EXPECT_NE(std::string(w.source_location().file).find("test_Warning.cpp"), std::string::npos);
  EXPECT_STREQ(w.source_location().function, "TestBody");
  OPDISPATCH_WARN_DEPRECATION("old");
  ASSERT_EQ(recorder.seen.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<DeprecationWarning>(recorder.seen[1].type()));
}

TEST(Warning, GuardRestoresThePreviousHandler) {
  WarningHandler* base = WarningUtils::get_warning_handler();
  Recorder outer, inner;
  {
    WarningUtils::WarningHandlerGuard g1(&outer);
    {
      WarningUtils::WarningHandlerGuard g2(&inner);
      EXPECT_EQ(WarningUtils::get_warning_handler(), &inner);
      OPDISPATCH_WARN("inner");
    }
    EXPECT_EQ(WarningUtils::get_warning_handler(), &outer);
    OPDISPATCH_WARN("outer");
  }
  EXPECT_EQ(WarningUtils::get_warning_handler(), base);
  ASSERT_EQ(inner.seen.size(), 1u);
  ASSERT_EQ(outer.seen.size(), 1u);
  EXPECT_EQ(outer.seen[0].msg(), "outer");
}

TEST(Warning, HandlersArePerThread) {
  Recorder recorder;
  WarningUtils::WarningHandlerGuard guard(&recorder);
  WarningHandler* other = nullptr;
  std::thread([&] { other = WarningUtils::get_warning_handler(); }).join();
  EXPECT_NE(other, &recorder);
}

TEST(Warning, BaseHandlerPrintsToStderr) {
  testing::internal::CaptureStderr();
  OPDISPATCH_WARN("printed ", 7);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("test_Warning.cpp:"), std::string::npos) << err;
  EXPECT_NE(err.find("] Warning: printed 7 (function TestBody)"), std::string::npos) << err;
}

TEST(Warning, WarnOnceWarnsOncePerCallSiteUnlessWarnAlways) {
  Recorder recorder;
  WarningUtils::WarningHandlerGuard guard(&recorder);
  for (int i = 0; i < 3; ++i) {
    warnOnce(i);
  }
  ASSERT_EQ(recorder.seen.size(), 1u);
  EXPECT_EQ(recorder.seen[0].msg(), "once from call 0");
  {
    WarningUtils::WarnAlways always;
    EXPECT_TRUE(WarningUtils::get_warnAlways());
    warnOnce(5);
    warnOnce(6);
  }
  EXPECT_FALSE(WarningUtils::get_warnAlways());
  warnOnce(7);
  ASSERT_EQ(recorder.seen.size(), 3u);
  EXPECT_EQ(recorder.seen[2].msg(), "once from call 6");
}
