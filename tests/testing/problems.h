// Small builders for tiling tests: a problem from (m, n, k, dtype) plus
// fluent tweaks, and the default chip with optional core counts.
#ifndef NPU_TESTS_TESTING_PROBLEMS_H_
#define NPU_TESTS_TESTING_PROBLEMS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/types.h"

namespace npu::testing {

inline tiling::MatmulProblem Problem(int64_t m, int64_t n, int64_t k,
                                     tiling::DataType dtype = tiling::DataType::kFloat16) {
  tiling::MatmulProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = p.dtype_c = p.dtype_bias = dtype;
  return p;
}

// A problem of `op` whose A and B both carry the batch dims `batch`.
inline tiling::MatmulProblem Batched(tiling::MatmulOp op, int64_t m, int64_t n, int64_t k,
                                     std::vector<int64_t> batch,
                                     tiling::DataType dtype = tiling::DataType::kFloat16) {
  tiling::MatmulProblem p = Problem(m, n, k, dtype);
  p.op = op;
  p.batch.a = p.batch.b = std::move(batch);
  return p;
}

// The same with one batch dim.
inline tiling::MatmulProblem Batched(tiling::MatmulOp op, int64_t m, int64_t n, int64_t k,
                                     int64_t batch,
                                     tiling::DataType dtype = tiling::DataType::kFloat16) {
  return Batched(op, m, n, k, std::vector<int64_t>{batch}, dtype);
}

// A BatchMatMulV3 problem with one batch dim on A and B.
inline tiling::MatmulProblem Batched(int64_t m, int64_t n, int64_t k, int64_t batch,
                                     tiling::DataType dtype = tiling::DataType::kFloat16) {
  return Batched(tiling::MatmulOp::kBatchMatMulV3, m, n, k, batch, dtype);
}

// A BatchMatMulV3 problem with A's and B's own batch dims (broadcast).
inline tiling::MatmulProblem Batched(int64_t m, int64_t n, int64_t k, std::vector<int64_t> batch_a,
                                     std::vector<int64_t> batch_b,
                                     tiling::DataType dtype = tiling::DataType::kFloat16) {
  tiling::MatmulProblem p = Problem(m, n, k, dtype);
  p.op = tiling::MatmulOp::kBatchMatMulV3;
  p.batch.a = std::move(batch_a);
  p.batch.b = std::move(batch_b);
  return p;
}

inline tiling::ChipSpec Chip950(uint32_t aic = 32, uint32_t aiv = 0) {
  tiling::ChipSpec chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
  chip.aic_num = aic;
  chip.aiv_num = aiv == 0 ? 2 * aic : aiv;
  return chip;
}

// The built-in registry's decision for `problem` on `chip`.
inline absl::StatusOr<tiling::TilingDecision> DecideBuiltin(
    const tiling::MatmulProblem& problem, const tiling::ChipSpec& chip = Chip950()) {
  return tiling::MakeBuiltinRegistry().Decide(problem, chip);
}

// The built-in registry's plan for `problem` on `chip`. A failed decision
// fails the calling test and gives an empty plan.
inline tiling::TilingPlan BuiltinPlan(const tiling::MatmulProblem& problem,
                                      const tiling::ChipSpec& chip = Chip950()) {
  absl::StatusOr<tiling::TilingDecision> decision = DecideBuiltin(problem, chip);
  EXPECT_TRUE(decision.ok()) << decision.status();
  return decision.ok() ? decision->plan : tiling::TilingPlan{};
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_PROBLEMS_H_
