// GroupedMatmul on the emulator (emulator/grouped_emulation.h): for every
// path, every quant mode and every antiquant mode, a kernel's plan runs
// along its schedule with an even and a skewed token histogram, y passes
// each expert's reference under its path's bound, the same y comes out of 1
// and 4 host threads, a wrong element is caught, the time follows the
// histogram, and bad histograms and tensors are refused naming the field.
#include "emulator/grouped_emulation.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "emulator/accuracy.h"
#include "emulator/emulator.h"
#include "emulator/program.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/schedule.h"
#include "tests/testing/grouped_problems.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::Chip950;
using ::npu::testing::GroupedProblem;
using ::npu::testing::GroupedSpec;
using ::npu::testing::MxPlan;
using ::npu::testing::NoQuantPlan;
using ::npu::testing::QuantPlan;
using ::npu::testing::Shape;
using ::npu::testing::SkewedHistogram;
using ::npu::testing::StatusIs;
using ::npu::testing::WeightQuantPlan;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::GroupedTensor;
using tiling::MatmulProblem;
using tiling::TilingPlan;

void AddList(MatmulProblem& p, GroupedTensor list, DataType dtype, std::vector<int64_t> dims) {
  p.grouped[list].dtype = dtype;
  p.grouped[list].instances = {Shape(std::move(dims))};
}

struct Case {
  std::string name;
  MatmulProblem problem;
  TilingPlan plan;
  std::string rule;  // what the accuracy report's bound rule names
};

// The histograms each case runs with: spread evenly, and a Zipf draw with
// an empty expert.
std::vector<std::vector<int64_t>> HistogramsOf(int64_t total, int64_t groups) {
  std::vector<int64_t> skewed = SkewedHistogram(total, groups, 1.3, 41);
  // A hot expert and an empty one, whatever the draw gave.
  if (groups > 2) {
    skewed[groups - 1] += skewed[1];
    skewed[1] = 0;
  }
  return {{}, skewed};
}

// Quant cases: split M, E experts, x [m, k], weight [E, k, n].
MatmulProblem QuantProblem(DataType x, DataType y, int64_t e, int64_t m, int64_t n, int64_t k,
                           bool trans_w = false) {
  GroupedSpec spec;
  spec.x = spec.w = x;
  spec.y = y;
  spec.groups = e;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.trans_w = trans_w;
  return GroupedProblem(spec);
}

// A8W4 (split M): int8 x [m, k], an int4 NZ weight [E, k, n], float16
// group scales [E, k / group, n], the float32 scale [E, n] and per-token
// scale [m], an optional float32 bias [E, n], y [m, n].
MatmulProblem A8W4Problem(int64_t e, int64_t m, int64_t k, int64_t n, int64_t group, bool bias,
                          DataType y) {
  GroupedSpec spec;
  spec.x = DataType::kInt8;
  spec.w = DataType::kInt4;
  spec.y = y;
  spec.groups = e;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.weight_nz = true;
  MatmulProblem p = GroupedProblem(spec);
  // The tiling reads the NZ storage (N1, K1, K0, N0).
  p.grouped[GroupedTensor::kWeight].instances[0].storage = {e, (n + 15) / 16, (k + 31) / 32, 32,
                                                            16};
  AddList(p, GroupedTensor::kAntiquantScale, DataType::kFloat16, {e, k / group, n});
  AddList(p, GroupedTensor::kScale, DataType::kFloat32, {e, n});
  AddList(p, GroupedTensor::kPerTokenScale, DataType::kFloat32, {m});
  if (bias) AddList(p, GroupedTensor::kBias, DataType::kFloat32, {e, n});
  return p;
}

// MX-A8W4 (split M): float8_e4m3fn x [m, k] with its e8m0 scale [m, k / 64,
// 2], float4 NZ weights transposed (K1, N1, 16, 32) with e8m0 scales, one
// weight [E, K1, N1, 16, 32] and scale [E, n, k / 64, 2], or one of each per
// expert (single-multi-single), an optional bias of y's dtype.
MatmulProblem MxA8W4Problem(int64_t e, int64_t m, int64_t k, int64_t n, bool per_expert, bool bias,
                            DataType y) {
  MatmulProblem p;
  p.op = tiling::MatmulOp::kGroupedMatmul;
  tiling::GroupedInputs& g = p.grouped;
  g.split_item = 3;
  g.group_type = tiling::kGroupTypeSplitM;
  g.group_list_type = tiling::kGroupListCounts;
  g.transpose_weight = true;
  AddList(p, GroupedTensor::kX, DataType::kFloat8E4M3, {m, k});
  g[GroupedTensor::kWeight].dtype = DataType::kFloat4E2M1;
  g[GroupedTensor::kWeight].format = tiling::Format::kFractalNz;
  g[GroupedTensor::kAntiquantScale].dtype = DataType::kFloat8E8M0;
  g[GroupedTensor::kBias].dtype = y;
  const std::vector<int64_t> nz = {k / 32, n / 16, 16, 32};
  for (int64_t i = 0; i < (per_expert ? e : 1); ++i) {
    std::vector<int64_t> w = nz;
    std::vector<int64_t> scale = {n, k / 64, 2};
    std::vector<int64_t> b = {n};
    if (!per_expert) {
      w.insert(w.begin(), e);
      scale.insert(scale.begin(), e);
      b.insert(b.begin(), e);
    }
    g[GroupedTensor::kWeight].instances.push_back(Shape(w));
    g[GroupedTensor::kAntiquantScale].instances.push_back(Shape(scale));
    if (bias) g[GroupedTensor::kBias].instances.push_back(Shape(b));
  }
  AddList(p, GroupedTensor::kPerTokenScale, DataType::kFloat8E8M0, {m, k / 64, 2});
  AddList(p, GroupedTensor::kGroupList, DataType::kInt64, {e});
  AddList(p, GroupedTensor::kY, y, {m, n});
  return p;
}

