// Invariants of every plan over a sweep of shapes, dtypes, layouts and core
// counts: blocks fit L0A / L0B / L0C and L1, alignment holds, block dim
// stays within the cores, and the trace names every strategy consulted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/kernel_table.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;

uint64_t Align16(uint64_t v) { return (v + 15) / 16 * 16; }

void CheckInvariants(const MatmulProblem& p, const ChipSpec& chip, const TilingDecision& d) {
  const TilingPlan& plan = d.plan;
  SCOPED_TRACE(::testing::Message()
               << "m=" << p.m << " n=" << p.n << " k=" << p.k << " " << DataTypeName(p.dtype_a)
               << " ta=" << p.trans_a << " tb=" << p.trans_b << " bias=" << p.has_bias
               << " aic=" << chip.aic_num << " aiv=" << chip.aiv_num << " -> " << plan.strategy
               << " key=" << plan.key.Encode());
  // Trace: every strategy before the chosen one was not capable.
  const std::vector<std::string> names = MakeBuiltinRegistry().Names(MatmulOp::kMatMulV3);
  ASSERT_FALSE(d.trace.empty());
  ASSERT_LE(d.trace.size(), names.size());
  for (size_t i = 0; i < d.trace.size(); ++i) {
    EXPECT_EQ(d.trace[i].strategy, names[i]);
    EXPECT_FALSE(d.trace[i].reason.empty());
    const bool last = i + 1 == d.trace.size();
    EXPECT_EQ(d.trace[i].capable, last);
    EXPECT_EQ(d.trace[i].chosen, last);
  }
  EXPECT_EQ(d.trace.back().strategy, plan.strategy);

  absl::StatusOr<TilingKey> decoded = TilingKey::Decode(plan.key.Encode());
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->trans_a, plan.key.model == KernelModel::kKEqualZero ? false : p.trans_a);

  // The plan names its kernel, whose row gives the launch's kernel type.
  EXPECT_EQ(plan.data.kernel, MatMulKernelOf(plan.key.model));
  EXPECT_EQ(plan.kernel_type, KernelTypeOf(plan.data.kernel, plan.key));
  const uint32_t cores = plan.kernel_type == KernelType::kAivOnly ? chip.aiv_num : chip.aic_num;
  EXPECT_GE(plan.block_dim, 1u);
  EXPECT_LE(plan.block_dim, cores);
  if (plan.kernel_type == KernelType::kAivOnly) return;

  const BlockTiling& b = plan.block;
  const uint64_t a_bytes = DataTypeBytes(p.dtype_a);
  const uint64_t b_bytes = DataTypeBytes(p.dtype_b);
  EXPECT_EQ(b.base_m % 16, 0u);
  EXPECT_EQ(b.base_n % 16, 0u);
  EXPECT_TRUE(b.base_k % 8 == 0 || b.base_k == b.single_core_k) << "baseK=" << b.base_k;
  EXPECT_LE(b.base_m, Align16(p.m));
  EXPECT_LE(b.base_n, Align16(p.n));
  EXPECT_LE(b.base_m * b.base_k * a_bytes * 2, chip.l0a_bytes);
  EXPECT_LE(b.base_n * b.base_k * b_bytes * 2, chip.l0b_bytes);
  EXPECT_LE(b.base_m * b.base_n * 4 * b.l0c_db, chip.l0c_bytes);
  EXPECT_GE(b.k_l1, b.base_k);
  EXPECT_EQ(b.k_l1 % b.base_k, 0u);
  switch (plan.key.full_load) {
    case FullLoad::kNone:
      EXPECT_LE((b.m_l1 + b.n_l1) * b.k_l1 * a_bytes * 2, chip.l1_bytes);
      break;
    case FullLoad::kA:
      EXPECT_LE(Align16(p.m) * Align16(p.k) * a_bytes, chip.l1_bytes * 3 / 4);
      break;
    case FullLoad::kB:
      EXPECT_LE(Align16(p.n) * Align16(p.k) * b_bytes, chip.l1_bytes * 3 / 4);
      break;
    case FullLoad::kAB:
      ADD_FAILURE() << "AB full load is never chosen for MatMulV3";
      break;
  }
  EXPECT_EQ(plan.data.RawWords().size(), 23u);
  // Stream-K covers K exactly with its slices.
  if (plan.key.model == KernelModel::kStreamK || plan.key.model == KernelModel::kStreamKSplitK) {
    EXPECT_GE(b.single_core_k * b.k_cnt, static_cast<uint64_t>(p.k));
  }
}

