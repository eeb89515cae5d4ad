// Invariants of every BatchMatMulV3 and FusedMatMul plan over random
// batched problems: the trace walks the op's strategies in order and ends
// at the chosen one, block dim stays within the cores, the plan's blocks fit
// L0A / L0B / L0C and L1, and the batched structs' own blocks (several
// batches per L0 load, merged batches) fit the L0 buffers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/plan_fit.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::tiling {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::Problem;

uint64_t Align16(uint64_t v) { return (v + 15) / 16 * 16; }

class BatchProblemSource {
 public:
  explicit BatchProblemSource(uint32_t seed) : rng_(seed) {}

  MatmulProblem Next(MatmulOp op) {
    const DataType dtypes[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32};
    MatmulProblem p = Problem(Dim(), Dim(), Dim(), dtypes[Pick(3)]);
    p.op = op;
    p.trans_a = Pick(3) == 0;
    p.trans_b = Pick(2) == 0;
    p.hf32 = p.dtype_a == DataType::kFloat32 && Pick(2) == 0;
    if (Pick(5) == 0) {
      p.has_bias = true;
      p.dtype_bias =
          p.dtype_a == DataType::kFloat32 || Pick(2) == 0 ? DataType::kFloat32 : p.dtype_a;
    }
    const int rank = 1 + static_cast<int>(Pick(2));
    for (int i = 0; i < rank; ++i) {
      const int64_t outer[] = {1, 2, 3, 4, 8, 16, 30, 64, 128, 300, 1200, 2400};
      const int64_t inner[] = {1, 2, 3, 4, 8};
      p.batch.a.push_back(i == 0 ? outer[Pick(12)] : inner[Pick(5)]);
    }
    p.batch.b = p.batch.a;
    if (op == MatmulOp::kBatchMatMulV3) {
      const uint32_t shape = Pick(5);
      if (shape == 0) p.batch.b.clear();
      if (shape == 1) p.batch.b.back() = 1;
      if (shape == 2) p.batch.a.front() = 1;
      p.avoid_tensor_api = Pick(8) == 0;
    } else {
      const FusedOp ops[] = {FusedOp::kNone, FusedOp::kRelu, FusedOp::kAdd, FusedOp::kMul};
      p.fused.op = ops[Pick(4)];
      if (p.fused.op == FusedOp::kAdd || p.fused.op == FusedOp::kMul) {
        p.fused.inner_precise = static_cast<int>(Pick(2));
        p.has_bias = false;
      }
      if (p.has_bias) p.dtype_bias = p.dtype_a;
    }
    return p;
  }

  ChipSpec NextChip() {
    const uint32_t cores[] = {32, 32, 24, 20, 8};
    return Chip950(cores[Pick(5)]);
  }

 private:
  uint32_t Pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  int64_t Dim() {
    const int64_t dims[] = {1,   2,   7,   16,  17,  32,   48,   64,  96,
                            128, 150, 256, 320, 512, 1000, 2048, 8192};
    return dims[Pick(17)];
  }
  std::mt19937 rng_;
};