std::vector<Case> Cases() {
  constexpr DataType kF16 = DataType::kFloat16, kBf16 = DataType::kBFloat16,
                     kF32 = DataType::kFloat32, kI8 = DataType::kInt8,
                     kFp8 = DataType::kFloat8E4M3;
  std::vector<Case> cases;
  const uint32_t cores = 24;
  // No-quant: float16 / bfloat16 / float32, the three forms, a bias.
  for (DataType dtype : {kF16, kBf16, kF32}) {
    GroupedSpec spec;
    spec.x = spec.w = spec.y = dtype;
    spec.groups = 6;
    spec.m = 300;
    spec.n = 200;
    spec.k = 96;
    spec.bias = true;
    spec.bias_dtype = dtype == kBf16 ? kF32 : dtype;
    MatmulProblem p = GroupedProblem(spec);
    cases.push_back({"NoQuantSplitM" + std::string(tiling::DataTypeName(dtype)), p,
                     NoQuantPlan(p, cores, 128, 128, 32), "NO_QUANT"});
  }
  {
    GroupedSpec spec;
    spec.group_type = tiling::kGroupTypeSplitK;
    spec.groups = 5;
    spec.m = 96;
    spec.n = 160;
    spec.k = 640;
    spec.trans_w = false;
    MatmulProblem p = GroupedProblem(spec);
    cases.push_back({"NoQuantSplitK", p, NoQuantPlan(p, cores, 64, 128, 64), "NO_QUANT"});
  }
  // Quant: the fixpipe's per-channel words and per-tensor float scale, the
  // vector epilogue's per-token scales, the double per-tensor scale of fp8,
  // per-group / per-block fp8, MX fp8 and fp4, MX split K.
  {
    MatmulProblem p = QuantProblem(kI8, kF16, 4, 260, 384, 256, true);
    AddList(p, GroupedTensor::kScale, DataType::kUint64, {4, 384});
    AddList(p, GroupedTensor::kBias, DataType::kInt32, {4, 384});
    p.grouped[GroupedTensor::kBias].dtype = DataType::kInt32;
    cases.push_back({"QuantInt8PerChannelFixpipe", p, QuantPlan(p, cores, 0, 0, 2), "fixpipe"});
  }
  {
    MatmulProblem p = QuantProblem(kI8, kBf16, 5, 200, 256, 128);
    AddList(p, GroupedTensor::kScale, kF32, {5});
    cases.push_back({"QuantInt8PerTensorFixpipe", p, QuantPlan(p, cores, 0, 0, 1), "fixpipe"});
  }
  {
    MatmulProblem p = QuantProblem(kI8, kBf16, 4, 333, 256, 192);
    AddList(p, GroupedTensor::kScale, kBf16, {4, 256});
    AddList(p, GroupedTensor::kPerTokenScale, kF32, {333});
    cases.push_back({"QuantInt8PerTokenVector", p, QuantPlan(p, cores, 1, 4, 2),
                     "vector_epilogue"});
  }
  // The vector epilogue's activations (act_type 1 ReLU, 2 GELU tanh, 4
  // FastGelu, 5 SiLU), float16 y with float scales, one case with a float
  // bias added before the activation.
  for (const auto& [act, name] : {std::pair{1, "Relu"}, std::pair{2, "GeluTanh"},
                                  std::pair{4, "FastGelu"}, std::pair{5, "Silu"}}) {
    MatmulProblem p = QuantProblem(kI8, kF16, 4, 290, 256, 192);
    AddList(p, GroupedTensor::kScale, kF32, {4, 256});
    AddList(p, GroupedTensor::kPerTokenScale, kF32, {290});
    if (act == 5) AddList(p, GroupedTensor::kBias, kF32, {4, 256});
    p.grouped.act_type = act;
    cases.push_back({std::string("QuantInt8PerTokenVector") + name, p, QuantPlan(p, cores, 1, 4, 2),
                     "vector_epilogue"});
  }
  {
    MatmulProblem p = QuantProblem(kFp8, kBf16, 6, 250, 128, 256);
    AddList(p, GroupedTensor::kScale, kF32, {6});
    AddList(p, GroupedTensor::kPerTokenScale, kF32, {6});
    cases.push_back({"QuantFp8DoublePerTensor", p, QuantPlan(p, cores, 0, 1, 1), "fixpipe"});
  }
  {
    MatmulProblem p = QuantProblem(DataType::kHiFloat8, kF16, 3, 96, 256, 128);
    AddList(p, GroupedTensor::kScale, kF32, {3, 256});
    AddList(p, GroupedTensor::kPerTokenScale, kF32, {96});
    cases.push_back({"QuantHiF8PerTokenVector", p, QuantPlan(p, cores, 1, 4, 2),
                     "vector_epilogue"});
  }
  {
    MatmulProblem p = QuantProblem(kFp8, kBf16, 4, 200, 300, 384);
    AddList(p, GroupedTensor::kScale, kF32, {4, 3, 3});
    AddList(p, GroupedTensor::kPerTokenScale, kF32, {200, 3});
    cases.push_back({"QuantFp8PerBlock", p, QuantPlan(p, cores, 2, 16, 32), "per_block"});
  }
  {
    MatmulProblem p = QuantProblem(kFp8, kBf16, 4, 270, 256, 320);
    AddList(p, GroupedTensor::kScale, DataType::kFloat8E8M0, {4, 5, 256, 2});
    AddList(p, GroupedTensor::kPerTokenScale, DataType::kFloat8E8M0, {270, 5, 2});
    cases.push_back({"QuantMxFp8", p, MxPlan(p, cores), "mx"});
  }
  {
    MatmulProblem p = QuantProblem(DataType::kFloat4E2M1, kBf16, 3, 120, 256, 256, true);
    AddList(p, GroupedTensor::kScale, DataType::kFloat8E8M0, {3, 256, 4, 2});
    AddList(p, GroupedTensor::kPerTokenScale, DataType::kFloat8E8M0, {120, 4, 2});
    cases.push_back({"QuantMxFp4Transposed", p, MxPlan(p, cores), "mx"});
  }
  {
    // MX split K: x [K, M], each group's K a multiple of 64 here; scales
    // [K / 64 + E, M, 2] and [K / 64 + E, N, 2].
    GroupedSpec spec;
    spec.x = spec.w = kFp8;
    spec.y = kBf16;
    spec.group_type = tiling::kGroupTypeSplitK;
    spec.groups = 3;
    spec.m = 64;
    spec.n = 128;
    spec.k = 384;
    MatmulProblem p = GroupedProblem(spec);
    AddList(p, GroupedTensor::kScale, DataType::kFloat8E8M0, {384 / 64 + 3, 128, 2});
    AddList(p, GroupedTensor::kPerTokenScale, DataType::kFloat8E8M0, {384 / 64 + 3, 64, 2});
    Case c{"QuantMxFp8SplitK", p, MxPlan(p, cores), "mx"};
    cases.push_back(c);
  }
  // Weight-quant: bfloat16 x, int8 per-channel, int4 per-group with an
  // offset, float4 MX; both controllers.
  {
    GroupedSpec spec;
    spec.x = spec.y = kBf16;
    spec.w = kI8;
    spec.groups = 4;
    spec.m = 150;
    spec.n = 384;
    spec.k = 256;
    MatmulProblem p = GroupedProblem(spec);
    AddList(p, GroupedTensor::kAntiquantScale, kBf16, {4, 384});
    cases.push_back({"WeightQuantInt8PerChannelResplit", p, WeightQuantPlan(p, cores, true, 2),
                     "PER_CHANNEL"});
  }
  {
    GroupedSpec spec;
    spec.x = spec.y = DataType::kFloat16;
    spec.w = DataType::kInt4;
    spec.groups = 3;
    spec.m = 90;
    spec.n = 256;
    spec.k = 512;
    MatmulProblem p = GroupedProblem(spec);
    AddList(p, GroupedTensor::kAntiquantScale, kF16, {3, 4, 256});
    AddList(p, GroupedTensor::kAntiquantOffset, kF16, {3, 4, 256});
    cases.push_back({"WeightQuantInt4PerGroupOffsetBasic", p,
                     WeightQuantPlan(p, cores, false, 3, 128), "PER_GROUP"});
  }
  {
    GroupedSpec spec;
    spec.x = spec.y = kBf16;
    spec.w = DataType::kFloat4E2M1;
    spec.groups = 4;
    spec.m = 64;
    spec.n = 256;
    spec.k = 256;
    MatmulProblem p = GroupedProblem(spec);
    AddList(p, GroupedTensor::kAntiquantScale, DataType::kFloat8E8M0, {4, 8, 256});
    cases.push_back({"WeightQuantFp4Mx", p, WeightQuantPlan(p, cores, true, 4, 32), "MX"});
  }
  // The 8-bit x kernels: A8W4 with and without a bias, float16 and bfloat16
  // y, group sizes 128 and 256; MX-A8W4 with one weight and with one per
  // expert.
  {
    MatmulProblem p = A8W4Problem(4, 300, 512, 256, 128, true, kF16);
    cases.push_back(
        {"WeightQuantA8W4Bias", p, WeightQuantPlan(p, cores, true, 0, 128, 256, 256, 128), "A8W4"});
  }
  {
    MatmulProblem p = A8W4Problem(3, 200, 512, 384, 256, false, kBf16);
    cases.push_back({"WeightQuantA8W4Group256", p,
                     WeightQuantPlan(p, cores, true, 0, 256, 256, 256, 128), "A8W4"});
  }
  {
    MatmulProblem p = MxA8W4Problem(4, 180, 256, 256, false, true, kBf16);
    cases.push_back({"WeightQuantMxA8W4Bias", p,
                     WeightQuantPlan(p, cores, true, 4, 32, 256, 256, 256), "MX-A8W4"});
  }
  {
    MatmulProblem p = MxA8W4Problem(3, 150, 384, 128, true, true, kF16);
    cases.push_back({"WeightQuantMxA8W4SingleMultiSingle", p,
                     WeightQuantPlan(p, cores, true, 4, 32, 256, 128, 256), "MX-A8W4"});
  }
  return cases;
}

