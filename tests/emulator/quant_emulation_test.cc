// Tests of QuantBatchMatmulV3's emulated output (emulator/quant_emulation.h):
// for every strategy the engine reaches with ND operands and every quant mode
// CANN accepts there, the engine's plan is expanded into its schedule, random
// inputs are run through it, and C must lie within the path's bound of the
// fp64 reference (CheckQuantAccuracy()) and within a loose tolerance of an
// independent fp64 evaluation that reads CANN's layouts by itself (the check
// above shares the operand builder with the emulation); int8 -> int32 must
// equal an exact int64 product. Also: C is bit-identical for 1 and 4 threads
// and for a K split into Stream-K slices of the int paths, a schedule that
// misses a tile is refused, the draws are deterministic, and the input
// checks name the tensor. The problems are small (at most a few
// hundred thousand MACs, Stream-K's a few million: its benefit gate wants
// k >= 8192) so that the suite stays fast under the sanitizers.
//
// CUBE_ASW and MIX_BASIC_API_ASW take FRACTAL_NZ weights only (CANN's
// IsCapable, quant_capability.cc), which the emulator does not model: the
// test UnreachableWithNdWeights pins that, forced on ND problems of their
// modes, they decline with "ND weight"; no numeric case runs them.
#include "emulator/quant_emulation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/quant_formats.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/registry.h"
#include "server/tiling/schedule.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::MatmulProblem;
using tiling::Schedule;
using tiling::WorkUnit;

tiling::ChipSpec Chip() { return *tiling::FindPlatform(tiling::kDefaultPlatform); }

// A QuantBatchMatmulV3 problem with x1 `x1`, x2 `x2` and output `y`.
MatmulProblem Quant(int64_t m, int64_t n, int64_t k, DataType x1, DataType x2, DataType y) {
  MatmulProblem p;
  p.op = tiling::MatmulOp::kQuantBatchMatmulV3;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = x1;
  p.dtype_b = x2;
  p.dtype_c = y;
  return p;
}
void SetScale(MatmulProblem& p, DataType dtype, std::vector<int64_t> shape) {
  p.quant.scale = {true, dtype, std::move(shape)};
}
void SetPertoken(MatmulProblem& p, DataType dtype, std::vector<int64_t> shape) {
  p.quant.pertoken = {true, dtype, std::move(shape)};
}
void SetOffset(MatmulProblem& p, std::vector<int64_t> shape) {
  p.quant.offset = {true, DataType::kFloat32, std::move(shape)};
}
void SetBias(MatmulProblem& p, DataType dtype, std::vector<int64_t> shape = {}) {
  p.has_bias = true;
  p.dtype_bias = dtype;
  p.quant.bias_shape = std::move(shape);
}
void SetGroups(MatmulProblem& p, int64_t m, int64_t n, int64_t k) {
  p.quant.group_size_m = m;
  p.quant.group_size_n = n;
  p.quant.group_size_k = k;
}
int64_t Ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }
// MX scales: x1's [m, ceil(k / 64), 2] and x2's [ceil(k / 64), n, 2], each
// transposed with its operand, behind the operand's batch dims.
void SetMx(MatmulProblem& p) {
  const int64_t pairs = Ceil(p.k, 64);
  std::vector<int64_t> x1 = p.batch.a, x2 = p.batch.b;
  for (int64_t d :
       p.trans_a ? std::vector<int64_t>{pairs, p.m, 2} : std::vector<int64_t>{p.m, pairs, 2}) {
    x1.push_back(d);
  }
  for (int64_t d :
       p.trans_b ? std::vector<int64_t>{p.n, pairs, 2} : std::vector<int64_t>{pairs, p.n, 2}) {
    x2.push_back(d);
  }
  SetPertoken(p, DataType::kFloat8E8M0, x1);
  SetScale(p, DataType::kFloat8E8M0, x2);
  // CANN infers k / (2 * ceil(k / 64)) otherwise, which is 32 only when 64
  // divides k.
  SetGroups(p, 1, 1, 32);
}
// Per-block scales (groups group_m x 128 x 128), in the operands'
// orientations behind their batch dims.
void SetPerBlock(MatmulProblem& p, int64_t group_m) {
  SetGroups(p, group_m, 128, 128);
  const int64_t mg = Ceil(p.m, group_m), kg = Ceil(p.k, 128), ng = Ceil(p.n, 128);
  std::vector<int64_t> x1 = p.batch.a, x2 = p.batch.b;
  for (int64_t d : p.trans_a ? std::vector<int64_t>{kg, mg} : std::vector<int64_t>{mg, kg}) {
    x1.push_back(d);
  }
  for (int64_t d : p.trans_b ? std::vector<int64_t>{ng, kg} : std::vector<int64_t>{kg, ng}) {
    x2.push_back(d);
  }
  SetPertoken(p, DataType::kFloat32, x1);
  SetScale(p, DataType::kFloat32, x2);
}

struct QuantRun {
  tiling::TilingPlan plan;
  Schedule schedule;
  Tensors operands;
};

// The engine's plan and schedule for `problem` and random inputs; fails the
// test when the plan is not `strategy`'s.
QuantRun Prepare(const MatmulProblem& problem, const std::string& strategy, uint64_t seed = 7) {
  QuantRun run;
  absl::StatusOr<tiling::TilingDecision> decision =
      tiling::MakeBuiltinRegistry().Decide(problem, Chip(), {});
  EXPECT_THAT(decision.status(), IsOk());
  if (!decision.ok()) return run;
  run.plan = decision->plan;
  EXPECT_EQ(run.plan.strategy, strategy);
  absl::StatusOr<Schedule> schedule = tiling::ExpandSchedule(run.plan, problem, Chip());
  EXPECT_THAT(schedule.status(), IsOk());
  if (schedule.ok()) run.schedule = *std::move(schedule);
  run.operands = RandomQuantInputs(problem, seed);
  EXPECT_THAT(CheckQuantInputs(problem, run.operands), IsOk());
  return run;
}

