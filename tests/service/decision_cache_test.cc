#include "server/service/decision_cache.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/types.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

pb::TilingResponse Answer(const std::string& strategy) {
  pb::TilingResponse response;
  response.set_strategy(strategy);
  return response;
}

TEST(DecisionCacheTest, DisabledAtCapacityZero) {
  DecisionCache<pb::TilingResponse> cache(0);
  EXPECT_FALSE(cache.enabled());
  cache.Insert("k", Answer("A"));
  EXPECT_EQ(cache.Lookup("k"), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(DecisionCacheTest, EvictsTheLeastRecentlyUsed) {
  DecisionCache<pb::TilingResponse> cache(2);
  cache.Insert("a", Answer("A"));
  cache.Insert("b", Answer("B"));
  ASSERT_NE(cache.Lookup("a"), nullptr);  // "b" is now the oldest
  cache.Insert("c", Answer("C"));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Lookup("b"), nullptr);
  ASSERT_NE(cache.Lookup("a"), nullptr);
  EXPECT_EQ(cache.Lookup("a")->strategy(), "A");
  EXPECT_EQ(cache.Lookup("c")->strategy(), "C");
}

TEST(DecisionCacheTest, InsertReplacesAnExistingEntry) {
  DecisionCache<pb::TilingResponse> cache(2);
  cache.Insert("a", Answer("A"));
  cache.Insert("a", Answer("A2"));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Lookup("a")->strategy(), "A2");
}

TEST(DecisionCacheTest, KeyCoversProblemChipAndStrategy) {
  tl::MatmulProblem problem;
  problem.m = problem.n = problem.k = 64;
  const tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);
  const std::string base = DecisionCacheKey(problem, chip, "");
  EXPECT_EQ(base, DecisionCacheKey(problem, chip, ""));

  tl::MatmulProblem other_problem = problem;
  other_problem.trans_b = true;
  EXPECT_NE(base, DecisionCacheKey(other_problem, chip, ""));
  tl::ChipSpec other_chip = chip;
  other_chip.l0c_bytes /= 2;
  EXPECT_NE(base, DecisionCacheKey(problem, other_chip, ""));
  EXPECT_NE(base, DecisionCacheKey(problem, chip, "BASIC_ASWT"));
}

// The same name and figures on another architecture never share an entry.
TEST(DecisionCacheTest, KeyCoversTheArchitecture) {
  tl::MatmulProblem problem;
  problem.m = problem.n = problem.k = 64;
  const tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);
  tl::ChipSpec other_arch = chip;
  other_arch.npu_arch = tl::NpuArch::kDav2201;
  EXPECT_NE(DecisionCacheKey(problem, chip, ""), DecisionCacheKey(problem, other_arch, ""));
  // The A2 profile relabelled with the 950PR's figures, and the other way
  // round.
  tl::ChipSpec a2 = *tl::FindPlatform("ascend910b1");
  tl::ChipSpec a2_as_950 = chip;
  a2_as_950.npu_arch = a2.npu_arch;
  EXPECT_NE(DecisionCacheKey(problem, chip, ""), DecisionCacheKey(problem, a2_as_950, ""));
}

TEST(DecisionCacheTest, ConcurrentUseStaysBounded) {
  DecisionCache<pb::TilingResponse> cache(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 5000; ++i) {
        const std::string key = std::to_string((i * 7 + t) % 200);
        if (auto hit = cache.Lookup(key)) {
          EXPECT_EQ(hit->strategy(), key);  // a key always maps to its own answer
        } else {
          cache.Insert(key, Answer(key));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.size(), 64u);
}

}  // namespace
}  // namespace npu::server