// The split total (M or K) and group count of a case.
std::pair<int64_t, int64_t> SplitOf(const MatmulProblem& p) {
  const tiling::grouped::GmmGroups groups = *tiling::grouped::GroupsOf(p.grouped);
  return {static_cast<int64_t>(groups.split_total), static_cast<int64_t>(groups.groups.size())};
}

class GroupedEmulationTest : public ::testing::TestWithParam<Case> {};

TEST_P(GroupedEmulationTest, YPassesEveryExpertsReferenceWithEvenAndSkewedHistograms) {
  const Case& c = GetParam();
  const auto [total, groups] = SplitOf(c.problem);
  for (const std::vector<int64_t>& histogram : HistogramsOf(total, groups)) {
    MatmulProblem p = c.problem;
    p.grouped.token_histogram = histogram;
    const Tensors inputs = RandomInputs(p, 17);
    EmulatorOptions options;
    options.threads = 2;
    absl::StatusOr<EmulationResult> result = Emulate(c.plan, p, Chip950(), inputs, options);
    ASSERT_TRUE(result.ok()) << c.name << " " << ::testing::PrintToString(histogram) << ": "
                             << result.status();
    absl::StatusOr<AccuracyReport> report = CompareWithReference(p, inputs, result->c, 2, nullptr);
    ASSERT_TRUE(report.ok()) << c.name << ": " << report.status();
    EXPECT_TRUE(report->passed) << c.name << " " << ::testing::PrintToString(histogram)
                                << ": worst ratio " << report->worst_bound_ratio << " at "
                                << report->worst_index << ", " << report->elements_over_bound
                                << " over; " << report->bound_rule;
    EXPECT_LE(report->worst_bound_ratio, 1.0) << c.name;
    EXPECT_THAT(report->bound_rule, HasSubstr(c.rule)) << c.name;
    EXPECT_GT(result->stats.total_cycles, 0u);
  }
}