using SweepParam = std::tuple<DataType, bool, bool, uint32_t>;

class PlanInvariantsTest : public ::testing::TestWithParam<SweepParam> {};

TEST_P(PlanInvariantsTest, HoldOverShapes) {
  const auto [dtype, trans_a, trans_b, aic] = GetParam();
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const int64_t dims[] = {1, 15, 64, 200, 256, 1000, 1537, 4096, 12000};
  const int64_t ks[] = {0, 1, 31, 128, 300, 2048, 8192, 16384, 70000};
  for (const ChipSpec& chip : {Chip950(aic), Chip950(aic, aic + 8)}) {
    for (int64_t m : dims) {
      for (int64_t n : dims) {
        for (int64_t k : ks) {
          for (bool bias : {false, true}) {
            if (bias && k == 0) continue;
            MatmulProblem p = Problem(m, n, k, dtype);
            p.trans_a = trans_a;
            p.trans_b = trans_b;
            p.has_bias = bias;
            p.dtype_bias = DataType::kFloat32;
            p.force_grp_acc_fp32 = dtype == DataType::kFloat32 && (m + n + k) % 2 == 0;
            absl::StatusOr<TilingDecision> d = registry.Decide(p, chip);
            ASSERT_THAT(d, IsOk()) << "m=" << m << " n=" << n << " k=" << k;
            CheckInvariants(p, chip, *d);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, PlanInvariantsTest,
    ::testing::Combine(::testing::Values(DataType::kFloat16, DataType::kBFloat16,
                                         DataType::kFloat32),
                       ::testing::Bool(), ::testing::Bool(), ::testing::Values(8u, 24u, 32u)),
    [](const ::testing::TestParamInfo<SweepParam>& info) {
      return std::string(DataTypeName(std::get<0>(info.param))) +
             (std::get<1>(info.param) ? "_TA" : "_A") + (std::get<2>(info.param) ? "_TB" : "_B") +
             "_aic" + std::to_string(std::get<3>(info.param));
    });

// FusedMatMul's 2-D problems: every epilogue with each of its dtypes, on a
// chip with two AIV per AIC and one without (add and mul refuse it).
using FusedSweepParam = std::tuple<FusedOp, bool>;

class FusedPlanInvariantsTest : public ::testing::TestWithParam<FusedSweepParam> {};

std::vector<DataType> FusedInputDtypes(FusedOp op) {
  if (op == FusedOp::kGeluErf || op == FusedOp::kGeluTanh || op == FusedOp::kCast16To32) {
    return {DataType::kFloat16, DataType::kBFloat16};
  }
  return {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32};
}

void CheckFusedInvariants(const MatmulProblem& p, const ChipSpec& chip, const TilingDecision& d) {
  const TilingPlan& plan = d.plan;
  SCOPED_TRACE(::testing::Message()
               << "m=" << p.m << " n=" << p.n << " k=" << p.k << " " << DataTypeName(p.dtype_a)
               << " op=" << FusedOpName(p.fused.op) << " ta=" << p.trans_a << " tb=" << p.trans_b
               << " bias=" << p.has_bias << " hf32=" << p.hf32 << " aic=" << chip.aic_num << " aiv="
               << chip.aiv_num << " -> " << plan.strategy << " key=" << plan.key.Encode());
  // Trace: FusedMatMul's list in order up to the chosen strategy, which is
  // the only one chosen; a capable strategy before it failed to tile.
  const std::vector<std::string> names = MakeBuiltinRegistry().Names(MatmulOp::kFusedMatMul);
  ASSERT_FALSE(d.trace.empty());
  ASSERT_LE(d.trace.size(), names.size());
  for (size_t i = 0; i < d.trace.size(); ++i) {
    EXPECT_EQ(d.trace[i].strategy, names[i]);
    EXPECT_FALSE(d.trace[i].reason.empty());
    EXPECT_EQ(d.trace[i].chosen, i + 1 == d.trace.size());
  }
  EXPECT_TRUE(d.trace.back().capable);
  EXPECT_EQ(d.trace.back().strategy, plan.strategy);

  absl::StatusOr<TilingKey> decoded = TilingKey::Decode(plan.key.Encode(), KeyLayout::kFused);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->fused_op, p.fused.op);
  EXPECT_EQ(decoded->batch_model, 0u);
  EXPECT_EQ(plan.data.kernel, MatMulKernelOf(plan.key.model));
  EXPECT_EQ(plan.kernel_type, KernelTypeOf(plan.data.kernel, plan.key));
  EXPECT_NE(decoded->model, KernelModel::kBasicSplitK);
  EXPECT_NE(decoded->model, KernelModel::kStreamKSplitK);
  EXPECT_NE(decoded->l0c2out, L0cToOut::kNdFixpipe1To1);
  if (plan.key.model == KernelModel::kKEqualZero) {
    EXPECT_FALSE(decoded->trans_a || decoded->trans_b);
    EXPECT_EQ(plan.kernel_type, KernelType::kAivOnly);
    EXPECT_EQ(plan.block_dim, chip.aiv_num);
    EXPECT_EQ(plan.data.RawWords().size(), 2u);
    return;
  }
  EXPECT_EQ(decoded->api_level, ApiLevel::kBasic);
  EXPECT_EQ(decoded->inner_precise, p.fused.inner_precise);
  EXPECT_EQ(decoded->trans_a, p.trans_a);
  EXPECT_EQ(decoded->trans_b, p.trans_b);
  EXPECT_GE(plan.block_dim, 1u);
  EXPECT_LE(plan.block_dim, chip.aic_num);
  EXPECT_EQ(plan.data.RawWords().size(), 23u);

  const BlockTiling& b = plan.block;
  const uint64_t a_bytes = DataTypeBytes(p.dtype_a);
  EXPECT_EQ(b.base_m % 16, 0u);
  EXPECT_EQ(b.base_n % 16, 0u);
  EXPECT_TRUE(b.base_k % 8 == 0 || b.base_k == b.single_core_k) << "baseK=" << b.base_k;
  EXPECT_LE(b.base_m * b.base_k * a_bytes * 2, chip.l0a_bytes);
  EXPECT_LE(b.base_n * b.base_k * DataTypeBytes(p.dtype_b) * 2, chip.l0b_bytes);
  EXPECT_LE(b.base_m * b.base_n * 4 * b.l0c_db, chip.l0c_bytes);
  EXPECT_EQ(b.k_l1 % b.base_k, 0u);
  if (plan.key.full_load == FullLoad::kNone) {
    EXPECT_LE((b.m_l1 + b.n_l1) * b.k_l1 * a_bytes * 2, chip.l1_bytes);
  }
  if (plan.key.model == KernelModel::kStreamK) {
    EXPECT_GE(b.single_core_k * b.k_cnt, static_cast<uint64_t>(p.k));
  }
}

TEST_P(FusedPlanInvariantsTest, HoldOverShapes) {
  const auto [op, trans_a] = GetParam();
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const int64_t dims[] = {1, 15, 200, 1537, 4096, 20000};
  const int64_t ks[] = {0, 31, 300, 2048, 8192, 70000};
  const bool x3 = op == FusedOp::kAdd || op == FusedOp::kMul;
  const bool gelu = op == FusedOp::kGeluErf || op == FusedOp::kGeluTanh;
  for (const ChipSpec& chip : {Chip950(32), Chip950(24, 40)}) {
    for (DataType dtype : FusedInputDtypes(op)) {
      for (int64_t m : dims) {
        for (int64_t n : dims) {
          for (int64_t k : ks) {
            for (bool bias : {false, true}) {
              if (bias && (k == 0 || gelu)) continue;
              MatmulProblem p = Problem(m, n, k, dtype);
              p.op = MatmulOp::kFusedMatMul;
              p.fused.op = op;
              if (op == FusedOp::kCast16To32) p.dtype_c = DataType::kFloat32;
              p.trans_a = trans_a;
              p.trans_b = (m + n + k) % 2 == 0;
              p.has_bias = bias;
              p.dtype_bias = DataType::kFloat32;
              p.hf32 = dtype == DataType::kFloat32 && (m + k) % 3 == 0;
              p.fused.inner_precise = static_cast<int>((n + k) % 2);
              absl::StatusOr<TilingDecision> d = registry.Decide(p, chip);
              const std::string where = ::testing::PrintToString(std::make_tuple(m, n, k, bias));
              if (x3 && chip.aiv_num != 2 * chip.aic_num) {
                EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << where;
                continue;
              }
              if (gelu && k != 0 && chip.aiv_num != 2 * chip.aic_num) {
                // The gelu epilogue needs two AIV per AIC and has no Stream-K.
                EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition) << where;
                continue;
              }
              if (op == FusedOp::kCast16To32 && k == 0) {
                // No FusedMatMul strategy tiles a 16cast32 K = 0 (CANN crashes).
                EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition) << where;
                continue;
              }
              ASSERT_THAT(d, IsOk()) << where;
              CheckFusedInvariants(p, chip, *d);
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sweep, FusedPlanInvariantsTest,
                         ::testing::Combine(::testing::Values(FusedOp::kNone, FusedOp::kRelu,
                                                              FusedOp::kAdd, FusedOp::kMul,
                                                              FusedOp::kGeluErf, FusedOp::kGeluTanh,
                                                              FusedOp::kCast16To32),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<FusedSweepParam>& info) {
                           return std::string(FusedOpKeyName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_TA" : "_A");
                         });

TEST(DeterminismTest, SameProblemSameAnswer) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  MatmulProblem p = Problem(1537, 4096, 300);
  absl::StatusOr<TilingDecision> first = registry.Decide(p, Chip950());
  absl::StatusOr<TilingDecision> second = registry.Decide(p, Chip950());
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(first->plan.key.Encode(), second->plan.key.Encode());
  EXPECT_EQ(first->plan.data.RawWords(), second->plan.data.RawWords());
}

}  // namespace
}  // namespace npu::tiling

namespace npu::tiling {
namespace {

// Platforms anywhere inside ValidateChip's ranges must never crash the engine
// or make it report a bug: every answer is a plan or a clear refusal.
TEST(RandomPlatformTest, EveryAnswerIsAPlanOrARefusal) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  // Log-uniform in [lo, hi].
  auto pick = [&next](uint64_t lo, uint64_t hi) {
    const int bits_lo = 63 - __builtin_clzll(lo), bits_hi = 63 - __builtin_clzll(hi);
    const int bits = bits_lo + static_cast<int>(next() % (bits_hi - bits_lo + 1));
    const uint64_t value = (uint64_t{1} << bits) + next() % (uint64_t{1} << bits);
    return std::min(std::max(value, lo), hi);
  };
  const StrategyRegistry registry = MakeBuiltinRegistry();
  constexpr uint64_t kKiB = 1024;
  const DataType dtypes[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32};
  for (int i = 0; i < 20000; ++i) {
    ChipSpec chip = Chip950();
    chip.aic_num = static_cast<uint32_t>(pick(1, 128));
    chip.aiv_num = next() % 2 ? 2 * chip.aic_num : static_cast<uint32_t>(pick(1, 256));
    chip.l1_bytes = pick(16 * kKiB, 64 * kKiB * kKiB);
    chip.l0a_bytes = pick(4 * kKiB, 512 * kKiB);
    chip.l0b_bytes = pick(4 * kKiB, 512 * kKiB);
    chip.l0c_bytes = pick(4 * kKiB, 16 * kKiB * kKiB);
    chip.ub_bytes = pick(4 * kKiB, 2 * kKiB * kKiB);
    chip.l2_bytes = pick(1, 1024 * kKiB * kKiB);
    chip.bt_bytes = pick(kKiB, 64 * kKiB);
    MatmulProblem p =
        Problem(static_cast<int64_t>(pick(1, 1 << 20)), static_cast<int64_t>(pick(1, 1 << 20)),
                static_cast<int64_t>(pick(1, 1 << 20)), dtypes[next() % 3]);
    p.trans_a = next() % 2;
    p.trans_b = next() % 2;
    p.has_bias = next() % 4 == 0;
    p.dtype_bias = DataType::kFloat32;
    p.force_grp_acc_fp32 = p.dtype_a == DataType::kFloat32 && next() % 4 == 0;
    absl::StatusOr<TilingDecision> d = registry.Decide(p, chip);
    if (d.ok()) {
      const uint32_t cores =
          d->plan.kernel_type == KernelType::kAivOnly ? chip.aiv_num : chip.aic_num;
      EXPECT_LE(d->plan.block_dim, cores);
      continue;
    }
    const absl::StatusCode code = d.status().code();
    EXPECT_TRUE(code == absl::StatusCode::kFailedPrecondition ||
                code == absl::StatusCode::kInvalidArgument)
        << d.status() << " on case " << i;
    if (HasFailure()) return;
  }
}

// The same for FusedMatMul's 2-D problems with every epilogue.
TEST(RandomPlatformTest, EveryFusedAnswerIsAPlanOrARefusal) {
  uint64_t state = 0xD1B54A32D192ED03ull;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  auto pick = [&next](uint64_t lo, uint64_t hi) {
    const int bits_lo = 63 - __builtin_clzll(lo), bits_hi = 63 - __builtin_clzll(hi);
    const int bits = bits_lo + static_cast<int>(next() % (bits_hi - bits_lo + 1));
    const uint64_t value = (uint64_t{1} << bits) + next() % (uint64_t{1} << bits);
    return std::min(std::max(value, lo), hi);
  };
  const StrategyRegistry registry = MakeBuiltinRegistry();
  constexpr uint64_t kKiB = 1024;
  const FusedOp ops[] = {FusedOp::kNone,    FusedOp::kRelu,     FusedOp::kAdd,       FusedOp::kMul,
                         FusedOp::kGeluErf, FusedOp::kGeluTanh, FusedOp::kCast16To32};
  int plans = 0;
  for (int i = 0; i < 10000; ++i) {
    ChipSpec chip = Chip950();
    chip.aic_num = static_cast<uint32_t>(pick(1, 128));
    chip.aiv_num = next() % 4 ? 2 * chip.aic_num : static_cast<uint32_t>(pick(1, 256));
    chip.l1_bytes = pick(16 * kKiB, 64 * kKiB * kKiB);
    chip.l0a_bytes = pick(4 * kKiB, 512 * kKiB);
    chip.l0b_bytes = pick(4 * kKiB, 512 * kKiB);
    chip.l0c_bytes = pick(4 * kKiB, 16 * kKiB * kKiB);
    chip.ub_bytes = pick(4 * kKiB, 2 * kKiB * kKiB);
    chip.l2_bytes = pick(1, 1024 * kKiB * kKiB);
    chip.bt_bytes = pick(kKiB, 64 * kKiB);
    const FusedOp op = ops[next() % 7];
    const bool sixteen_only =
        op == FusedOp::kGeluErf || op == FusedOp::kGeluTanh || op == FusedOp::kCast16To32;
    const DataType dtype = sixteen_only ? (next() % 2 ? DataType::kFloat16 : DataType::kBFloat16)
                                        : static_cast<DataType>(next() % 3);
    MatmulProblem p = Problem(static_cast<int64_t>(pick(1, 1 << 20)),
                              static_cast<int64_t>(next() % 3 ? pick(1, 64) : pick(1, 1 << 20)),
                              static_cast<int64_t>(next() % 8 ? pick(1, 1 << 20) : 0), dtype);
    p.op = MatmulOp::kFusedMatMul;
    p.fused.op = op;
    if (op == FusedOp::kCast16To32) p.dtype_c = DataType::kFloat32;
    p.trans_a = next() % 2;
    p.trans_b = next() % 2;
    p.has_bias = p.k != 0 && op != FusedOp::kGeluErf && op != FusedOp::kGeluTanh && next() % 4 == 0;
    p.dtype_bias = DataType::kFloat32;
    p.hf32 = dtype == DataType::kFloat32 && next() % 2;
    p.fused.inner_precise = static_cast<int>(next() % 2);
    absl::StatusOr<TilingDecision> d = registry.Decide(p, chip);
    if (d.ok()) {
      const uint32_t cores =
          d->plan.kernel_type == KernelType::kAivOnly ? chip.aiv_num : chip.aic_num;
      EXPECT_LE(d->plan.block_dim, cores);
      ++plans;
      continue;
    }
    const absl::StatusCode code = d.status().code();
    EXPECT_TRUE(code == absl::StatusCode::kFailedPrecondition ||
                code == absl::StatusCode::kInvalidArgument)
        << d.status() << " on case " << i;
    if (HasFailure()) return;
  }
  // Most random problems get a plan; a sweep of refusals would test little.
  EXPECT_GT(plans, 5000) << plans;
}

}  // namespace
}  // namespace npu::tiling
