#include "server/tiling/lazy_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"

namespace npu::tiling {
namespace {

TEST(LazyTextTest, ReadsLikeStrCat) {
  const uint64_t blocks = 37;
  const int32_t delta = -4;
  const double ratio = 0.912345678;
  const bool flag = true;
  std::string owned = "a string longer than the small-string buffer";
  const LazyText text = LazyText::Of("blocks=", blocks, " delta=", delta, " ratio=", ratio,
                                     " flag=", flag, " ", owned);
  EXPECT_EQ(text.str(), absl::StrCat("blocks=", blocks, " delta=", delta, " ratio=", ratio,
                                     " flag=", flag, " ", owned));
}

TEST(LazyTextTest, OwnsItsStringsAndViews) {
  LazyText text;
  {
    std::string temporary = "formatted after its source is gone";
    std::string_view view = temporary;
    text = LazyText::Of(std::string(view), "; ", view);
    temporary.assign(temporary.size(), 'x');  // the text keeps its own copies
  }
  EXPECT_EQ(text, "formatted after its source is gone; formatted after its source is gone");
}

TEST(LazyTextTest, NestsOtherTexts) {
  LazyText first = LazyText::Of("SK: K=", 100, " < ", 4096);
  LazyText second = LazyText::Of("DP+SK: M=", 17);
  const LazyText both = LazyText::Of(std::move(first), "; ", second);
  EXPECT_EQ(both, "SK: K=100 < 4096; DP+SK: M=17");
  EXPECT_EQ(second, "DP+SK: M=17");  // copied, not moved
}

TEST(LazyTextTest, EmptyWithoutFormatting) {
  EXPECT_TRUE(LazyText().empty());
  EXPECT_TRUE(LazyText("").empty());
  EXPECT_TRUE(LazyText::Of("", std::string()).empty());
  EXPECT_TRUE(LazyText::Of(LazyText(), "").empty());
  EXPECT_FALSE(LazyText::Of("", 0).empty());  // a number always has digits
  EXPECT_FALSE(LazyText("x").empty());
  EXPECT_EQ(LazyText().str(), "");
}

TEST(LazyTextTest, CopiesAndMovesKeepTheText) {
  LazyText original = LazyText::Of("base ", 128, "x", 256);
  LazyText copy = original;
  LazyText moved = std::move(original);
  EXPECT_EQ(copy, "base 128x256");
  EXPECT_EQ(moved, "base 128x256");
  EXPECT_TRUE(original.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  copy = LazyText("literal");
  EXPECT_EQ(copy, "literal");
  copy = moved;
  EXPECT_EQ(copy, moved);
  std::string appended = "reason: ";
  copy.AppendTo(&appended);
  EXPECT_EQ(appended, "reason: base 128x256");
}

}  // namespace
}  // namespace npu::tiling