TEST_P(GroupedEmulationTest, YIsTheSameForOneAndFourHostThreads) {
  const Case& c = GetParam();
  const Tensors inputs = RandomInputs(c.problem, 5);
  EmulatorOptions one, four;
  four.threads = 4;
  absl::StatusOr<EmulationResult> a = Emulate(c.plan, c.problem, Chip950(), inputs, one);
  absl::StatusOr<EmulationResult> b = Emulate(c.plan, c.problem, Chip950(), inputs, four);
  ASSERT_TRUE(a.ok() && b.ok()) << c.name << ": " << a.status() << " / " << b.status();
  EXPECT_EQ(a->c.bytes, b->c.bytes) << c.name;
  EXPECT_EQ(a->stats.total_cycles, b->stats.total_cycles) << c.name;
}

TEST_P(GroupedEmulationTest, AWrongElementFailsTheCheck) {
  const Case& c = GetParam();
  const Tensors inputs = RandomInputs(c.problem, 9);
  absl::StatusOr<EmulationResult> result =
      Emulate(c.plan, c.problem, Chip950(), inputs, EmulatorOptions{});
  ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
  HostTensor y = result->c;
  // The last element of the first expert's output, off by a lot.
  const tiling::grouped::GmmGroups groups = *tiling::grouped::GroupsOf(c.problem.grouped);
  const uint64_t last = groups.groups[0].m * groups.groups[0].n - 1;
  y.Set(last, y.Get(last) + 64.0f);
  absl::StatusOr<AccuracyReport> report = CompareWithReference(c.problem, inputs, y, 1, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->passed) << c.name;
  const GroupedElement worst = GroupedElementOf(c.problem, report->worst_index);
  EXPECT_EQ(worst.group, 0u) << c.name;
  EXPECT_EQ(worst.row, groups.groups[0].m - 1) << c.name;
  EXPECT_EQ(worst.col, groups.groups[0].n - 1) << c.name;
}

