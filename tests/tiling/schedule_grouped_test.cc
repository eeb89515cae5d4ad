// GroupedMatmul's tile loops (server/tiling/schedule_grouped.cc): every
// kernel family's walk covers every group's C exactly once over its K, over
// sweeps of group counts, histograms (even, skewed, with empty experts),
// forms, block sizes and core counts; the carry of one group's last round
// into the next; the refusal of a plan made for another problem.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/schedule.h"
#include "tests/testing/grouped_problems.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::GroupedProblem;
using ::npu::testing::GroupedSpec;
using ::npu::testing::MxPlan;
using ::npu::testing::NoQuantPlan;
using ::npu::testing::QuantPlan;
using ::npu::testing::SkewedHistogram;
using ::npu::testing::StatusIs;
using ::npu::testing::WeightQuantPlan;
using ::testing::HasSubstr;

// Expands `plan` and checks the invariants every grouped walk keeps: the
// units cover each group exactly once (CheckScheduleCoverage), run on the
// plan's cores, stay inside their group's rows, and never repeat a piece
// (the general quant kernel's walk may, `may_repeat`: it returns whether it
// did, or fails with its documented hazard when it leaves pieces out).
enum class Walk { kCovered, kRepeated, kHazard };
Walk ExpectCovered(const TilingPlan& plan, const MatmulProblem& p, const std::string& what,
                   bool may_repeat = false) {
  absl::StatusOr<Schedule> s = ExpandSchedule(plan, p, Chip950());
  if (may_repeat && s.status().code() == absl::StatusCode::kFailedPrecondition) {
    EXPECT_THAT(s.status().message(), HasSubstr("re-splits the last group's last round")) << what;
    return Walk::kHazard;
  }
  EXPECT_TRUE(s.ok()) << what << ": " << s.status();
  if (!s.ok()) return Walk::kHazard;
  EXPECT_TRUE(CheckScheduleCoverage(*s, p).ok())
      << what << ": " << CheckScheduleCoverage(*s, p).message();
  const grouped::GmmGroups groups = *grouped::GroupsOf(p.grouped);
  std::set<std::tuple<uint32_t, uint64_t, uint64_t, uint64_t, uint64_t>> pieces;
  for (const WorkUnit& unit : s->units) {
    EXPECT_LT(unit.core, plan.block_dim) << what;
    EXPECT_LT(unit.batch, groups.groups.size()) << what;
    if (unit.batch >= groups.groups.size()) break;
    const grouped::GmmGroup& g = groups.groups[unit.batch];
    EXPECT_GE(unit.m.begin, g.c_row) << what;
    EXPECT_LE(unit.m.end, g.c_row + g.m) << what;
    EXPECT_EQ(unit.k.size(), g.k) << what;
    pieces.insert({unit.batch, unit.m.begin, unit.m.end, unit.n.begin, unit.n.end});
  }
  const bool repeated = pieces.size() != s->units.size();
  if (!may_repeat) {
    EXPECT_FALSE(repeated) << what;
  }
  return repeated ? Walk::kRepeated : Walk::kCovered;
}

// CANN's one-group tail re-split counts (CalcTailBasicBlock): the last
// round's blocks cut into mTailCnt x nTailCnt pieces while they fit the
// cores.
std::pair<uint32_t, uint32_t> CannTailCounts(uint64_t m, uint64_t n, uint64_t base_m,
                                             uint64_t base_n, uint64_t cores) {
  const uint64_t blocks = ((m + base_m - 1) / base_m) * ((n + base_n - 1) / base_n);
  const uint64_t tail = blocks <= cores ? 0 : blocks % cores;
  uint64_t mt = 1, nt = 1;
  if (tail != 0) {
    while ((mt + 1) * nt * tail <= cores) {
      ++mt;
      if (mt * (nt + 1) * tail <= cores) ++nt;
    }
  }
  return {static_cast<uint32_t>(mt), static_cast<uint32_t>(nt)};
}

std::vector<std::vector<int64_t>> Histograms(int64_t total, int64_t groups, uint64_t seed) {
  std::vector<std::vector<int64_t>> out;
  out.push_back({});  // spread evenly
  out.push_back(SkewedHistogram(total, groups, 1.2, seed));
  std::vector<int64_t> one_hot(groups, 0);
  one_hot[groups / 2] = total;
  out.push_back(one_hot);
  return out;
}

