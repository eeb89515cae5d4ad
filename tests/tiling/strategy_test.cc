#include "server/tiling/strategy.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace npu::tiling {
namespace {

ProblemFacts Facts(bool explain, bool describe) {
  ProblemFacts facts;
  facts.explain = explain;
  facts.describe = describe;
  return facts;
}

// Describe() formats its pieces itself; the text must be what absl::StrCat
// writes for them, at every integer width and at the edges.
TEST(DescribeTest, MatchesStrCatForTextAndIntegers) {
  const ProblemFacts facts = Facts(false, true);
  const std::string name = "A full load";
  EXPECT_EQ(
      Describe(facts, "DP+SK: ", uint64_t{2}, " rounds, ", name, " (", std::string_view("x"), ")"),
      absl::StrCat("DP+SK: ", uint64_t{2}, " rounds, ", name, " (x)"));
  EXPECT_EQ(
      Describe(facts, std::numeric_limits<uint64_t>::max(), " ",
               std::numeric_limits<int64_t>::min(), " ", std::numeric_limits<int32_t>::min(), " ",
               std::numeric_limits<uint32_t>::max(), " ", int64_t{0}, " ", -1),
      absl::StrCat(std::numeric_limits<uint64_t>::max(), " ", std::numeric_limits<int64_t>::min(),
                   " ", std::numeric_limits<int32_t>::min(), " ",
                   std::numeric_limits<uint32_t>::max(), " ", int64_t{0}, " ", -1));
  // Longer than the reserved room.
  const std::string long_text(300, 'k');
  EXPECT_EQ(Describe(facts, long_text, 7, long_text), absl::StrCat(long_text, 7, long_text));
  EXPECT_EQ(Describe(facts), "");
}

TEST(DescribeTest, EmptyWhenNotAsked) {
  EXPECT_EQ(Describe(Facts(true, false), "SK: ", 16, " blocks"), "");
  EXPECT_EQ(Explain(Facts(false, true), "K=", 0), "");
  EXPECT_EQ(Explain(Facts(true, false), "K=", 0), "K=0");
}

}  // namespace
}  // namespace npu::tiling