INSTANTIATE_TEST_SUITE_P(EveryPathAndMode, GroupedEmulationTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// CANN's own plans (the registered strategies) of the no-quant and
// weight-quant paths, every form, with an even and a skewed histogram.
struct EngineCase {
  std::string name;
  MatmulProblem problem;
};

MatmulProblem WeightQuantProblem(tiling::GroupedInputs in) {
  MatmulProblem p;
  p.op = tiling::MatmulOp::kGroupedMatmul;
  p.grouped = std::move(in);
  return p;
}

void AddInstance(tiling::GroupedTensorList& list, std::vector<int64_t> dims) {
  list.instances.push_back(Shape(std::move(dims)));
}

// Split M A16W4 / A16W8: x [m, k], weight [E, k, n] ([E, n, k] transposed),
// antiquant scale [E, n] or [E, k / group, n], y [m, n].
MatmulProblem SingleWeightQuant(DataType x, DataType w, int64_t e, int64_t m, int64_t k,
                                int64_t n, int64_t group, bool trans_w, bool offset) {
  tiling::GroupedInputs in;
  in.split_item = 3;
  in.group_type = tiling::kGroupTypeSplitM;
  in.group_list_type = tiling::kGroupListCounts;
  in.transpose_weight = trans_w;
  in[GroupedTensor::kX].dtype = in[GroupedTensor::kY].dtype = x;
  AddInstance(in[GroupedTensor::kX], {m, k});
  in[GroupedTensor::kWeight].dtype = w;
  AddInstance(in[GroupedTensor::kWeight],
              trans_w ? std::vector<int64_t>{e, n, k} : std::vector<int64_t>{e, k, n});
  in[GroupedTensor::kAntiquantScale].dtype = x;
  const std::vector<int64_t> scale =
      group > 0 ? std::vector<int64_t>{e, k / group, n} : std::vector<int64_t>{e, n};
  AddInstance(in[GroupedTensor::kAntiquantScale], scale);
  if (offset) {
    in[GroupedTensor::kAntiquantOffset].dtype = x;
    AddInstance(in[GroupedTensor::kAntiquantOffset], scale);
  }
  in[GroupedTensor::kGroupList].dtype = DataType::kInt64;
  AddInstance(in[GroupedTensor::kGroupList], {e});
  AddInstance(in[GroupedTensor::kY], {m, n});
  return WeightQuantProblem(std::move(in));
}

std::vector<EngineCase> EngineCases() {
  constexpr DataType kF16 = DataType::kFloat16, kBf16 = DataType::kBFloat16;
  std::vector<EngineCase> cases;
  for (DataType dtype : {kF16, kBf16}) {
    GroupedSpec spec;
    spec.x = spec.w = spec.y = dtype;
    spec.groups = 8;
    spec.m = 640;
    spec.n = 512;
    spec.k = 256;
    cases.push_back({"NoQuantSplitM" + std::string(tiling::DataTypeName(dtype)),
                     GroupedProblem(spec)});
  }
  {
    GroupedSpec spec;
    spec.groups = 3;
    spec.m = 300;
    spec.n = 256;
    spec.k = 128;
    spec.trans_w = true;
    spec.bias = true;
    cases.push_back({"NoQuantSplitMTransposedBias", GroupedProblem(spec)});
  }
  {
    GroupedSpec spec;
    spec.group_type = tiling::kGroupTypeSplitK;
    spec.groups = 4;
    spec.m = 128;
    spec.n = 256;
    spec.k = 1024;
    cases.push_back({"NoQuantSplitK", GroupedProblem(spec)});
  }
  {
    GroupedSpec spec;
    spec.group_type = tiling::kGroupTypeNone;
    spec.groups = 4;
    spec.rows = {100, 7, 300, 64};
    spec.n = 384;
    spec.k = 192;
    cases.push_back({"NoQuantLists", GroupedProblem(spec)});
  }
  cases.push_back({"WeightQuantInt4PerGroup",
                   SingleWeightQuant(kF16, DataType::kInt4, 4, 256, 512, 512, 128, false, false)});
  cases.push_back({"WeightQuantInt4PerGroupOffset",
                   SingleWeightQuant(kBf16, DataType::kInt4, 4, 300, 256, 768, 64, false, true)});
  cases.push_back({"WeightQuantInt8PerChannelTransposed",
                   SingleWeightQuant(kBf16, DataType::kInt8, 8, 200, 512, 1024, 0, true, false)});
  cases.push_back({"WeightQuantInt4PerChannel",
                   SingleWeightQuant(kF16, DataType::kInt4, 2, 64, 1024, 256, 0, false, false)});
  {
    // No split: a list of float16 x, int4 weights and per-group scales.
    tiling::GroupedInputs in;
    in.split_item = 0;
    in.group_type = tiling::kGroupTypeNone;
    in[GroupedTensor::kX].dtype = in[GroupedTensor::kAntiquantScale].dtype =
        in[GroupedTensor::kY].dtype = kF16;
    in[GroupedTensor::kWeight].dtype = DataType::kInt4;
    for (const auto& [m, k, n] : {std::tuple{40, 256, 256}, std::tuple{130, 512, 128},
                                  std::tuple{1, 256, 512}}) {
      AddInstance(in[GroupedTensor::kX], {m, k});
      AddInstance(in[GroupedTensor::kWeight], {k, n});
      AddInstance(in[GroupedTensor::kY], {m, n});
      AddInstance(in[GroupedTensor::kAntiquantScale], {k / 128, n});
    }
    cases.push_back({"WeightQuantInt4Lists", WeightQuantProblem(std::move(in))});
  }
  cases.push_back(
      {"WeightQuantA8W4", A8W4Problem(6, 200, 256, 512, 128, true, DataType::kFloat16)});
  cases.push_back(
      {"WeightQuantA8W4Group192", A8W4Problem(4, 120, 384, 256, 192, false, DataType::kBFloat16)});
  cases.push_back(
      {"WeightQuantMxA8W4", MxA8W4Problem(6, 200, 256, 256, false, true, DataType::kBFloat16)});
  cases.push_back({"WeightQuantMxA8W4SingleMultiSingle",
                   MxA8W4Problem(4, 256, 256, 384, true, false, DataType::kFloat16)});
  return cases;
}

TEST(GroupedEmulationEngineTest, CannsPlansRunWithinEveryExpertsBound) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  for (const EngineCase& c : EngineCases()) {
    absl::StatusOr<tiling::TilingDecision> decision = registry.Decide(c.problem, Chip950());
    ASSERT_TRUE(decision.ok()) << c.name << ": " << decision.status();
    const absl::StatusOr<tiling::grouped::GmmGroups> groups =
        tiling::grouped::GroupsOf(c.problem.grouped);
    ASSERT_TRUE(groups.ok()) << groups.status();
    std::vector<std::vector<int64_t>> histograms = {{}};
    if (groups->group_type != tiling::kGroupTypeNone) {
      histograms = HistogramsOf(static_cast<int64_t>(groups->split_total),
                                static_cast<int64_t>(groups->groups.size()));
    }
    for (const std::vector<int64_t>& histogram : histograms) {
      MatmulProblem p = c.problem;
      p.grouped.token_histogram = histogram;
      const Tensors inputs = RandomInputs(p, 23);
      absl::StatusOr<EmulationResult> result =
          Emulate(decision->plan, p, Chip950(), inputs, EmulatorOptions{});
      ASSERT_TRUE(result.ok()) << c.name << " (" << decision->plan.strategy << ") "
                               << ::testing::PrintToString(histogram) << ": " << result.status();
      absl::StatusOr<AccuracyReport> report =
          CompareWithReference(p, inputs, result->c, 1, nullptr);
      ASSERT_TRUE(report.ok()) << c.name << ": " << report.status();
      EXPECT_TRUE(report->passed) << c.name << " " << ::testing::PrintToString(histogram)
                                  << ": worst ratio " << report->worst_bound_ratio;
    }
  }
}

