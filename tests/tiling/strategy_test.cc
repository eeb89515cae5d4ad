#include "server/tiling/strategy.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace npu::tiling {
namespace {

ProblemFacts Facts(bool explain, bool describe) {
  ProblemFacts facts;
  facts.explain = explain;
  facts.describe = describe;
  return facts;
}

// Describe() writes the pieces' text in order, integers in decimal at every
// width and at the edges of their range: the plan details pinned by the
// strategy tests and the golden cases depend on it.
TEST(DescribeTest, JoinsTextAndIntegers) {
  const ProblemFacts facts = Facts(false, true);
  const std::string name = "A full load";
  EXPECT_EQ(
      Describe(facts, "DP+SK: ", uint64_t{2}, " rounds, ", name, " (", absl::string_view("x"), ")"),
      "DP+SK: 2 rounds, A full load (x)");
  EXPECT_EQ(Describe(facts, std::numeric_limits<uint64_t>::max(), " ",
                     std::numeric_limits<int64_t>::min(), " ", std::numeric_limits<int32_t>::min(),
                     " ", std::numeric_limits<uint32_t>::max(), " ", int64_t{0}, " ", -1),
            "18446744073709551615 -9223372036854775808 -2147483648 4294967295 0 -1");
  const std::string long_text(300, 'k');
  EXPECT_EQ(Describe(facts, long_text, 7, long_text), long_text + "7" + long_text);
  EXPECT_EQ(Describe(facts), "");
}

TEST(DescribeTest, EmptyWhenNotAsked) {
  EXPECT_EQ(Describe(Facts(true, false), "SK: ", 16, " blocks"), "");
  EXPECT_EQ(Explain(Facts(false, true), "K=", 0), "");
  EXPECT_EQ(Explain(Facts(true, false), "K=", 0), "K=0");
}

}  // namespace
}  // namespace npu::tiling