absl::StatusOr<HostTensor> Compute(const QuantRun& run, const MatmulProblem& problem,
                                   int threads = 2) {
  ThreadPool pool(threads);
  return RunQuantNumerics(run.schedule, problem, run.operands, pool, nullptr);
}

void ExpectAccurate(const MatmulProblem& problem, const QuantRun& run, const HostTensor& c,
                    QuantPath path) {
  absl::StatusOr<QuantAccuracy> accuracy = CheckQuantAccuracy(problem, run.operands, c);
  ASSERT_THAT(accuracy.status(), IsOk());
  EXPECT_TRUE(accuracy->passed) << "max |error| " << accuracy->max_abs_error << ", error / bound "
                                << accuracy->max_error_over_bound << " at C["
                                << accuracy->worst_index << "], path " << accuracy->path_name
                                << ": " << accuracy->bound_rule;
  EXPECT_EQ(accuracy->path, path) << accuracy->path_name;
  EXPECT_EQ(accuracy->unbounded_elements, 0u);
  EXPECT_EQ(accuracy->elements, c.elements());
}

uint64_t Macs(const MatmulProblem& p) {
  uint64_t batch = 1;
  for (int64_t d : tiling::OutputBatchDims(p)) batch *= static_cast<uint64_t>(d);
  return batch * static_cast<uint64_t>(p.m * p.n * p.k);
}

// ---------------------------------------------------------------------------
// Every strategy and quant mode reachable with ND operands.

struct QuantCase {
  std::string name;
  std::string strategy;  // CANN's name of the plan's strategy
  QuantPath path;
  std::function<MatmulProblem()> make;
};

void PrintTo(const QuantCase& c, std::ostream* os) { *os << c.name; }