// The quant cases above on CANN's own plan (the MX basic API, or the general
// strategy's fixpipe, vector or per-block kernel), which must agree with the
// kernel the scales imply.
TEST(GroupedEmulationEngineTest, CannsQuantPlansRunWithinEveryExpertsBound) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  int ran = 0;
  for (const Case& c : Cases()) {
    if (c.name.rfind("Quant", 0) != 0) continue;
    absl::StatusOr<tiling::TilingDecision> decision = registry.Decide(c.problem, Chip950());
    ASSERT_TRUE(decision.ok()) << c.name << ": " << decision.status();
    EXPECT_EQ(decision->plan.data.kernel, c.plan.data.kernel) << c.name;
    EXPECT_EQ(decision->plan.key.grouped_bits, c.plan.key.grouped_bits) << c.name;
    const auto [total, groups] = SplitOf(c.problem);
    for (const std::vector<int64_t>& histogram : HistogramsOf(total, groups)) {
      MatmulProblem p = c.problem;
      p.grouped.token_histogram = histogram;
      const Tensors inputs = RandomInputs(p, 29);
      absl::StatusOr<EmulationResult> result =
          Emulate(decision->plan, p, Chip950(), inputs, EmulatorOptions{});
      ASSERT_TRUE(result.ok()) << c.name << " (" << decision->plan.strategy << "): "
                               << result.status();
      absl::StatusOr<AccuracyReport> report =
          CompareWithReference(p, inputs, result->c, 1, nullptr);
      ASSERT_TRUE(report.ok()) << report.status();
      EXPECT_TRUE(report->passed) << c.name << " " << ::testing::PrintToString(histogram);
      ++ran;
    }
  }
  EXPECT_GE(ran, 16);
}

TEST(GroupedEmulationTimingTest, ASkewsPartialBlocksCostTimeAHotExpertAloneDoesNot) {
  GroupedSpec spec;
  spec.groups = 16;
  spec.m = 4096;
  spec.n = 2048;
  spec.k = 1024;
  MatmulProblem p = GroupedProblem(spec);
  const TilingPlan plan = NoQuantPlan(p, 32, 128, 256, 64);
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> even = Emulate(plan, p, Chip950(), Tensors{}, options);
  ASSERT_TRUE(even.ok()) << even.status();
  p.grouped.token_histogram = SkewedHistogram(4096, 16, 1.5, 3);
  absl::StatusOr<EmulationResult> skewed = Emulate(plan, p, Chip950(), Tensors{}, options);
  ASSERT_TRUE(skewed.ok()) << skewed.status();
  // Every expert's M rounds up to whole base blocks: an even spread of 256
  // rows is two 128-row blocks each; the Zipf draw leaves partial blocks.
  EXPECT_GT(skewed->stats.total_cycles, even->stats.total_cycles);
  std::vector<int64_t> one_hot(16, 0);
  one_hot[7] = 4096;
  p.grouped.token_histogram = one_hot;
  absl::StatusOr<EmulationResult> hot = Emulate(plan, p, Chip950(), Tensors{}, options);
  ASSERT_TRUE(hot.ok()) << hot.status();
  // The same work in one expert: the same blocks, one weight read.
  EXPECT_LE(hot->stats.total_cycles, skewed->stats.total_cycles);
}

TEST(GroupedEmulationTimingTest, UsefulMacsAreTheGroupsAndTheNoteSaysHowTheRowsWereSpread) {
  GroupedSpec spec;
  spec.groups = 4;
  spec.m = 100;
  spec.n = 64;
  spec.k = 32;
  MatmulProblem p = GroupedProblem(spec);
  EXPECT_EQ(GroupedUsefulMacs(p), 100u * 64 * 32);
  EXPECT_THAT(GroupedNote(p), HasSubstr("spread evenly"));
  p.grouped.token_histogram = {0, 100, 0, 0};
  EXPECT_THAT(GroupedNote(p), HasSubstr("0,100,0,0 (the token_histogram given)"));
  const MatmulProblem timed = GroupedTimedProblem(p);
  EXPECT_EQ(timed.m, 100);
  EXPECT_EQ(timed.n, 64);
  EXPECT_EQ(timed.k, 32);
}

// The problem of the published int8 grouped runs (asc-devkit's
// QuantGroupMatmul on the 950PR, ascend_measured_quant.json q3-*: 8 experts
// of 1024 rows, K 1024, N 8192, per-channel x per-token, FastGelu, fp16):
// CANN's own plan is the vector-dequant mix kernel, bound by the cube, whose
// time per core is the published runs' (168.0 us measured for the same
// MMADs), and it lands between the cube-only bound the sample's README gives
// (158.88 us) and the slowest published variant (282.7 us).
TEST(GroupedEmulationTimingTest, CannsPlanOnThePublishedGroupedProblemIsCubeBound) {
  MatmulProblem p = QuantProblem(DataType::kInt8, DataType::kFloat16, 8, 8192, 8192, 1024);
  AddList(p, GroupedTensor::kScale, DataType::kFloat32, {8, 8192});
  AddList(p, GroupedTensor::kPerTokenScale, DataType::kFloat32, {8192});
  p.grouped.act_type = 4;
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  absl::StatusOr<tiling::TilingDecision> decision = registry.Decide(p, Chip950());
  ASSERT_TRUE(decision.ok()) << decision.status();
  EXPECT_EQ(decision->plan.kernel_type, tiling::KernelType::kMixed1To2);
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> run = Emulate(decision->plan, p, Chip950(), Tensors{}, options);
  ASSERT_TRUE(run.ok()) << run.status();
  const MsprofSummary& msprof = run->stats.msprof;
  EXPECT_GT(msprof.task_duration_us, 158.88);
  EXPECT_LT(msprof.task_duration_us, 282.7);
  EXPECT_NEAR(msprof.aic_mac_time_us, 168.0, 0.1 * 168.0);
  EXPECT_GT(msprof.aic_mac_ratio, msprof.aic_mte2_ratio);
  EXPECT_GT(msprof.aiv_vec_time_us, 0.0);
}

