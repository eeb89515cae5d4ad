// WeightQuantBatchMatmulV2's tile loops (server/tiling/schedule_weight_quant.cc):
// over a sweep of shapes, weights, modes and core counts, CANN's plan of
// every strategy expands into units that cover C exactly once, on no more
// cores than its block dim.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/schedule.h"

namespace npu::tiling {
namespace {

MatmulProblem Problem(int64_t m, int64_t n, int64_t k, DataType w, bool trans_b, int64_t group) {
  MatmulProblem p;
  p.op = MatmulOp::kWeightQuantBatchMatmulV2;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_c = DataType::kFloat16;
  p.dtype_b = w;
  p.trans_b = trans_b;
  p.quant.group_size = group;
  const int64_t groups = group > 0 ? (k + group - 1) / group : 0;
  p.quant.antiquant_scale = {
      true, DataType::kFloat16,
      group > 0 ? (trans_b ? std::vector<int64_t>{n, groups} : std::vector<int64_t>{groups, n})
                : std::vector<int64_t>{n}};
  return p;
}

TEST(ScheduleWeightQuantTest, EveryStrategyCoversCExactlyOnce) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  std::map<std::string, int> covered;
  for (uint32_t aic : {32u, 24u, 8u}) {
    ChipSpec chip = *FindPlatform(kDefaultPlatform);
    chip.aic_num = aic;
    chip.aiv_num = 2 * aic;
    for (int64_t m : {1, 17, 240, 257, 1000}) {
      for (int64_t n : {64, 1000, 4096, 10240}) {
        for (int64_t k : {256, 1024, 2000}) {
          for (const auto& [w, trans_b, group, nz] :
               {std::tuple{DataType::kInt4, true, int64_t{0}, false},
                std::tuple{DataType::kInt8, false, int64_t{0}, false},
                std::tuple{DataType::kInt4, false, int64_t{128}, true},
                std::tuple{DataType::kInt4, true, int64_t{64}, false},
                std::tuple{DataType::kInt8, false, int64_t{128}, false},
                std::tuple{DataType::kInt8, false, int64_t{0}, true}}) {
            MatmulProblem p = Problem(m, n, k, w, trans_b, group);
            if (nz) {
              p.format_b = Format::kFractalNz;
              const int64_t c0 = w == DataType::kInt8 ? 32 : 16;
              const int64_t rows = trans_b ? n : k, cols = trans_b ? k : n;
              p.storage_shape_b = {(cols + c0) / c0, (rows + 16) / 16, 16, c0};
            }
            absl::StatusOr<TilingDecision> decision = registry.Decide(p, chip);
            if (!decision.ok()) continue;  // CANN refuses it too (the differential's business)
            const TilingPlan& plan = decision->plan;
            absl::StatusOr<Schedule> schedule = ExpandSchedule(plan, p, chip);
            ASSERT_TRUE(schedule.ok()) << plan.strategy << " m=" << m << " n=" << n << " k=" << k
                                       << ": " << schedule.status();
            EXPECT_TRUE(CheckScheduleCoverage(*schedule, p).ok())
                << plan.strategy << " m=" << m << " n=" << n << " k=" << k;
            EXPECT_LE(schedule->aic_cores, plan.block_dim);
            ++covered[plan.strategy];
          }
        }
      }
    }
  }
  EXPECT_GT(covered["ADAPTIVE_SPLIT"], 0);
  EXPECT_GT(covered["ANTI_REG"], 0);
  EXPECT_GT(covered["CUSTOM_DEPRECATED"], 0);
}

}  // namespace
}  // namespace npu::tiling