void CheckPlan(const MatmulProblem& p, const ChipSpec& chip, const TilingDecision& d,
               const std::vector<std::string>& names) {
  const TilingPlan& plan = d.plan;
  // Trace: the op's strategies in order; the last one is chosen, every
  // earlier one either was not capable or could not tile.
  ASSERT_FALSE(d.trace.empty());
  ASSERT_LE(d.trace.size(), names.size());
  for (size_t i = 0; i < d.trace.size(); ++i) {
    EXPECT_EQ(d.trace[i].strategy, names[i]);
    EXPECT_FALSE(d.trace[i].reason.empty()) << names[i];
    const bool last = i + 1 == d.trace.size();
    EXPECT_EQ(d.trace[i].chosen, last);
    if (!last && d.trace[i].capable) {
      EXPECT_THAT(d.trace[i].reason.str(), ::testing::HasSubstr("its tiling failed"));
    }
  }
  EXPECT_EQ(d.trace.back().strategy, plan.strategy);
  EXPECT_TRUE(d.trace.back().capable);
  EXPECT_EQ(plan.key.layout, KeyLayoutOf(p.op));

  // The plan names its kernel, whose row gives the launch's kernel type.
  EXPECT_NE(plan.data.kernel, KernelId::kUnstructured);
  EXPECT_EQ(plan.kernel_type, KernelTypeOf(plan.data.kernel, plan.key));
  const uint32_t cores = plan.kernel_type == KernelType::kAivOnly ? chip.aiv_num : chip.aic_num;
  EXPECT_GE(plan.block_dim, 1u);
  EXPECT_LE(plan.block_dim, cores);
  if (plan.kernel_type == KernelType::kAivOnly) return;
  // A plan that overflows a buffer is still CANN's answer, with a warning
  // naming that buffer (and only then).
  const std::optional<BufferOverflow> overflow =
      FindBufferOverflow(ComputeCubeBufferDemand(plan, p), chip);
  ASSERT_EQ(plan.warnings.size(), overflow.has_value() ? 1u : 0u);
  if (overflow.has_value()) {
    EXPECT_EQ(plan.warnings[0].buffer, CubeBufferName(overflow->buffer));
    EXPECT_EQ(plan.warnings[0].need_bytes, overflow->need_bytes);
    EXPECT_EQ(plan.warnings[0].have_bytes, overflow->have_bytes);
    EXPECT_THAT(plan.warnings[0].message, ::testing::HasSubstr(" overflows: "));
  }

  const uint64_t a = DataTypeBytes(p.dtype_a), b = DataTypeBytes(p.dtype_b);
  const TilingData& data = plan.data;
  if (data.kernel == KernelId::kBatchCube) {
    const uint64_t bm = *Get(data, BatchBasicField::kBaseM);
    const uint64_t bn = *Get(data, BatchBasicField::kBaseN);
    const uint64_t bk = *Get(data, BatchBasicField::kBaseK);
    EXPECT_LE(bm * bk * a * 2, chip.l0a_bytes);
    EXPECT_LE(bn * bk * b * 2, chip.l0b_bytes);
    EXPECT_LE(bm * bn * 4 * *Get(data, BatchBasicField::kL0cDb), chip.l0c_bytes);
    EXPECT_LE(*Get(data, BatchBasicField::kUsedCoreNum), chip.aic_num);
    EXPECT_EQ(*Get(data, BatchBasicField::kBatchDimAll), DeriveFacts(p).batch_c);
  } else if (data.kernel == KernelId::kBatchIterate) {
    const uint64_t l0 = *Get(data, IterBatchField::kIterBatchL0);
    const uint64_t bm = *Get(data, IterBatchField::kBaseM);
    const uint64_t bn = *Get(data, IterBatchField::kBaseN);
    const uint64_t bk = *Get(data, IterBatchField::kBaseK);
    EXPECT_GE(l0, 1u);
    EXPECT_GE(*Get(data, IterBatchField::kIterBatchL1), 1u);
    EXPECT_LE(l0 * bm * bk * a * 2, chip.l0a_bytes);
    EXPECT_LE(l0 * bn * bk * b * 2, chip.l0b_bytes);
    EXPECT_LE(l0 * bm * bn * 4 * 2, chip.l0c_bytes);
  } else if (data.kernel == KernelId::kBatchMerge) {
    const uint64_t batches = *Get(data, MergeBatchField::kBatchL0);
    const uint64_t bk = *Get(data, MergeBatchField::kBaseK);
    const uint64_t m = *Get(data, MergeBatchField::kM), n = *Get(data, MergeBatchField::kN);
    const uint64_t block_m = p.trans_a ? batches * Align16(m) : Align16(batches * m);
    const uint64_t block_n = batches * Align16(n);
    EXPECT_GE(batches, 1u);
    EXPECT_LE(block_m * bk * a * 2, chip.l0a_bytes);
    EXPECT_LE(block_n * bk * b * 2, chip.l0b_bytes);
    EXPECT_LE(block_m * block_n * 4 * 2, chip.l0c_bytes);
  }
}