// The activation is AIV work: each one adds its vector instructions per
// element of C to the same cube work.
TEST(GroupedEmulationTimingTest, AnActivationAddsItsVectorPasses) {
  MatmulProblem p = QuantProblem(DataType::kInt8, DataType::kFloat16, 8, 2048, 1024, 512);
  AddList(p, GroupedTensor::kScale, DataType::kFloat32, {8, 1024});
  AddList(p, GroupedTensor::kPerTokenScale, DataType::kFloat32, {2048});
  EmulatorOptions options;
  options.timing_only = true;
  std::vector<double> vec_us;
  for (int64_t act : {0, 1, 5, 2}) {  // none, ReLU, SiLU, GELU tanh
    p.grouped.act_type = act;
    absl::StatusOr<EmulationResult> run =
        Emulate(QuantPlan(p, 32, 1, 4, 2), p, Chip950(), Tensors{}, options);
    ASSERT_TRUE(run.ok()) << run.status();
    vec_us.push_back(run->stats.msprof.aiv_vec_time_us);
  }
  // 5, 6, 9 and 12 passes per element.
  EXPECT_GT(vec_us[1], vec_us[0]);
  EXPECT_GT(vec_us[2], vec_us[1]);
  EXPECT_GT(vec_us[3], vec_us[2]);
  EXPECT_NEAR(vec_us[3] / vec_us[0], 12.0 / 5.0, 0.25);
}

// The 8-bit x weight-quant kernels' AIV work: A8W4 widens the weight (three
// instructions per element) and dequantizes C in UB (four, and the bias's
// add); MX-A8W4 rewrites the weight (five) and leaves C to the fixpipe. The
// weight is read at 4 bits, and an AIV that does both counts once.
TEST(GroupedEmulationTimingTest, TheEightBitKernelsWidenTheWeightOnTheAivs) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  const MatmulProblem a8w4 = A8W4Problem(8, 2048, 2048, 1024, 128, true, DataType::kFloat16);
  absl::StatusOr<tiling::TilingDecision> decision = registry.Decide(a8w4, Chip950());
  ASSERT_TRUE(decision.ok()) << decision.status();
  PipelineConfig pipeline = PipelineForPlan(decision->plan, a8w4);
  EXPECT_EQ(pipeline.b_antiquant_passes, kA8W4AntiquantVectorPasses);
  EXPECT_EQ(pipeline.b_antiquant_bits, 4u);
  EXPECT_TRUE(pipeline.output_through_ub);
  EXPECT_EQ(pipeline.ub_vector_passes, kA8W4DequantVectorPasses + kBiasVectorPasses);
  EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<EmulationResult> run =
      Emulate(decision->plan, a8w4, Chip950(), Tensors{}, options);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_GT(run->stats.msprof.aiv_vec_time_us, 0.0);
  EXPECT_LE(run->stats.msprof.aiv_cores, 2 * run->stats.msprof.aic_cores);

  const MatmulProblem mx = MxA8W4Problem(8, 2048, 2048, 1024, false, true, DataType::kBFloat16);
  decision = registry.Decide(mx, Chip950());
  ASSERT_TRUE(decision.ok()) << decision.status();
  pipeline = PipelineForPlan(decision->plan, mx);
  EXPECT_EQ(pipeline.b_antiquant_passes, kMxA8W4AntiquantVectorPasses);
  EXPECT_EQ(pipeline.b_antiquant_bits, 4u);
  EXPECT_FALSE(pipeline.output_through_ub);
  absl::StatusOr<EmulationResult> mx_run =
      Emulate(decision->plan, mx, Chip950(), Tensors{}, options);
  ASSERT_TRUE(mx_run.ok()) << mx_run.status();
  EXPECT_GT(mx_run->stats.msprof.aiv_vec_time_us, 0.0);
}