std::vector<QuantCase> Cases() {
  std::vector<QuantCase> cases;
  auto add = [&](std::string name, std::string strategy, QuantPath path,
                 std::function<MatmulProblem()> make) {
    cases.push_back({std::move(name), std::move(strategy), path, std::move(make)});
  };
  // --- MX_STREAMK: one small tile split along K over the 32 cores.
  add("mx_stream_k_mxfp8", "MX_STREAMK", QuantPath::kMx, [] {
    MatmulProblem p =
        Quant(16, 32, 8192, DataType::kFloat8E4M3, DataType::kFloat8E5M2, DataType::kFloat16);
    SetMx(p);
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("stream_k_int8_per_tensor", "MX_STREAMK", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(16, 32, 8192, DataType::kInt8, DataType::kInt8, DataType::kBFloat16);
    SetScale(p, DataType::kUint64, {1});
    SetBias(p, DataType::kInt32);
    return p;
  });
  add("stream_k_fp8_double_scale_post_bias", "MX_STREAMK", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p =
        Quant(16, 32, 8192, DataType::kFloat8E4M3, DataType::kFloat8E4M3, DataType::kFloat16);
    SetScale(p, DataType::kFloat32, {1});
    SetPertoken(p, DataType::kFloat32, {1});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  // --- MX_BASIC_API_ASW.
  add("mx_basic_mxfp8_odd_k_groups", "MX_BASIC_API_ASW", QuantPath::kMx, [] {
    MatmulProblem p =
        Quant(48, 64, 96, DataType::kFloat8E4M3, DataType::kFloat8E5M2, DataType::kBFloat16);
    SetMx(p);
    return p;
  });
  add("mx_basic_mxfp4_trans_b_bias", "MX_BASIC_API_ASW", QuantPath::kMx, [] {
    MatmulProblem p =
        Quant(32, 64, 128, DataType::kFloat4E2M1, DataType::kFloat4E2M1, DataType::kFloat16);
    p.trans_b = true;
    SetMx(p);
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("mx_basic_mxfp8_batch_trans_a", "MX_BASIC_API_ASW", QuantPath::kMx, [] {
    MatmulProblem p =
        Quant(32, 48, 64, DataType::kFloat8E5M2, DataType::kFloat8E5M2, DataType::kFloat32);
    p.trans_a = true;
    p.batch.a = p.batch.b = {2};
    SetMx(p);
    return p;
  });
  // --- CUBE_BASIC_API_ASW: the fixpipe dequantises.
  add("cube_int8_per_tensor", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(96, 80, 64, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
    SetScale(p, DataType::kUint64, {1});
    return p;
  });
  add("cube_int8_per_channel_int8_out_offset", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(64, 96, 48, DataType::kInt8, DataType::kInt8, DataType::kInt8);
    p.trans_b = true;
    SetScale(p, DataType::kInt64, {96});
    SetOffset(p, {96});
    SetBias(p, DataType::kInt32);
    return p;
  });
  add("cube_int8_float_scale_bf16_trans_a", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(48, 64, 80, DataType::kInt8, DataType::kInt8, DataType::kBFloat16);
    p.trans_a = true;
    SetScale(p, DataType::kBFloat16, {1});
    SetBias(p, DataType::kInt32);
    return p;
  });
  add("cube_int8_fp32_scale_bf16", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(64, 48, 80, DataType::kInt8, DataType::kInt8, DataType::kBFloat16);
    SetScale(p, DataType::kFloat32, {1});
    SetBias(p, DataType::kInt32);
    return p;
  });
  add("cube_int4_per_tensor", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(64, 64, 96, DataType::kInt4, DataType::kInt4, DataType::kFloat16);
    SetScale(p, DataType::kUint64, {1});
    return p;
  });
  add("cube_fp8_per_tensor_bias", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p =
        Quant(64, 72, 96, DataType::kFloat8E4M3, DataType::kFloat8E4M3, DataType::kBFloat16);
    SetScale(p, DataType::kUint64, {1});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("cube_e5m2_per_channel_fp32_out", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p =
        Quant(40, 64, 64, DataType::kFloat8E5M2, DataType::kFloat8E4M3, DataType::kFloat32);
    p.trans_b = true;
    SetScale(p, DataType::kUint64, {64});
    return p;
  });
  add("cube_hif8_per_tensor", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p =
        Quant(64, 64, 64, DataType::kHiFloat8, DataType::kHiFloat8, DataType::kFloat16);
    SetScale(p, DataType::kUint64, {1});
    return p;
  });
  add("cube_fp8_double_scale", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p =
        Quant(64, 48, 96, DataType::kFloat8E4M3, DataType::kFloat8E5M2, DataType::kFloat16);
    SetScale(p, DataType::kFloat32, {1});
    SetPertoken(p, DataType::kFloat32, {1});
    return p;
  });
  add("cube_int8_int32_out", "CUBE_BASIC_API_ASW", QuantPath::kInt32Output, [] {
    MatmulProblem p = Quant(64, 48, 96, DataType::kInt8, DataType::kInt8, DataType::kInt32);
    SetScale(p, DataType::kFloat32, {1});
    SetBias(p, DataType::kInt32);
    return p;
  });
  add("cube_int8_batch_broadcast_bias_per_batch", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(40, 48, 64, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
    p.batch.a = {3};
    p.batch.b = {1};
    SetScale(p, DataType::kUint64, {48});
    SetBias(p, DataType::kInt32, {3, 1, 48});
    return p;
  });
  add("cube_int8_batch_folded_into_m", "CUBE_BASIC_API_ASW", QuantPath::kFixpipe, [] {
    MatmulProblem p = Quant(36, 64, 64, DataType::kInt8, DataType::kInt8, DataType::kBFloat16);
    p.batch.a = {3};
    SetScale(p, DataType::kUint64, {1});
    return p;
  });
  // --- MIX_ASW: the vector cores dequantise.
  add("mix_int8_per_token_per_channel_fp16_bias", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p = Quant(64, 80, 64, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
    SetScale(p, DataType::kFloat32, {80});
    SetPertoken(p, DataType::kFloat32, {64});
    SetBias(p, DataType::kFloat16);
    return p;
  });
  add("mix_int8_bf16_per_channel_bf16_bias", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p = Quant(48, 64, 96, DataType::kInt8, DataType::kInt8, DataType::kBFloat16);
    p.trans_b = true;
    SetScale(p, DataType::kBFloat16, {64});
    SetBias(p, DataType::kBFloat16);
    return p;
  });
  add("mix_fp8_per_token_trans_a", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p =
        Quant(48, 64, 64, DataType::kFloat8E4M3, DataType::kFloat8E4M3, DataType::kBFloat16);
    p.trans_a = true;
    SetScale(p, DataType::kFloat32, {1});
    SetPertoken(p, DataType::kFloat32, {48});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("mix_hif8_double_scale_float_bias", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p =
        Quant(64, 48, 64, DataType::kHiFloat8, DataType::kHiFloat8, DataType::kFloat32);
    SetScale(p, DataType::kFloat32, {1});
    SetPertoken(p, DataType::kFloat32, {1});
    SetBias(p, DataType::kFloat32);
    return p;
  });
  add("mix_int4_per_token", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p = Quant(32, 64, 128, DataType::kInt4, DataType::kInt4, DataType::kBFloat16);
    SetScale(p, DataType::kFloat32, {64});
    SetPertoken(p, DataType::kFloat32, {32});
    return p;
  });
  add("mix_int8_per_token_unfolded_batch", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p = Quant(24, 64, 64, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
    p.batch.a = {3};
    SetScale(p, DataType::kFloat32, {64});
    SetPertoken(p, DataType::kFloat32, {24});
    return p;
  });
  // Units of one column (row) of a per-channel (per-token) scale: the
  // kernel's tail tiles of n = 257 (m = 257).
  add("mix_int8_per_channel_one_column_unit", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p = Quant(17, 257, 64, DataType::kInt8, DataType::kInt8, DataType::kBFloat16);
    SetScale(p, DataType::kFloat32, {257});
    return p;
  });
  add("mix_fp8_per_token_one_row_unit", "MIX_ASW", QuantPath::kVectorEpilogue, [] {
    MatmulProblem p =
        Quant(257, 33, 32, DataType::kFloat8E4M3, DataType::kFloat8E4M3, DataType::kFloat16);
    SetScale(p, DataType::kFloat32, {1});
    SetPertoken(p, DataType::kFloat32, {257});
    return p;
  });
  // --- PERBLOCK_BASIC_API_ASW: (1 or 128) x 128 x 128 groups.
  add("perblock_fp8_two_groups_each_way", "PERBLOCK_BASIC_API_ASW", QuantPath::kPerBlock, [] {
    MatmulProblem p =
        Quant(24, 136, 160, DataType::kFloat8E4M3, DataType::kFloat8E4M3, DataType::kBFloat16);
    SetPerBlock(p, 128);
    return p;
  });
  add("pertile_e5m2_trans_b", "PERBLOCK_BASIC_API_ASW", QuantPath::kPerBlock, [] {
    MatmulProblem p =
        Quant(20, 136, 144, DataType::kFloat8E5M2, DataType::kFloat8E5M2, DataType::kFloat32);
    p.trans_b = true;
    SetPerBlock(p, 1);
    return p;
  });
  add("perblock_hif8_batch_trans_a", "PERBLOCK_BASIC_API_ASW", QuantPath::kPerBlock, [] {
    MatmulProblem p =
        Quant(16, 72, 136, DataType::kHiFloat8, DataType::kHiFloat8, DataType::kFloat16);
    p.trans_a = true;
    p.batch.a = p.batch.b = {2};
    SetPerBlock(p, 128);
    return p;
  });
  return cases;
}