void Sweep(MatmulOp op, uint32_t seed, int count, int min_decided) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const std::vector<std::string> names = registry.Names(op);
  BatchProblemSource source(seed);
  int decided = 0;
  for (int i = 0; i < count; ++i) {
    const MatmulProblem p = source.Next(op);
    const ChipSpec chip = source.NextChip();
    absl::StatusOr<TilingDecision> d = registry.Decide(p, chip);
    if (!d.ok()) {
      // Refused inputs and the strategies that need the high-level API's
      // search are the only failures.
      EXPECT_TRUE(d.status().code() == absl::StatusCode::kInvalidArgument ||
                  d.status().code() == absl::StatusCode::kFailedPrecondition)
          << d.status();
      continue;
    }
    ++decided;
    SCOPED_TRACE(::testing::Message()
                 << "m=" << p.m << " n=" << p.n << " k=" << p.k << " " << DataTypeName(p.dtype_a)
                 << " ta=" << p.trans_a << " tb=" << p.trans_b << " bias=" << p.has_bias
                 << " batches=" << p.batch.a.size() << "/" << p.batch.b.size()
                 << " aic=" << chip.aic_num << " -> " << d->plan.strategy);
    CheckPlan(p, chip, *d, names);
  }
  EXPECT_GE(decided, min_decided);
}

// Every combination the API can state, valid or not (k = 0, FRACTAL_NZ B,
// transposed views, every epilogue, batched bias, small chips), gets a plan
// or a refusal: never a crash, a hang or an internal error. CANN's own host
// tiling divides by zero on some of them.
TEST(BatchInvariantsTest, AnyProblemGetsAPlanOrARefusal) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  std::mt19937 rng(31);
  const auto pick = [&rng](uint32_t n) {
    return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng);
  };
  const int64_t dims[] = {0, 1, 2, 15, 16, 17, 64, 150, 256, 1000, 4096};
  const DataType dtypes[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32};
  const FusedOp ops[] = {FusedOp::kNone,    FusedOp::kRelu,     FusedOp::kAdd,       FusedOp::kMul,
                         FusedOp::kGeluErf, FusedOp::kGeluTanh, FusedOp::kCast16To32};
  int decided = 0;
  for (int i = 0; i < 3000; ++i) {
    MatmulProblem p =
        Problem(std::max<int64_t>(1, dims[pick(11)]), std::max<int64_t>(1, dims[pick(11)]),
                dims[pick(11)], dtypes[pick(3)]);
    p.op = pick(2) == 0 ? MatmulOp::kBatchMatMulV3 : MatmulOp::kFusedMatMul;
    p.trans_a = pick(2) == 0;
    p.trans_b = pick(2) == 0;
    p.hf32 = p.dtype_a == DataType::kFloat32 && pick(2) == 0;
    if (pick(4) == 0 && p.dtype_a != DataType::kFloat32) p.format_b = Format::kFractalNz;
    if (pick(3) == 0) p.dtype_c = DataType::kFloat32;
    const int64_t batches[] = {1, 2, 3, 8, 64, 300};
    for (uint32_t r = pick(3); r > 0; --r) p.batch.a.push_back(batches[pick(6)]);
    p.batch.b = p.batch.a;
    if (pick(3) == 0 && !p.batch.b.empty()) p.batch.b.back() = 1;
    if (pick(5) == 0) p.batch.b.clear();
    if (pick(4) == 0) {
      p.has_bias = true;
      p.dtype_bias = pick(2) == 0 ? DataType::kFloat32 : p.dtype_a;
      if (pick(3) == 0 && p.batch.a.size() == 1 && p.batch.a == p.batch.b) {
        p.batch.bias = p.batch.a;
      }
    }
    if (p.op == MatmulOp::kFusedMatMul) {
      p.fused.op = ops[pick(7)];
      if (p.fused.op == FusedOp::kAdd || p.fused.op == FusedOp::kMul) {
        p.fused.inner_precise = static_cast<int>(pick(2));
        if (pick(2) == 0 && p.batch.a.size() == 1 && p.batch.a == p.batch.b) {
          p.fused.x3_shape = {pick(2) == 0 ? 1 : p.batch.a[0], p.m, p.n};
        }
      }
    } else if (p.batch.a.size() == 1 && p.batch.b.size() == 1 && pick(4) == 0) {
      (pick(2) == 0 ? p.batch.a_interleaved : p.batch.b_interleaved) = true;
      p.avoid_tensor_api = pick(2) == 0;
    }
    ChipSpec chip = Chip950(pick(2) == 0 ? 32 : 1 + pick(32));
    if (pick(4) == 0) {
      chip.l1_bytes = 256 * 1024;
      chip.l0a_bytes = chip.l0b_bytes = 32 * 1024;
      chip.bt_bytes = 1024;
    }
    absl::StatusOr<TilingDecision> d = registry.Decide(p, chip);
    SCOPED_TRACE(::testing::Message()
                 << MatmulOpName(p.op) << " m=" << p.m << " n=" << p.n << " k=" << p.k << " "
                 << DataTypeName(p.dtype_a) << " op=" << FusedOpKeyName(p.fused.op));
    if (d.ok()) {
      ++decided;
      continue;
    }
    EXPECT_TRUE(d.status().code() == absl::StatusCode::kInvalidArgument ||
                d.status().code() == absl::StatusCode::kFailedPrecondition)
        << d.status();
  }
  EXPECT_GT(decided, 1000);
}