TEST(GroupedEmulationRefusalTest, WhatTheEightBitKernelsDoNotTakeIsRefusedNamingTheField) {
  MatmulProblem uint64_scale = A8W4Problem(4, 256, 512, 256, 128, false, DataType::kFloat16);
  uint64_scale.grouped[GroupedTensor::kAntiquantScale].dtype = DataType::kUint64;
  EXPECT_THAT(CheckModelled(uint64_scale),
              StatusIs(absl::StatusCode::kUnimplemented,
                       HasSubstr("grouped.antiquant_scale.dtype=uint64")));
  MatmulProblem no_token = A8W4Problem(4, 256, 512, 256, 128, false, DataType::kFloat16);
  no_token.grouped[GroupedTensor::kPerTokenScale].instances.clear();
  EXPECT_THAT(CheckModelled(no_token),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.per_token_scale")));
  MatmulProblem bad_group = A8W4Problem(4, 256, 512, 256, 128, false, DataType::kFloat16);
  bad_group.grouped[GroupedTensor::kAntiquantScale].instances[0] = Shape({4, 3, 256});
  EXPECT_THAT(CheckModelled(bad_group),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.antiquant_scale")));
  MatmulProblem split_k = MxA8W4Problem(4, 256, 512, 256, false, false, DataType::kBFloat16);
  split_k.grouped.group_type = tiling::kGroupTypeSplitK;
  split_k.grouped[GroupedTensor::kY].instances[0] = Shape({4, 256, 256});
  EXPECT_THAT(CheckModelled(split_k),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("grouped.group_type=2")));
  MatmulProblem with_scale = MxA8W4Problem(4, 256, 512, 256, false, false, DataType::kBFloat16);
  AddList(with_scale, GroupedTensor::kScale, DataType::kFloat32, {4, 256});
  EXPECT_THAT(CheckModelled(with_scale),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.scale")));
}

TEST(GroupedEmulationRefusalTest, BadHistogramsAreInvalidArgumentsNamingTheField) {
  GroupedSpec spec;
  spec.groups = 4;
  spec.m = 64;
  MatmulProblem p = GroupedProblem(spec);
  const TilingPlan plan = NoQuantPlan(p, 8);
  EmulatorOptions options;
  options.timing_only = true;
  p.grouped.token_histogram = {32, 32};
  EXPECT_THAT(Emulate(plan, p, Chip950(), Tensors{}, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram has 2 entries, but the problem has 4 "
                                 "groups")));
  p.grouped.token_histogram = {32, 32, 32, 32};
  EXPECT_THAT(Emulate(plan, p, Chip950(), Tensors{}, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram sums to 128, but x has M = 64")));
  EXPECT_THAT(CheckModelled(p), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("grouped.token_histogram")));
}

TEST(GroupedEmulationRefusalTest, TensorsThatAreNotTheListsAreRefusedNamingThem) {
  GroupedSpec spec;
  MatmulProblem p = GroupedProblem(spec);
  const TilingPlan plan = NoQuantPlan(p, 8);
  Tensors inputs = RandomInputs(p, 1);
  inputs.grouped[static_cast<size_t>(GroupedTensor::kWeight)][0].shape[2] += 1;
  EXPECT_THAT(Emulate(plan, p, Chip950(), inputs, EmulatorOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.weight[0]")));
  inputs = RandomInputs(p, 1);
  HostTensor list = HostTensor::Zeros(DataType::kFloat32, {4});
  list.dtype = DataType::kInt64;
  list.bytes.assign(32, 0);
  inputs.grouped[static_cast<size_t>(GroupedTensor::kGroupList)].push_back(list);
  EXPECT_THAT(Emulate(plan, p, Chip950(), inputs, EmulatorOptions{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grouped.group_list[0]")));
}

TEST(GroupedEmulationRefusalTest, WhatIsNotModelledIsUnimplementedNamingTheField) {
  GroupedSpec spec;
  MatmulProblem p = GroupedProblem(spec);
  p.grouped.act_type = 1;
  EXPECT_THAT(CheckModelled(p),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("grouped.act_type")));
  MatmulProblem gelu_erf = QuantProblem(DataType::kInt8, DataType::kFloat16, 4, 256, 256, 128);
  AddList(gelu_erf, GroupedTensor::kScale, DataType::kFloat32, {4, 256});
  gelu_erf.grouped.act_type = 3;
  EXPECT_THAT(CheckModelled(gelu_erf),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("grouped.act_type=3")));
  MatmulProblem q = QuantProblem(DataType::kInt8, DataType::kBFloat16, 4, 256, 256, 128);
  AddList(q, GroupedTensor::kScale, DataType::kBFloat16, {4, 256});
  AddList(q, GroupedTensor::kPerTokenScale, DataType::kFloat32, {256});
  // Per-token scales dequantize on the vector cores, not in the fixpipe.
  EXPECT_THAT(Emulate(QuantPlan(q, 8, 0, 4, 2), q, Chip950(), RandomInputs(q, 1),
                      EmulatorOptions{})
                  .status(),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("vector_epilogue path")));
}

}  // namespace
}  // namespace npu::emu

namespace npu::emu {
namespace {

// Explicit tilings reach the emulator with any words: random edits of each
// family's plan run or are refused by name, never crash or hang.
TEST(GroupedEmulationRefusalTest, RandomWordEditsRunOrAreRefusedByName) {
  std::mt19937_64 engine(11);
  const uint64_t values[] = {0, 1, 2, 3, 16, 100, 255, 4096, 2147483648ull, 4294967295ull};
  int ran = 0;
  for (const Case& c : Cases()) {
    const Tensors inputs = RandomInputs(c.problem, 3);
    for (int edit = 0; edit < 25; ++edit) {
      TilingPlan plan = c.plan;
      const size_t size = plan.data.fields.size();
      const size_t array = size > 400 ? 384 : 0;
      size_t field = engine() % (size - array);
      if (array > 0 && field >= size - array - tiling::kTCubeFieldCount) field += array;
      plan.data.fields[field].value = values[engine() % std::size(values)];
      EmulatorOptions options;
      options.timing_only = edit % 2 == 0;
      options.max_simulated_ops = 2'000'000;
      const absl::StatusOr<EmulationResult> result =
          Emulate(plan, c.problem, Chip950(), options.timing_only ? Tensors{} : inputs, options);
      const absl::StatusCode code = result.status().code();
      EXPECT_TRUE(code == absl::StatusCode::kOk || code == absl::StatusCode::kInvalidArgument ||
                  code == absl::StatusCode::kFailedPrecondition ||
                  code == absl::StatusCode::kUnimplemented ||
                  code == absl::StatusCode::kResourceExhausted)
          << c.name << " " << plan.data.fields[field].name << ": " << result.status();
      ran += result.ok() ? 1 : 0;
    }
  }
  EXPECT_GT(ran, 0);
}

}  // namespace
}  // namespace npu::emu