class QuantEmulationTest : public ::testing::TestWithParam<QuantCase> {};

TEST_P(QuantEmulationTest, WithinTheBoundOfTheReference) {
  const MatmulProblem problem = GetParam().make();
  EXPECT_LE(Macs(problem), uint64_t{5} << 20);
  const QuantRun run = Prepare(problem, GetParam().strategy);
  ASSERT_FALSE(HasFailure());
  EXPECT_THAT(tiling::CheckScheduleCoverage(run.schedule, problem), IsOk());
  absl::StatusOr<HostTensor> c = Compute(run, problem);
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->dtype, problem.dtype_c);
  EXPECT_EQ(c->shape, ShapesOf(problem).c);
  ExpectAccurate(problem, run, *c, GetParam().path);
}

INSTANTIATE_TEST_SUITE_P(Strategies, QuantEmulationTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<QuantCase>& info) {
                           return info.param.name;
                         });

// The Stream-K cases really split K, and the MX slices start on a K group.
TEST(QuantEmulationStreamKTest, SlicesAreMxGroupAligned) {
  for (const QuantCase& c : Cases()) {
    if (c.strategy != "MX_STREAMK") continue;
    const MatmulProblem problem = c.make();
    const QuantRun run = Prepare(problem, c.strategy);
    ASSERT_FALSE(HasFailure()) << c.name;
    int partials = 0;
    for (const WorkUnit& unit : run.schedule.units) {
      if (!unit.writes_partial) continue;
      ++partials;
      EXPECT_EQ(unit.k.begin % kMxGroupSize, 0u) << c.name;
    }
    EXPECT_GT(partials, 1) << c.name;
    EXPECT_FALSE(run.schedule.reductions.empty()) << c.name;
  }
}

// ---------------------------------------------------------------------------
// An independent reference: the same product evaluated straight from CANN's
// tensor layouts (indexing each tensor by its own shape), in fp64, without
// quant_emulation.cc's operand builder, so that a misread layout (a scale's
// orientation, a batch, an MX pair) shows up even though CheckQuantAccuracy()
// reads the layouts through that builder.

// Element `index` (one per dim) of `tensor` read by its own shape.
uint64_t FlatIndex(const HostTensor& tensor, const std::vector<uint64_t>& index) {
  EXPECT_EQ(index.size(), tensor.shape.size());
  uint64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    EXPECT_LT(index[d], static_cast<uint64_t>(tensor.shape[d]));
    flat = flat * static_cast<uint64_t>(tensor.shape[d]) + index[d];
  }
  return flat;
}

// `prefix` (the batch multi-index) followed by `rest`.
std::vector<uint64_t> Index(std::vector<uint64_t> prefix, std::vector<uint64_t> rest) {
  prefix.insert(prefix.end(), rest.begin(), rest.end());
  return prefix;
}

// The multi-index into `dims` (an operand's batch dims) of C batch `c`
// (NumPy broadcast: C's multi-index right-aligned, 0 where the dim is 1).
std::vector<uint64_t> BatchIndex(const std::vector<int64_t>& dims,
                                 const std::vector<int64_t>& c_dims, uint64_t c) {
  std::vector<uint64_t> c_index(c_dims.size());
  for (size_t d = c_dims.size(); d-- > 0;) {
    c_index[d] = c % static_cast<uint64_t>(c_dims[d]);
    c /= static_cast<uint64_t>(c_dims[d]);
  }
  std::vector<uint64_t> index(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    index[d] = dims[d] == 1 ? 0 : c_index[c_index.size() - dims.size() + d];
  }
  return index;
}

struct Reference {
  std::vector<double> value, tolerance;
};