// k = 0 reaches strategies past K_EQUAL_ZERO (FRACTAL_NZ B, 16cast32, a
// bias), whose formulas divide by per-batch sizes that are then zero; CANN's
// division helper keeps the dividend there, and none may fault.
TEST(BatchInvariantsTest, ZeroKNeverFaults) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const std::vector<std::vector<int64_t>> batches = {{}, {1}, {3}, {40}, {130, 4}, {600}};
  int decided = 0;
  for (MatmulOp op : {MatmulOp::kBatchMatMulV3, MatmulOp::kFusedMatMul}) {
    for (int fused = 0; fused <= 6; ++fused) {
      if (op == MatmulOp::kBatchMatMulV3 && fused > 0) break;
      for (const auto& batch_a : batches) {
        for (const auto& batch_b : {batch_a, std::vector<int64_t>{}}) {
          for (int variant = 0; variant < 8; ++variant) {
            MatmulProblem p = Problem(variant % 2 == 0 ? 78 : 1, variant < 4 ? 71 : 300, 0,
                                      variant % 3 == 0 ? DataType::kBFloat16 : DataType::kFloat16);
            p.op = op;
            p.fused.op = static_cast<FusedOp>(fused);
            if (p.fused.op == FusedOp::kCast16To32) p.dtype_c = DataType::kFloat32;
            p.batch.a = batch_a;
            p.batch.b = batch_b;
            p.trans_a = variant & 1;
            p.trans_b = variant & 2;
            if (variant & 4) p.format_b = Format::kFractalNz;
            if (op == MatmulOp::kBatchMatMulV3 && variant == 7) p.batch.b_interleaved = true;
            for (uint32_t cores : {32u, 4u}) {
              absl::StatusOr<TilingDecision> d = registry.Decide(p, Chip950(cores));
              if (d.ok()) {
                ++decided;
              } else {
                EXPECT_TRUE(d.status().code() == absl::StatusCode::kInvalidArgument ||
                            d.status().code() == absl::StatusCode::kFailedPrecondition)
                    << d.status();
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(decided, 100);
}

TEST(BatchInvariantsTest, BatchMatMulV3Plans) { Sweep(MatmulOp::kBatchMatMulV3, 17, 1500, 900); }

TEST(BatchInvariantsTest, FusedMatMulPlans) { Sweep(MatmulOp::kFusedMatMul, 23, 1500, 900); }

}  // namespace
}  // namespace npu::tiling