TEST(ScheduleGroupedTest, NoQuantCoversEveryGroupOnce) {
  int cases = 0;
  for (int64_t groups : {1, 3, 8, 33}) {
    for (int64_t m : {1, 200, 1000, 4111}) {
      for (const auto& [n, k] : {std::pair{64, 64}, std::pair{1000, 96}, std::pair{4096, 32}}) {
        for (const std::vector<int64_t>& h : Histograms(m, groups, 7 + groups)) {
          GroupedSpec spec;
          spec.groups = groups;
          spec.m = m;
          spec.n = n;
          spec.k = k;
          spec.histogram = h;
          const MatmulProblem p = GroupedProblem(spec);
          for (uint32_t cores : {1u, 7u, 32u}) {
            for (const auto& [bm, bn] : {std::pair{128u, 256u}, std::pair{256u, 128u},
                                         std::pair{64u, 64u}}) {
              // CANN re-splits the tail of one group only.
              const auto [mt, nt] =
                  groups == 1 ? CannTailCounts(m, n, bm, bn, cores) : std::pair{1u, 1u};
              ExpectCovered(NoQuantPlan(p, cores, bm, bn, 64, mt, nt), p,
                            ::testing::PrintToString(std::tuple{groups, m, n, k, h, cores, bm}));
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
}

TEST(ScheduleGroupedTest, NoQuantSplitKAndListsCoverEveryGroupOnce) {
  for (int64_t groups : {1, 4, 9}) {
    GroupedSpec spec;
    spec.group_type = kGroupTypeSplitK;
    spec.groups = groups;
    spec.m = 300;
    spec.n = 520;
    spec.k = 1024;
    for (const std::vector<int64_t>& h : Histograms(spec.k, groups, 11)) {
      spec.histogram = h;
      const MatmulProblem p = GroupedProblem(spec);
      for (uint32_t cores : {5u, 32u}) ExpectCovered(NoQuantPlan(p, cores), p, "split K");
    }
    GroupedSpec lists;
    lists.group_type = kGroupTypeNone;
    lists.groups = groups;
    lists.rows = SkewedHistogram(900, groups, 1.0, 3);
    const MatmulProblem p = GroupedProblem(lists);
    for (uint32_t cores : {5u, 32u}) ExpectCovered(NoQuantPlan(p, cores), p, "m-m-m");
  }
}

TEST(ScheduleGroupedTest, NoQuantCarriesAGroupsLastRoundIntoTheNext) {
  // Three groups of one 128 x 256 block each on four cores: the blocks go
  // to cores 0, 1 and 2 rather than all to core 0.
  GroupedSpec spec;
  spec.groups = 3;
  spec.m = 300;
  spec.n = 256;
  spec.histogram = {100, 100, 100};
  const MatmulProblem p = GroupedProblem(spec);
  absl::StatusOr<Schedule> s = ExpandSchedule(NoQuantPlan(p, 4), p, Chip950());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->units.size(), 3u);
  std::set<std::pair<uint32_t, uint32_t>> core_group;
  for (const WorkUnit& unit : s->units) core_group.insert({unit.core, unit.batch});
  EXPECT_EQ(core_group, (std::set<std::pair<uint32_t, uint32_t>>{{0, 0}, {1, 1}, {2, 2}}));
  EXPECT_EQ(s->rounds, 1u);
}

TEST(ScheduleGroupedTest, NoQuantReSplitsTheTailOfOneGroup) {
  // One group of 3 x 9 blocks on 8 cores: 27 blocks leave 3 for the last
  // round, each cut in two along M (CANN's counts: 2 x 1), six pieces.
  GroupedSpec spec;
  spec.groups = 1;
  spec.m = 384;
  spec.n = 9 * 256;
  const MatmulProblem p = GroupedProblem(spec);
  EXPECT_EQ(CannTailCounts(384, 9 * 256, 128, 256, 8), (std::pair<uint32_t, uint32_t>{2, 1}));
  absl::StatusOr<Schedule> s = ExpandSchedule(NoQuantPlan(p, 8, 128, 256, 64, 2, 1), p, Chip950());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->units.size(), 24u + 6u);
  int halves = 0;
  for (const WorkUnit& unit : s->units) halves += unit.m.size() == 64 ? 1 : 0;
  EXPECT_EQ(halves, 6);
  EXPECT_TRUE(CheckScheduleCoverage(*s, p).ok());
}

TEST(ScheduleGroupedTest, QuantKernelsCoverEveryGroupOnce) {
  std::map<Walk, int> walks;
  for (int64_t groups : {1, 2, 8, 17}) {
    for (int64_t m : {16, 700, 3000}) {
      for (int64_t n : {256, 1000, 2048}) {
        for (const std::vector<int64_t>& h : Histograms(m, groups, 5 + m)) {
          GroupedSpec spec;
          spec.x = spec.w = DataType::kInt8;
          spec.y = DataType::kBFloat16;
          spec.groups = groups;
          spec.m = m;
          spec.n = n;
          spec.k = 256;
          spec.histogram = h;
          for (bool trans_w : {false, true}) {
            spec.trans_w = trans_w;
            const MatmulProblem p = GroupedProblem(spec);
            for (uint32_t cores : {3u, 24u, 32u}) {
              const std::string what =
                  ::testing::PrintToString(std::tuple{groups, m, n, h, trans_w, cores});
              for (const auto& [kernel, a_mode] : {std::pair{0u, 0u}, std::pair{1u, 4u}}) {
                ++walks[ExpectCovered(QuantPlan(p, cores, kernel, a_mode, 2), p,
                                      absl::StrCat("asw ", kernel, " ", what), true)];
              }
              ExpectCovered(QuantPlan(p, cores, 2, 16, 32), p, "per-block " + what);
              ExpectCovered(MxPlan(p, cores), p, "mx " + what);
            }
          }
        }
      }
    }
  }
  // The general quant kernel's walk repeats pieces in its last group's
  // re-split tail after earlier groups (work done twice, the same values);
  // over the sweep it never leaves one out.
  EXPECT_GT(walks[Walk::kCovered], 0);
  EXPECT_GT(walks[Walk::kRepeated], 0);
  EXPECT_EQ(walks[Walk::kHazard], 0);
}

TEST(ScheduleGroupedTest, TheGeneralQuantKernelsTailAfterEarlierGroupsRepeatsWork) {
  GroupedSpec spec;
  spec.x = spec.w = DataType::kInt8;
  spec.y = DataType::kBFloat16;
  spec.n = 256;
  spec.k = 256;
  // Eight experts of one 128 x 256 block each on 32 cores: the last starts
  // at core 7, and its re-split (QuantASWBlockSch counts the last round from
  // core 0) sends the 25 cores 7..31 to the four quarters of its block.
  spec.groups = 8;
  spec.m = 8 * 100;
  MatmulProblem p = GroupedProblem(spec);
  const TilingPlan plan = QuantPlan(p, 32, 0, 0, 2);
  EXPECT_EQ(ExpectCovered(plan, p, "one block each", true), Walk::kRepeated);
  absl::StatusOr<Schedule> s = ExpandSchedule(plan, p, Chip950());
  ASSERT_TRUE(s.ok()) << s.status();
  int last_group_units = 0;
  for (const WorkUnit& unit : s->units) last_group_units += unit.batch == 7 ? 1 : 0;
  EXPECT_EQ(last_group_units, 25);
  // The groups before it, and one group alone, walk cleanly.
  spec.groups = 1;
  p = GroupedProblem(spec);
  EXPECT_EQ(ExpectCovered(QuantPlan(p, 32, 0, 0, 2), p, "one group", true), Walk::kCovered);
}

TEST(ScheduleGroupedTest, WeightQuantControllersCoverEveryGroupOnce) {
  for (int64_t groups : {1, 4, 16}) {
    for (int64_t m : {1, 333, 2048}) {
      for (int64_t n : {128, 1000, 5120}) {
        for (const std::vector<int64_t>& h : Histograms(m, groups, 9)) {
          GroupedSpec spec;
          spec.w = DataType::kInt8;
          spec.groups = groups;
          spec.m = m;
          spec.n = n;
          spec.k = 512;
          spec.histogram = h;
          const MatmulProblem p = GroupedProblem(spec);
          for (uint32_t cores : {4u, 32u}) {
            const std::string what = ::testing::PrintToString(std::tuple{groups, m, n, h, cores});
            ExpectCovered(WeightQuantPlan(p, cores, true, 2), p, "resplit " + what);
            ExpectCovered(WeightQuantPlan(p, cores, false, 2), p, "basic " + what);
          }
        }
      }
    }
  }
}

TEST(ScheduleGroupedTest, RefusesAPlanForAnotherGroupCount) {
  GroupedSpec spec;
  spec.groups = 4;
  const MatmulProblem p = GroupedProblem(spec);
  spec.groups = 5;
  const TilingPlan other = NoQuantPlan(GroupedProblem(spec), 8);
  EXPECT_THAT(ExpandSchedule(other, p, Chip950()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gmmNoQuantParam.groupNum=5, but the problem has 4 groups")));
}

TEST(ScheduleGroupedTest, RefusesAHistogramThatDoesNotFit) {
  GroupedSpec spec;
  spec.groups = 4;
  spec.m = 64;
  MatmulProblem p = GroupedProblem(spec);
  const TilingPlan plan = NoQuantPlan(p, 8);
  p.grouped.token_histogram = {64};
  EXPECT_THAT(ExpandSchedule(plan, p, Chip950()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.token_histogram")));
}

}  // namespace
}  // namespace npu::tiling

namespace npu::tiling {
namespace {

// Explicit tilings reach the walks with any words: random edits of every
// family's struct end in a plan that is walked or in a named refusal, never
// in a crash, a hang or an internal error.
TEST(ScheduleGroupedTest, RandomWordEditsAreWalkedOrRefusedByName) {
  GroupedSpec spec;
  spec.x = spec.w = DataType::kInt8;
  spec.y = DataType::kBFloat16;
  spec.groups = 5;
  spec.m = 700;
  spec.n = 1000;
  spec.k = 256;
  const MatmulProblem quant = GroupedProblem(spec);
  spec.x = spec.y = DataType::kFloat16;
  spec.w = DataType::kFloat16;
  const MatmulProblem float_problem = GroupedProblem(spec);
  spec.w = DataType::kInt8;
  const MatmulProblem wq = GroupedProblem(spec);
  const std::vector<std::pair<TilingPlan, MatmulProblem>> plans = {
      {NoQuantPlan(float_problem, 32), float_problem},
      {QuantPlan(quant, 32, 0, 0, 2), quant},
      {QuantPlan(quant, 32, 2, 16, 32), quant},
      {MxPlan(quant, 32), quant},
      {WeightQuantPlan(wq, 32, true, 2), wq},
      {WeightQuantPlan(wq, 32, false, 2), wq}};
  const uint64_t values[] = {0, 1, 2, 3, 7, 16, 100, 255, 4096, 2147483648ull, 4294967295ull};
  std::mt19937_64 engine(5);
  std::map<absl::StatusCode, int> codes;
  for (const auto& [base, problem] : plans) {
    for (int edit = 0; edit < 300; ++edit) {
      TilingPlan plan = base;
      // The head and the block words (GMMArray's 384 entries are not read).
      const size_t size = plan.data.fields.size();
      const size_t array = size > 400 ? 384 : 0;
      size_t field = engine() % (size - array);
      if (array > 0 && field >= size - array - kTCubeFieldCount) field += array;
      plan.data.fields[field].value = values[engine() % std::size(values)];
      const absl::Status status = ExpandSchedule(plan, problem, Chip950()).status();
      ++codes[status.code()];
      EXPECT_TRUE(status.code() == absl::StatusCode::kOk ||
                  status.code() == absl::StatusCode::kInvalidArgument ||
                  status.code() == absl::StatusCode::kFailedPrecondition ||
                  status.code() == absl::StatusCode::kUnimplemented)
          << plan.data.struct_name() << " " << status;
    }
  }
  EXPECT_GT(codes[absl::StatusCode::kOk], 0);
  EXPECT_GT(codes[absl::StatusCode::kInvalidArgument], 0);
}

}  // namespace
}  // namespace npu::tiling