Reference IndependentReference(const MatmulProblem& p, const Tensors& t) {
  const uint64_t m = p.m, n = p.n, k = p.k;
  const std::vector<int64_t> c_dims = tiling::OutputBatchDims(p);
  uint64_t batches = 1;
  for (int64_t d : c_dims) batches *= static_cast<uint64_t>(d);
  const HostTensor& scale = *t.scale;
  const std::optional<HostTensor>& pertoken = t.pertoken_scale;
  const bool mx = scale.dtype == DataType::kFloat8E8M0;
  const bool per_block = !mx && pertoken.has_value() && pertoken->shape.size() >= 2;
  const bool packed = scale.dtype == DataType::kUint64 || scale.dtype == DataType::kInt64;
  const auto scale_value = [&](uint64_t index) -> double {
    if (!packed) return scale.Get(index);
    uint64_t word;
    std::memcpy(&word, scale.bytes.data() + 8 * index, 8);
    return FixpipeScaleValue(word);
  };
  const auto e8m0 = [](const HostTensor& tensor, uint64_t index) {
    return std::ldexp(1.0, static_cast<int>(tensor.bytes[index]) - 127);
  };
  const uint64_t group_k = mx ? 32 : per_block ? 128 : k;  // K per scale group
  std::vector<double> group_sum((k + group_k - 1) / group_k), group_abs(group_sum.size());
  Reference ref;
  for (uint64_t c = 0; c < batches; ++c) {
    const std::vector<uint64_t> a_batch = BatchIndex(p.batch.a, c_dims, c);
    const std::vector<uint64_t> b_batch = BatchIndex(p.batch.b, c_dims, c);
    // This batch's x1 [m, k] and x2 [k, n], decoded.
    std::vector<double> x1(m * k), x2(k * n);
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t kk = 0; kk < k; ++kk) {
        const uint64_t flat =
            FlatIndex(t.a, Index(a_batch, p.trans_a ? std::vector<uint64_t>{kk, i}
                                                    : std::vector<uint64_t>{i, kk}));
        x1[i * k + kk] = DecodeQuant(p.dtype_a, GetQuantCode(p.dtype_a, t.a.bytes, flat));
      }
    }
    for (uint64_t kk = 0; kk < k; ++kk) {
      for (uint64_t j = 0; j < n; ++j) {
        const uint64_t flat =
            FlatIndex(t.b, Index(b_batch, p.trans_b ? std::vector<uint64_t>{j, kk}
                                                    : std::vector<uint64_t>{kk, j}));
        x2[kk * n + j] = DecodeQuant(p.dtype_b, GetQuantCode(p.dtype_b, t.b.bytes, flat));
      }
    }
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t j = 0; j < n; ++j) {
        double value = 0, magnitude = 0;
        std::fill(group_sum.begin(), group_sum.end(), 0.0);
        std::fill(group_abs.begin(), group_abs.end(), 0.0);
        for (uint64_t kk = 0; kk < k; ++kk) {
          const double product = x1[i * k + kk] * x2[kk * n + j];
          group_sum[kk / group_k] += product;
          group_abs[kk / group_k] += std::fabs(product);
        }
        double bias = 0;
        if (t.bias) {
          const uint64_t row = t.bias->shape.size() == 3 ? c : 0;
          const std::vector<uint64_t> index = t.bias->shape.size() == 3
                                                  ? std::vector<uint64_t>{row, 0, j}
                                                  : std::vector<uint64_t>{j};
          const uint64_t flat = FlatIndex(*t.bias, index);
          if (t.bias->dtype == DataType::kInt32) {
            int32_t code;
            std::memcpy(&code, t.bias->bytes.data() + 4 * flat, 4);
            bias = code;
          } else {
            bias = t.bias->Get(flat);
          }
        }
        if (mx) {
          for (uint64_t g = 0; g < group_sum.size(); ++g) {
            const double s1 =
                e8m0(*pertoken,
                     FlatIndex(*pertoken,
                               Index(a_batch, p.trans_a ? std::vector<uint64_t>{g / 2, i, g % 2}
                                                        : std::vector<uint64_t>{i, g / 2, g % 2})));
            const double s2 = e8m0(
                scale, FlatIndex(scale, Index(b_batch,
                                              p.trans_b ? std::vector<uint64_t>{j, g / 2, g % 2}
                                                        : std::vector<uint64_t>{g / 2, j, g % 2})));
            value += s1 * s2 * group_sum[g];
            magnitude += s1 * s2 * group_abs[g];
          }
          value += bias;
          magnitude += std::fabs(bias);
        } else if (per_block) {
          const uint64_t group_m = static_cast<uint64_t>(p.quant.group_size_m);
          for (uint64_t g = 0; g < group_sum.size(); ++g) {
            const double s1 = pertoken->Get(FlatIndex(
                *pertoken, Index(a_batch, p.trans_a ? std::vector<uint64_t>{g, i / group_m}
                                                    : std::vector<uint64_t>{i / group_m, g})));
            const double s2 = scale.Get(
                FlatIndex(scale, Index(b_batch, p.trans_b ? std::vector<uint64_t>{j / 128, g}
                                                          : std::vector<uint64_t>{g, j / 128})));
            value += s1 * s2 * group_sum[g];
            magnitude += std::fabs(s1 * s2) * group_abs[g];
          }
        } else {
          const double s2 = scale_value(scale.elements() == 1 ? 0 : j);
          const double s1 = !pertoken ? 1.0 : pertoken->Get(pertoken->elements() == 1 ? 0 : i);
          // int32 biases and float biases under a fixpipe word go into L0C,
          // the other float biases come after the dequantisation.
          const bool bias_first = t.bias && (t.bias->dtype == DataType::kInt32 || packed);
          const double acc = group_sum[0] + (bias_first ? bias : 0.0);
          if (p.dtype_c == DataType::kInt32) {
            value = acc;
          } else {
            value = acc * s2 * s1 + (bias_first ? 0.0 : bias);
          }
          magnitude = (group_abs[0] + std::fabs(bias)) * std::fabs(s2 * s1) + std::fabs(bias);
          if (p.dtype_c == DataType::kInt8) {
            const double offset =
                !t.offset ? 0.0 : t.offset->Get(t.offset->elements() == 1 ? 0 : j);
            value = std::clamp(std::clamp(std::nearbyint(value), -256.0, 255.0) + offset, -128.0,
                               127.0);
          }
        }
        ref.value.push_back(value);
        // int32 exact; int8 one step (a tie moved by the fp19 scale); the
        // float outputs: the fp19 scale (2^-10), the fp32 sums and the cast
        // are far inside 2^-8 of the computation's size.
        ref.tolerance.push_back(p.dtype_c == DataType::kInt32 ? 0.0
                                : p.dtype_c == DataType::kInt8
                                    ? 1.0
                                    : 0x1p-8 * (std::fabs(value) + magnitude));
      }
    }
  }
  return ref;
}

double LoadC(const HostTensor& c, uint64_t index) {
  if (c.dtype == DataType::kInt32) {
    int32_t value;
    std::memcpy(&value, c.bytes.data() + 4 * index, 4);
    return value;
  }
  if (c.dtype == DataType::kInt8) return static_cast<int8_t>(c.bytes[index]);
  return c.Get(index);
}

