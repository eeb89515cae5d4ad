#include "server/service/provenance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "server/tiling/types.h"

namespace npu::server {
namespace {

namespace tl = ::npu::tiling;

tl::ChipSpec Chip950() { return *tl::FindPlatform(tl::kDefaultPlatform); }

// server/graph/README.md quotes this value: a change to the hash or to the
// 950PR profile's figures changes every client's cache keys.
TEST(ProvenanceTest, FingerprintOfTheDefaultProfileIsStable) {
  EXPECT_EQ(ChipFingerprint(Chip950()), "7dd77042f367af48");
}

// The per-thread memo answers for the chip asked about, not the last one.
TEST(ProvenanceTest, FingerprintDigitsFollowTheChipAskedAbout) {
  const tl::ChipSpec base = Chip950();
  tl::ChipSpec smaller = base;
  smaller.aic_num = 24;
  tl::ChipSpec renamed = base;
  renamed.name = "another name";
  const std::string base_hex = ChipFingerprint(base);
  const std::string smaller_hex = ChipFingerprint(smaller);
  EXPECT_NE(base_hex, smaller_hex);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(ChipFingerprintDigits(base).view(), base_hex);
    EXPECT_EQ(ChipFingerprintDigits(smaller).view(), smaller_hex);
    EXPECT_EQ(ChipFingerprintDigits(renamed).view(), base_hex);  // figures, not the name
  }
  EXPECT_THAT(base_hex, ::testing::MatchesRegex("[0-9a-f]{16}"));
}

}  // namespace
}  // namespace npu::server