TEST_P(QuantEmulationTest, MatchesAnIndependentReference) {
  const MatmulProblem problem = GetParam().make();
  const QuantRun run = Prepare(problem, GetParam().strategy, 3);
  ASSERT_FALSE(HasFailure());
  absl::StatusOr<HostTensor> c = Compute(run, problem);
  ASSERT_THAT(c.status(), IsOk());
  const Reference ref = IndependentReference(problem, run.operands);
  ASSERT_EQ(ref.value.size(), c->elements());
  uint64_t worst = 0;
  double worst_ratio = 0;
  for (uint64_t i = 0; i < ref.value.size(); ++i) {
    const double error = std::fabs(LoadC(*c, i) - ref.value[i]);
    const double ratio = error == 0 ? 0 : error / ref.tolerance[i];
    if (!(ratio <= worst_ratio)) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  EXPECT_LE(worst_ratio, 1.0) << "C[" << worst << "] = " << LoadC(*c, worst) << ", reference "
                              << ref.value[worst] << " +- " << ref.tolerance[worst];
}

// ---------------------------------------------------------------------------
// int8 -> int32: the exact integer product.

TEST(QuantEmulationTest, Int8ToInt32IsTheExactIntegerProduct) {
  MatmulProblem problem = Quant(40, 56, 72, DataType::kInt8, DataType::kInt8, DataType::kInt32);
  problem.trans_a = problem.trans_b = true;
  problem.batch.a = problem.batch.b = {2};
  SetScale(problem, DataType::kUint64, {56});
  SetBias(problem, DataType::kInt32, {2, 1, 56});
  const QuantRun run = Prepare(problem, "CUBE_BASIC_API_ASW");
  ASSERT_FALSE(HasFailure());
  absl::StatusOr<HostTensor> c = Compute(run, problem);
  ASSERT_THAT(c.status(), IsOk());
  ExpectAccurate(problem, run, *c, QuantPath::kInt32Output);

  const int64_t m = problem.m, n = problem.n, k = problem.k;
  const auto code = [](const HostTensor& t, int64_t index) {
    return static_cast<int64_t>(DecodeQuant(DataType::kInt8, t.bytes[index]));
  };
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int32_t bias;
        std::memcpy(&bias, run.operands.bias->bytes.data() + 4 * (b * n + j), 4);
        int64_t sum = bias;
        for (int64_t p = 0; p < k; ++p) {
          sum += code(run.operands.a, b * m * k + p * m + i) *  // x1 stored [k, m]
                 code(run.operands.b, b * k * n + j * k + p);   // x2 stored [n, k]
        }
        int32_t device;
        std::memcpy(&device, c->bytes.data() + 4 * ((b * m + i) * n + j), 4);
        ASSERT_EQ(device, sum) << "batch " << b << " (" << i << ", " << j << ")";
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Determinism.

TEST(QuantEmulationTest, BitIdenticalForOneAndFourThreads) {
  for (const QuantCase& c : Cases()) {
    if (c.name != "mx_stream_k_mxfp8" && c.name != "mix_int8_per_token_per_channel_fp16_bias" &&
        c.name != "perblock_hif8_batch_trans_a") {
      continue;
    }
    const MatmulProblem problem = c.make();
    const QuantRun run = Prepare(problem, c.strategy);
    ASSERT_FALSE(HasFailure()) << c.name;
    absl::StatusOr<HostTensor> one = Compute(run, problem, 1);
    absl::StatusOr<HostTensor> four = Compute(run, problem, 4);
    ASSERT_THAT(one.status(), IsOk());
    ASSERT_THAT(four.status(), IsOk());
    EXPECT_EQ(one->bytes, four->bytes) << c.name;
  }
}

// FNV-1a of every byte RandomQuantInputs() gives.
uint64_t Fingerprint(const Tensors& t) {
  uint64_t hash = 0xCBF29CE484222325ull;
  auto add = [&](const HostTensor& tensor) {
    for (uint8_t byte : tensor.bytes) hash = (hash ^ byte) * 0x100000001B3ull;
  };
  add(t.a);
  add(t.b);
  if (t.bias) add(*t.bias);
  if (t.scale) add(*t.scale);
  if (t.pertoken_scale) add(*t.pertoken_scale);
  if (t.offset) add(*t.offset);
  return hash;
}

TEST(QuantEmulationTest, DrawsAreDeterministic) {
  for (const QuantCase& c : Cases()) {
    const MatmulProblem problem = c.make();
    const Tensors first = RandomQuantInputs(problem, 11);
    const Tensors second = RandomQuantInputs(problem, 11);
    const Tensors other = RandomQuantInputs(problem, 12);
    EXPECT_EQ(Fingerprint(first), Fingerprint(second)) << c.name;
    EXPECT_NE(Fingerprint(first), Fingerprint(other)) << c.name;
    EXPECT_THAT(CheckQuantInputs(problem, first), IsOk()) << c.name;
  }
}

// The same draws on every platform: splitmix64, integer arithmetic and
// exactly rounded double operations only. The value pins this tree's draws.
TEST(QuantEmulationTest, DrawsArePinned) {
  MatmulProblem problem =
      Quant(8, 16, 64, DataType::kFloat8E4M3, DataType::kFloat8E4M3, DataType::kBFloat16);
  SetPerBlock(problem, 1);
  const Tensors operands = RandomQuantInputs(problem, 2026);
  EXPECT_EQ(Fingerprint(operands), 0xE830D96EF19D0AB6ull);
}

// ---------------------------------------------------------------------------
// Stream-K slices of a data-parallel schedule.

// `schedule` with unit `index` (a cube unit writing C) cut at K `k_mid` into
// two slices that write workspace partials, and an AIV unit that reduces them.
Schedule SplitAlongK(Schedule s, size_t index, uint64_t k_mid) {
  const WorkUnit unit = s.units[index];
  tiling::ReductionGroup group;
  group.m = unit.m;
  group.n = unit.n;
  group.slots = {s.workspace_slots, s.workspace_slots + 1};
  group.workspace_row_stride = unit.n.size();
  const auto reduction = static_cast<int32_t>(s.reductions.size());
  s.reductions.push_back(group);
  WorkUnit first = unit, second = unit;
  first.k = {unit.k.begin, k_mid};
  second.k = {k_mid, unit.k.end};
  for (WorkUnit* slice : {&first, &second}) {
    slice->writes_partial = true;
    slice->reduction = reduction;
  }
  first.workspace_slot = group.slots[0];
  second.workspace_slot = group.slots[1];
  second.k_slice = 1;
  s.workspace_slots += 2;
  s.units[index] = first;
  s.units.insert(s.units.begin() + static_cast<std::ptrdiff_t>(index) + 1, second);
  WorkUnit reduce;
  reduce.core_kind = tiling::CoreKind::kAiv;
  reduce.op = tiling::UnitOp::kReduce;
  reduce.m = unit.m;
  reduce.n = unit.n;
  reduce.reduction = reduction;
  reduce.batch = unit.batch;
  s.units.push_back(reduce);
  return s;
}

// The first cube unit of a schedule.
size_t FirstCubeUnit(const Schedule& s) {
  for (size_t i = 0; i < s.units.size(); ++i) {
    if (s.units[i].op == tiling::UnitOp::kMmad) return i;
  }
  return 0;
}

TEST(QuantEmulationStreamKTest, IntegerSlicesGiveTheSameC) {
  // int32 sums are associative: every int path gives the same bits.
  for (const std::string name :
       {"cube_int8_per_tensor", "cube_int8_per_channel_int8_out_offset",
        "cube_int8_fp32_scale_bf16", "cube_int4_per_tensor", "cube_int8_int32_out",
        "mix_int8_per_token_per_channel_fp16_bias", "mix_int8_bf16_per_channel_bf16_bias"}) {
    for (const QuantCase& c : Cases()) {
      if (c.name != name) continue;
      const MatmulProblem problem = c.make();
      QuantRun run = Prepare(problem, c.strategy);
      ASSERT_FALSE(HasFailure()) << name;
      absl::StatusOr<HostTensor> whole = Compute(run, problem);
      ASSERT_THAT(whole.status(), IsOk()) << name;
      run.schedule = SplitAlongK(run.schedule, FirstCubeUnit(run.schedule),
                                 static_cast<uint64_t>(problem.k) / 2);
      ASSERT_THAT(tiling::CheckScheduleCoverage(run.schedule, problem), IsOk()) << name;
      absl::StatusOr<HostTensor> split = Compute(run, problem);
      ASSERT_THAT(split.status(), IsOk()) << name;
      EXPECT_EQ(whole->bytes, split->bytes) << name;
    }
  }
}

TEST(QuantEmulationStreamKTest, FloatSlicesStayWithinTheBound) {
  for (const std::string name :
       {"cube_fp8_per_tensor_bias", "mix_fp8_per_token_trans_a", "mx_basic_mxfp8_odd_k_groups",
        "perblock_fp8_two_groups_each_way"}) {
    for (const QuantCase& c : Cases()) {
      if (c.name != name) continue;
      const MatmulProblem problem = c.make();
      QuantRun run = Prepare(problem, c.strategy);
      ASSERT_FALSE(HasFailure()) << name;
      // A K group boundary (per-block: 128; MX: 32).
      const uint64_t k_mid = c.path == QuantPath::kPerBlock ? 128 : 32;
      run.schedule = SplitAlongK(run.schedule, FirstCubeUnit(run.schedule), k_mid);
      absl::StatusOr<HostTensor> split = Compute(run, problem);
      ASSERT_THAT(split.status(), IsOk()) << name;
      ExpectAccurate(problem, run, *split, c.path);
    }
  }
}

TEST(QuantEmulationStreamKTest, SliceInsideAnMxGroupIsRefused) {
  MatmulProblem problem =
      Quant(48, 64, 96, DataType::kFloat8E4M3, DataType::kFloat8E5M2, DataType::kBFloat16);
  SetMx(problem);
  QuantRun run = Prepare(problem, "MX_BASIC_API_ASW");
  ASSERT_FALSE(HasFailure());
  run.schedule = SplitAlongK(run.schedule, FirstCubeUnit(run.schedule), 48);
  EXPECT_THAT(Compute(run, problem).status(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("inside a K group of 32")));
}

// ---------------------------------------------------------------------------
// Schedules and inputs that do not fit.

TEST(QuantEmulationTest, MissingTileIsReported) {
  MatmulProblem p = Quant(96, 80, 64, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
  SetScale(p, DataType::kUint64, {1});
  QuantRun run = Prepare(p, "CUBE_BASIC_API_ASW");
  ASSERT_FALSE(HasFailure());
  ASSERT_GT(run.schedule.units.size(), 1u);
  run.schedule.units.erase(run.schedule.units.begin() +
                           static_cast<std::ptrdiff_t>(run.schedule.units.size() / 2));
  EXPECT_THAT(Compute(run, p).status(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("does not cover C")));
}

TEST(QuantEmulationTest, WrongScaleShapeNamesTheScale) {
  MatmulProblem problem = Quant(16, 8, 32, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
  SetScale(problem, DataType::kUint64, {8});
  Tensors operands = RandomQuantInputs(problem, 1);
  ASSERT_THAT(CheckQuantInputs(problem, operands), IsOk());
  operands.scale->shape = {7};
  operands.scale->bytes.resize(7 * 8);
  EXPECT_THAT(CheckQuantInputs(problem, operands),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("scale: shape [7], expected [8] (problem.quant.scale.shape)")));
  Schedule schedule;
  ThreadPool pool(1);
  EXPECT_THAT(RunQuantNumerics(schedule, problem, operands, pool, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("scale")));
}

TEST(QuantEmulationTest, InputChecksNameTheTensor) {
  MatmulProblem problem = Quant(16, 8, 32, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
  SetScale(problem, DataType::kFloat32, {8});
  SetPertoken(problem, DataType::kFloat32, {16});
  const Tensors operands = RandomQuantInputs(problem, 1);
  ASSERT_THAT(CheckQuantInputs(problem, operands), IsOk());

  Tensors no_pertoken = operands;
  no_pertoken.pertoken_scale.reset();
  EXPECT_THAT(CheckQuantInputs(problem, no_pertoken),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pertoken: missing")));
  Tensors no_scale = operands;
  no_scale.scale.reset();
  EXPECT_THAT(CheckQuantInputs(problem, no_scale),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("scale: required (problem.quant.scale)")));
  Tensors with_offset = operands;
  with_offset.offset = HostTensor::Zeros(DataType::kFloat32, {8});
  EXPECT_THAT(CheckQuantInputs(problem, with_offset),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("offset: given")));
  Tensors bad_x1 = operands;
  bad_x1.a.dtype = DataType::kInt4;
  EXPECT_THAT(CheckQuantInputs(problem, bad_x1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x1: dtype int4")));
  Tensors with_bias = operands;
  with_bias.bias = HostTensor::Zeros(DataType::kInt32, {8});
  EXPECT_THAT(CheckQuantInputs(problem, with_bias),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bias: given")));
  Tensors short_x2 = operands;
  short_x2.b.bytes.pop_back();
  EXPECT_THAT(CheckQuantInputs(problem, short_x2),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x2: 255 bytes")));
  // The problem itself goes through CANN's parse.
  MatmulProblem bad_problem = problem;
  bad_problem.quant.scale.shape = {7};
  EXPECT_THAT(CheckQuantInputs(bad_problem, operands),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("quant.scale")));
}

TEST(QuantEmulationTest, NzWeightTakesItsValuesInTheNdLayout) {
  MatmulProblem problem = Quant(16, 64, 64, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
  SetScale(problem, DataType::kUint64, {1});
  const Tensors operands = RandomQuantInputs(problem, 1);
  problem.format_b = tiling::Format::kFractalNz;
  problem.storage_shape_b = {2, 4, 16, 32};  // [n / 32, k / 16, 16, 32]
  EXPECT_THAT(CheckQuantInputs(problem, operands), IsOk());
  // Only x2 may be NZ.
  problem.format_a = tiling::Format::kFractalNz;
  EXPECT_THAT(CheckQuantInputs(problem, operands),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("format_a")));
}

TEST(QuantEmulationTest, CancelledBeforeTheFirstUnit) {
  MatmulProblem problem = Quant(96, 80, 64, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
  SetScale(problem, DataType::kUint64, {1});
  const QuantRun run = Prepare(problem, "CUBE_BASIC_API_ASW");
  ASSERT_FALSE(HasFailure());
  const std::atomic<bool> cancelled{true};
  ThreadPool pool(2);
  EXPECT_THAT(RunQuantNumerics(run.schedule, problem, run.operands, pool, &cancelled).status(),
              StatusIs(absl::StatusCode::kCancelled));
}

TEST(QuantEmulationTest, AccuracyCheckCatchesAWrongElement) {
  MatmulProblem problem = Quant(32, 48, 64, DataType::kInt8, DataType::kInt8, DataType::kInt32);
  SetScale(problem, DataType::kUint64, {1});
  const QuantRun run = Prepare(problem, "CUBE_BASIC_API_ASW");
  ASSERT_FALSE(HasFailure());
  absl::StatusOr<HostTensor> c = Compute(run, problem);
  ASSERT_THAT(c.status(), IsOk());
  c->bytes[4 * 100] ^= 1;  // element 100 off by one
  absl::StatusOr<QuantAccuracy> accuracy = CheckQuantAccuracy(problem, run.operands, *c);
  ASSERT_THAT(accuracy.status(), IsOk());
  EXPECT_FALSE(accuracy->passed);
  EXPECT_EQ(accuracy->worst_index, 100u);
  EXPECT_EQ(accuracy->max_abs_error, 1.0);
  EXPECT_EQ(accuracy->path_name, "int32_output");
}

// ---------------------------------------------------------------------------
// The strategies ND operands cannot reach.

TEST(QuantEmulationTest, UnreachableWithNdWeights) {
  // CUBE_ASW: pure-cube dequant; MIX_BASIC_API_ASW: vector dequant with the
  // Tensor API's dtypes. Both decline for an ND weight, whatever the runtime.
  struct Unreachable {
    std::string strategy;
    MatmulProblem problem;
  };
  std::vector<Unreachable> cases;
  {
    MatmulProblem p = Quant(256, 2048, 1024, DataType::kInt8, DataType::kInt8, DataType::kFloat16);
    SetScale(p, DataType::kUint64, {2048});
    for (bool tensor_api : {true, false}) {
      p.quant.tensor_api = tensor_api;
      cases.push_back({"CUBE_ASW", p});
    }
  }
  {
    MatmulProblem p = Quant(128, 4096, 256, DataType::kInt8, DataType::kInt8, DataType::kBFloat16);
    SetScale(p, DataType::kFloat32, {4096});
    SetPertoken(p, DataType::kFloat32, {128});
    SetBias(p, DataType::kFloat32);
    cases.push_back({"MIX_BASIC_API_ASW", p});
  }
  for (const Unreachable& c : cases) {
    // Unforced, another strategy answers; forced, the strategy declines.
    absl::StatusOr<tiling::TilingDecision> decision =
        tiling::MakeBuiltinRegistry().Decide(c.problem, Chip(), {});
    ASSERT_THAT(decision.status(), IsOk());
    EXPECT_NE(decision->plan.strategy, c.strategy);
    tiling::DecideOptions forced;
    forced.forced_strategy = c.strategy;
    EXPECT_THAT(tiling::MakeBuiltinRegistry().Decide(c.problem, Chip(), forced).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("ND weight")))
        << c.strategy;
  }
}

}  // namespace
}  // namespace npu::emu
