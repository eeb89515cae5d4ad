#include "emulator/emulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "emulator/accuracy.h"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/kernel_schedules.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using tiling::DataType;
using tiling::KernelModel;
using tiling::MatmulProblem;
using tiling::TilingPlan;

tiling::ChipSpec ChipWithCores(uint32_t aic) {
  tiling::ChipSpec chip = tiling::BuiltinPlatforms().front();
  chip.name = absl::StrCat("test", aic);
  chip.aic_num = aic;
  chip.aiv_num = 2 * aic;
  return chip;
}

const tiling::ChipSpec& Chip950() { return tiling::BuiltinPlatforms().front(); }

MatmulProblem Problem(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::kFloat16) {
  MatmulProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.dtype_a = problem.dtype_b = problem.dtype_c = problem.dtype_bias = dtype;
  return problem;
}

double UnitRoundoff(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return std::ldexp(1.0, -11);
    case DataType::kBFloat16:
      return std::ldexp(1.0, -8);
    case DataType::kFloat32:
      return std::ldexp(1.0, -24);
    default:  // the quantized types are not emulated
      break;
  }
  return 1;
}

// |C - ref| <= u_out |ref| + 2 (k + 2) u_fp32 sum_p |a_p b_p| (+ the
// smallest fp16 subnormal): fp32 accumulation, fp32 partial sums and the
// final round-to-nearest cast.
void ExpectMatchesReference(const MatmulProblem& problem, const Tensors& inputs,
                            const HostTensor& c) {
  const std::vector<double> ref = ReferenceMatmul(problem, inputs);
  // sum_p |a_p b_p| + |bias|: the reference of the operands' magnitudes
  // (every magnitude is a value of its dtype, so nothing is rounded).
  Tensors magnitudes = inputs;
  for (HostTensor* tensor : {&magnitudes.a, &magnitudes.b}) {
    std::vector<float> values = tensor->ToFloats();
    for (float& value : values) value = std::fabs(value);
    *tensor = HostTensor::FromFloats(tensor->dtype, tensor->shape, values);
  }
  if (magnitudes.bias.has_value()) {
    std::vector<float> values = magnitudes.bias->ToFloats();
    for (float& value : values) value = std::fabs(value);
    magnitudes.bias =
        HostTensor::FromFloats(magnitudes.bias->dtype, magnitudes.bias->shape, values);
  }
  const std::vector<double> mag = ReferenceMatmul(problem, magnitudes);
  ASSERT_EQ(c.elements(), ref.size());
  const double u_out = UnitRoundoff(problem.dtype_c);
  const double u32 = std::ldexp(1.0, -24);
  int failures = 0;
  double worst = 0;
  for (uint64_t i = 0; i < ref.size(); ++i) {
    const double bound =
        u_out * std::fabs(ref[i]) + 2.0 * static_cast<double>(problem.k + 2) * u32 * mag[i] + 6e-8;
    const double err = std::fabs(c.Get(i) - ref[i]);
    worst = std::max(worst, err / bound);
    if (!(err <= bound) && failures++ < 5) {
      ADD_FAILURE() << "C[" << i / problem.n << ", " << i % problem.n << "] = " << c.Get(i)
                    << ", fp64 reference " << ref[i] << ", bound " << bound;
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_LE(worst, 1.0);
}

EmulatorOptions TimingOnly() {
  EmulatorOptions options;
  options.timing_only = true;
  return options;
}

absl::StatusOr<EmulationResult> RunPlan(const TilingPlan& plan, const MatmulProblem& problem,
                                        const tiling::ChipSpec& chip, const Tensors& inputs,
                                        int threads = 2, FaultInjection faults = {}) {
  EmulatorOptions options;
  options.threads = threads;
  options.faults = faults;
  return Emulate(plan, problem, chip, inputs, options);
}

struct ModelCase {
  std::string name;
  MatmulProblem problem;
  uint32_t aic = 32;
  KernelModel model;
  tiling::FullLoad full_load = tiling::FullLoad::kNone;
};

MatmulProblem With(MatmulProblem p, bool bias, bool trans_a, bool trans_b) {
  p.has_bias = bias;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  return p;
}

MatmulProblem HighPrecisionFp32(MatmulProblem p) {
  p.force_grp_acc_fp32 = true;
  return p;
}

MatmulProblem Hf32(MatmulProblem p) {
  p.hf32 = true;
  return p;
}

MatmulProblem OutputDtype(MatmulProblem p, DataType dtype) {
  p.dtype_c = dtype;
  return p;
}

std::vector<ModelCase> ModelCases() {
  return {
      {"AswtFp16OddShape", Problem(77, 131, 300), 32, KernelModel::kBasic},
      {"AswtFp16MultiRoundTail", Problem(1000, 257, 129), 32, KernelModel::kBasic},
      {"AswtBf16BiasTransposed", With(Problem(333, 200, 96, DataType::kBFloat16), true, true, true),
       32, KernelModel::kBasic},
      {"AswtFp32", Problem(100, 90, 700, DataType::kFloat32), 32, KernelModel::kBasic},
      {"AswtFp16InFp32Out", OutputDtype(Problem(129, 65, 200), DataType::kFloat32), 32,
       KernelModel::kBasic},
      {"AswtHf32", Hf32(Problem(96, 160, 520, DataType::kFloat32)), 32, KernelModel::kBasic},
      {"BasicSplitKFp32", Problem(100, 200, 3000, DataType::kFloat32), 32,
       KernelModel::kBasicSplitK},
      {"AFullLoad", Problem(48, 9000, 64), 32, KernelModel::kBasic, tiling::FullLoad::kA},
      {"BFullLoad", With(Problem(5000, 128, 32), false, true, false), 32, KernelModel::kBasic,
       tiling::FullLoad::kB},
      {"StreamKSk", Problem(200, 300, 5000), 8, KernelModel::kStreamK},
      {"StreamKSkBias", With(Problem(130, 260, 6000, DataType::kBFloat16), true, false, false), 8,
       KernelModel::kStreamK},
      // 5 tiles on 4 cores: one data-parallel round, one tile split 4 ways.
      {"StreamKDataParallelSk", Problem(256, 1280, 4096), 4, KernelModel::kStreamK},
      {"StreamKSplitKFp32", Problem(40, 60, 20000, DataType::kFloat32), 8,
       KernelModel::kStreamKSplitK},
      {"KEqualZero", Problem(37, 53, 0), 32, KernelModel::kKEqualZero},
      {"ToMul", HighPrecisionFp32(Problem(1, 300, 777, DataType::kFloat32)), 32,
       KernelModel::kToMul},
      {"ToMultiMul",
       HighPrecisionFp32(With(Problem(50, 70, 300, DataType::kFloat32), false, false, true)), 32,
       KernelModel::kToMultiMul},
  };
}

class EmulatorModelTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(EmulatorModelTest, MatchesFp64Reference) {
  const ModelCase& test_case = GetParam();
  const tiling::ChipSpec chip = ChipWithCores(test_case.aic);
  const TilingPlan plan = BuiltinPlan(test_case.problem, chip);
  ASSERT_EQ(plan.key.model, test_case.model) << plan.strategy << ": " << plan.detail;
  ASSERT_EQ(plan.key.full_load, test_case.full_load) << plan.detail;
  const Tensors inputs = RandomInputs(test_case.problem, 7);
  absl::StatusOr<EmulationResult> result = RunPlan(plan, test_case.problem, chip, inputs);
  ASSERT_THAT(result, IsOk());
  ExpectMatchesReference(test_case.problem, inputs, result->c);
  EXPECT_GT(result->stats.total_cycles, 0u);
  EXPECT_GT(result->stats.microseconds, 0.0);
  EXPECT_FALSE(result->stats.bound.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryModel, EmulatorModelTest, ::testing::ValuesIn(ModelCases()),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return info.param.name;
                         });

// The one check of what the emulator models, which Execute and the advisor
// also ask: each unmodelled layout is UNIMPLEMENTED, naming its field.
TEST(EmulatorTest, CheckModelledNamesTheUnmodelledField) {
  MatmulProblem p = ::npu::testing::Problem(64, 64, 64);
  EXPECT_THAT(CheckModelled(p), IsOk());
  p.format_b = tiling::Format::kFractalNz;
  EXPECT_THAT(CheckModelled(p),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("problem.format_b")));
  p.format_b = tiling::Format::kNd;
  p.a_slice.enabled = true;
  EXPECT_THAT(CheckModelled(p),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("problem.a_slice")));
  p.a_slice.enabled = false;
  p.batch.b_interleaved = true;
  EXPECT_THAT(CheckModelled(p), StatusIs(absl::StatusCode::kUnimplemented,
                                         HasSubstr("a_batch_interleaved / b_batch_interleaved")));
}

TEST(EmulatorTest, OneAndManyThreadsAreBitIdentical) {
  for (const ModelCase& test_case : ModelCases()) {
    SCOPED_TRACE(test_case.name);
    const tiling::ChipSpec chip = ChipWithCores(test_case.aic);
    const TilingPlan plan = BuiltinPlan(test_case.problem, chip);
    const Tensors inputs = RandomInputs(test_case.problem, 11);
    absl::StatusOr<EmulationResult> one = RunPlan(plan, test_case.problem, chip, inputs, 1);
    absl::StatusOr<EmulationResult> many = RunPlan(plan, test_case.problem, chip, inputs, 4);
    ASSERT_THAT(one, IsOk());
    ASSERT_THAT(many, IsOk());
    EXPECT_EQ(one->c.bytes, many->c.bytes);
    EXPECT_EQ(one->stats.total_cycles, many->stats.total_cycles);
    EXPECT_EQ(one->stats.pipe_busy_cycles, many->stats.pipe_busy_cycles);
    ASSERT_EQ(one->stats.cores.size(), many->stats.cores.size());
    for (size_t i = 0; i < one->stats.cores.size(); ++i) {
      EXPECT_EQ(one->stats.cores[i].finish_cycle, many->stats.cores[i].finish_cycle);
    }
  }
}

TEST(EmulatorTest, StreamKReducesInSlotOrder) {
  // The same partial sums give the same C on every run and thread count;
  // the reduction order is fixed by the slot order.
  const tiling::ChipSpec chip = ChipWithCores(8);
  const MatmulProblem problem = Problem(200, 300, 5000);
  const TilingPlan plan = BuiltinPlan(problem, chip);
  const Tensors inputs = RandomInputs(problem, 3);
  absl::StatusOr<EmulationResult> first = RunPlan(plan, problem, chip, inputs, 3);
  absl::StatusOr<EmulationResult> second = RunPlan(plan, problem, chip, inputs, 2);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(first->c.bytes, second->c.bytes);
  EXPECT_GT(first->stats.traffic.workspace_bytes, 0u);
  EXPECT_GT(first->stats.pipe_busy_cycles[static_cast<int>(Pipe::kVec)], 0u);
}

// ---------------------------------------------------------------------------
// The five pitfalls of seeds/000 section 7, each injected and reported.

TEST(EmulatorFaultTest, WorkspaceOffsetFromTileIndexIsOutOfBounds) {
  const tiling::ChipSpec chip = ChipWithCores(8);
  const MatmulProblem problem = Problem(768, 768, 4096);  // DP+SK
  const TilingPlan plan = BuiltinPlan(problem, chip);
  FaultInjection faults;
  faults.workspace_offset_from_tile_idx = true;
  EXPECT_THAT(RunPlan(plan, problem, chip, RandomInputs(problem, 1), 2, faults),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("workspace"), HasSubstr("problem 1"))));
}

TEST(EmulatorFaultTest, IdleAicWithoutFlagIsADeadlock) {
  // 3 tiles x 10 K slices on 32 cores: two AIC cores are idle.
  const MatmulProblem problem = Problem(256, 768, 16384);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  ASSERT_EQ(plan.key.model, KernelModel::kStreamK);
  FaultInjection faults;
  faults.idle_aic_skips_sync_flag = true;
  EmulatorOptions options;
  options.timing_only = true;
  options.faults = faults;
  EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options),
              StatusIs(absl::StatusCode::kInternal,
                       AllOf(HasSubstr("deadlock"), HasSubstr("AIV core 60"),
                             HasSubstr("pipe MTE2"), HasSubstr("AIC_SYNC_AIV"))));
  options.faults = {};
  EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options), IsOk());
}

TEST(EmulatorFaultTest, L0cNeverInitialisedIsAHazard) {
  const MatmulProblem problem = Problem(300, 300, 256);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  FaultInjection faults;
  faults.l0c_never_initialized = true;
  EXPECT_THAT(RunPlan(plan, problem, Chip950(), RandomInputs(problem, 1), 2, faults),
              StatusIs(absl::StatusCode::kInternal,
                       AllOf(HasSubstr("cmatrixInitVal"), HasSubstr("pipe CUBE"))));
}

TEST(EmulatorFaultTest, StreamKWithoutTailRoundMissesPartOfC) {
  const tiling::ChipSpec chip = ChipWithCores(8);
  const TilingPlan plan = BuiltinPlan(Problem(768, 768, 4096), chip);
  ASSERT_EQ(plan.key.model, KernelModel::kStreamK);
  const MatmulProblem divisible = Problem(512, 1024, 4096);  // 8 tiles on 8 cores
  EmulatorOptions options;
  options.timing_only = true;
  EXPECT_THAT(Emulate(plan, divisible, chip, {}, options),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("problem 4")));
  options.faults.stream_k_without_tail = true;
  EXPECT_THAT(Emulate(plan, divisible, chip, {}, options),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("cover")));
}

TEST(EmulatorFaultTest, OversizedBaseKOverflowsL0a) {
  const MatmulProblem problem = Problem(512, 512, 16384);
  const TilingPlan plan = BuiltinPlan(problem, ChipWithCores(24));
  FaultInjection faults;
  faults.oversized_base_k = true;
  EmulatorOptions options;
  options.timing_only = true;
  options.faults = faults;
  EXPECT_THAT(Emulate(plan, problem, ChipWithCores(24), {}, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("tiling field baseK"), HasSubstr("L0A"))));
}

// ---------------------------------------------------------------------------
// Safety and limits.

TEST(EmulatorTest, OversizedBlockNamesTheField) {
  const MatmulProblem problem = Problem(1024, 1024, 1024);
  TilingPlan plan = BuiltinPlan(problem, Chip950());
  plan.block.base_m = plan.block.m_l1 = 512;
  EmulatorOptions options;
  options.timing_only = true;
  EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tiling field base")));
}

TEST(EmulatorTest, MismatchedInputsAreRejected) {
  const MatmulProblem problem = Problem(64, 64, 64);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  Tensors inputs = RandomInputs(problem, 1);
  inputs.a.shape = {64, 63};
  EXPECT_THAT(RunPlan(plan, problem, Chip950(), inputs),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("A has shape")));
}

TEST(EmulatorTest, CancellationStopsTheRun) {
  const MatmulProblem problem = Problem(4096, 4096, 4096);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  std::atomic<bool> cancelled{true};
  EmulatorOptions options;
  options.timing_only = true;
  options.cancelled = &cancelled;
  EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options),
              StatusIs(absl::StatusCode::kCancelled));
}

TEST(EmulatorTest, WorkLimitIsEnforced) {
  const MatmulProblem problem = Problem(4096, 4096, 4096);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  EmulatorOptions options;
  options.timing_only = true;
  options.max_simulated_ops = 1000;
  EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options),
              StatusIs(absl::StatusCode::kResourceExhausted));
  options.timing_only = false;
  options.max_simulated_ops = 0;
  options.max_numeric_macs = 1000;
  EXPECT_THAT(Emulate(plan, problem, Chip950(), RandomInputs(Problem(8, 8, 8), 1), options),
              StatusIs(absl::StatusCode::kInvalidArgument));  // inputs checked first
}

// ---------------------------------------------------------------------------
// Hand-written kernel schedules (kernel_schedule.h) through EmulateKernel().

KernelSchedule Kernel(KernelScheduleKind kind, uint32_t block_dim, uint64_t base = 64,
                      uint64_t base_k = 32) {
  KernelSchedule kernel;
  kernel.kind = kind;
  kernel.block_dim = block_dim;
  kernel.base_m = kernel.base_n = base;
  kernel.base_k = base_k;
  kernel.l1_m = kernel.l1_n = base;
  kernel.l1_k = 2 * base_k;
  kernel.single_core_m = 2 * base;
  kernel.single_core_n = 3 * base;
  kernel.inner_order = TileOrder::kColMajor;
  return kernel;
}

struct KernelCase {
  std::string name;
  KernelSchedule kernel;
  MatmulProblem problem;
};

class EmulateKernelTest : public ::testing::TestWithParam<KernelCase> {};

TEST_P(EmulateKernelTest, MatchesFp64Reference) {
  const KernelCase& c = GetParam();
  const Tensors inputs = RandomInputs(c.problem, 7);
  EmulatorOptions options;
  options.threads = 3;
  absl::StatusOr<EmulationResult> result =
      EmulateKernel(c.kernel, c.problem, Chip950(), inputs, options);
  ASSERT_THAT(result, IsOk());
  absl::StatusOr<AccuracyReport> report =
      CompareWithReference(c.problem, inputs, result->c, 2, nullptr, c.kernel.epilogue);
  ASSERT_THAT(report, IsOk());
  EXPECT_TRUE(report->passed) << "worst ratio " << report->worst_bound_ratio;
  EXPECT_GT(result->stats.total_cycles, 0u);
  EXPECT_GT(result->stats.msprof.aic_mac_time_us, 0.0);
  // One host thread computes the same bytes.
  options.threads = 1;
  absl::StatusOr<EmulationResult> single =
      EmulateKernel(c.kernel, c.problem, Chip950(), inputs, options);
  ASSERT_THAT(single, IsOk());
  EXPECT_EQ(single->c.bytes, result->c.bytes);
  EXPECT_EQ(single->stats.total_cycles, result->stats.total_cycles);
}

std::vector<KernelCase> KernelCases() {
  using K = KernelScheduleKind;
  std::vector<KernelCase> cases;
  // Odd sizes: tiles cut at C's edge and a K tail in every kind.
  const MatmulProblem odd = With(Problem(301, 211, 157), false, false, true);
  cases.push_back({"SingleCore", Kernel(K::kSingleCore, 1), odd});
  KernelSchedule grid = Kernel(K::kStaticGrid, 4);
  grid.l2_split_rounds = 2;
  cases.push_back({"StaticGridL2Split", grid, odd});
  cases.push_back({"RoundRobin", Kernel(K::kRoundRobinTiles, 7), With(odd, true, true, false)});
  KernelSchedule swizzle = Kernel(K::kIdentitySwizzle, 5);
  swizzle.swizzle_offset = 2;
  swizzle.swizzle_direction = 1;
  cases.push_back({"IdentitySwizzle", swizzle, odd});
  cases.push_back({"Aswt", Kernel(K::kAswt, 32), odd});
  KernelSchedule stream_k = Kernel(K::kStreamKDp, 8);
  stream_k.sk_k_splits = 2;
  cases.push_back({"StreamKDp", stream_k, Problem(200, 130, 333)});
  KernelSchedule single_buffers = Kernel(K::kRoundRobinTiles, 3);
  single_buffers.depth_a1 = single_buffers.depth_b1 = 1;
  single_buffers.l0_double_buffer = false;
  single_buffers.l0c_double_buffer = true;
  single_buffers.unit_flag = true;
  cases.push_back({"SingleBuffersUnitFlag", single_buffers, odd});
  KernelSchedule relu_gm = Kernel(K::kAswt, 16);
  relu_gm.epilogue = Epilogue::kReluGm;
  cases.push_back({"ReluInFixpipe", relu_gm, With(odd, true, false, false)});
  KernelSchedule relu_ub = Kernel(K::kRoundRobinTiles, 6);
  relu_ub.epilogue = Epilogue::kReluUb;
  cases.push_back({"ReluInUb", relu_ub, Problem(97, 140, 77, DataType::kBFloat16)});
  KernelSchedule nz = Kernel(K::kRoundRobinTiles, 4);
  nz.b_format = tiling::Format::kFractalNz;
  MatmulProblem nz_problem = odd;
  nz_problem.format_b = tiling::Format::kFractalNz;
  cases.push_back({"NzWeight", nz, nz_problem});
  KernelSchedule fp32 = Kernel(K::kStaticGrid, 6, 32, 16);
  cases.push_back({"Fp32", fp32, Problem(150, 99, 61, DataType::kFloat32)});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Kinds, EmulateKernelTest, ::testing::ValuesIn(KernelCases()),
                         [](const auto& info) { return info.param.name; });

TEST(EmulateKernelTest, MalformedScheduleNamesTheField) {
  KernelSchedule kernel = Kernel(KernelScheduleKind::kStaticGrid, 4);
  kernel.l1_k = 40;  // not a multiple of base_k
  EXPECT_THAT(EmulateKernel(kernel, Problem(128, 128, 128), Chip950(), {}, TimingOnly()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kernel_schedule.l1_k")));
  kernel = Kernel(KernelScheduleKind::kRoundRobinTiles, 4, 256, 256);
  kernel.l1_k = 512;  // two 256x512 fp16 stages per operand overflow L1
  EXPECT_THAT(EmulateKernel(kernel, Problem(512, 512, 512), Chip950(), {}, TimingOnly()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kernel_schedule.")));
}

TEST(EmulateKernelTest, DoubleBufferingHidesTheLoads) {
  // The same tiles with ping-pong L1 overlap MTE2 with the cube; with a
  // single buffer every load waits for the previous stage and pays the GM
  // latency.
  const MatmulProblem problem = With(Problem(2048, 2048, 2048), false, false, true);
  KernelSchedule pingpong = Kernel(KernelScheduleKind::kRoundRobinTiles, 32, 256, 64);
  pingpong.l1_k = 256;
  KernelSchedule single = pingpong;
  single.depth_a1 = single.depth_b1 = 1;
  absl::StatusOr<EmulationResult> fast =
      EmulateKernel(pingpong, problem, Chip950(), {}, TimingOnly());
  absl::StatusOr<EmulationResult> slow =
      EmulateKernel(single, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(fast, IsOk());
  ASSERT_THAT(slow, IsOk());
  EXPECT_LT(fast->stats.total_cycles * 5, slow->stats.total_cycles * 4);
  // msprof averages over the cores that ran: every core ran here.
  EXPECT_EQ(fast->stats.msprof.aic_cores, 32u);
  EXPECT_NEAR(fast->stats.msprof.task_duration_us, fast->stats.microseconds, 1e-9);
}

TEST(EmulateKernelTest, UnitFlagFixpipeWaitsBusyForL0c) {
  // msprof's fixpipe time includes the UnitFlag wait: the FIXPIPE is issued
  // ahead of the tile's last MMAD and counts as busy until it drains L0C.
  const MatmulProblem problem = With(Problem(1024, 1024, 4096), false, false, true);
  KernelSchedule plain = Kernel(KernelScheduleKind::kRoundRobinTiles, 16, 256, 64);
  plain.l1_k = 256;
  KernelSchedule unit_flag = plain;
  unit_flag.unit_flag = true;
  absl::StatusOr<EmulationResult> a = EmulateKernel(plain, problem, Chip950(), {}, TimingOnly());
  absl::StatusOr<EmulationResult> b =
      EmulateKernel(unit_flag, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_GT(b->stats.msprof.aic_fixpipe_time_us, 3 * a->stats.msprof.aic_fixpipe_time_us);
  EXPECT_LE(b->stats.total_cycles, a->stats.total_cycles);
}

TEST(EmulateKernelTest, OutputThroughUbRunsOnTheAivPair) {
  // relu_ub: FIXPIPE hands each tile to the AIC's two AIVs, which store it;
  // their stores pay no unaligned-row cost for an odd row pitch of C.
  MatmulProblem problem = With(Problem(2048, 2038, 256), false, false, true);
  problem.dtype_c = DataType::kFloat32;
  KernelSchedule gm = Kernel(KernelScheduleKind::kAswt, 32, 256, 64);
  gm.l1_k = 128;
  KernelSchedule ub = gm;
  ub.epilogue = Epilogue::kReluUb;
  absl::StatusOr<EmulationResult> direct = EmulateKernel(gm, problem, Chip950(), {}, TimingOnly());
  absl::StatusOr<EmulationResult> via_ub = EmulateKernel(ub, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(direct, IsOk());
  ASSERT_THAT(via_ub, IsOk());
  EXPECT_EQ(direct->stats.msprof.aiv_cores, 0u);
  EXPECT_EQ(via_ub->stats.msprof.aiv_cores, 2 * via_ub->stats.msprof.aic_cores);
  EXPECT_GT(via_ub->stats.msprof.aiv_mte3_time_us, 0.0);
  EXPECT_GT(via_ub->stats.msprof.aiv_vec_time_us, 0.0);
  EXPECT_EQ(via_ub->stats.traffic.l0c_out_bytes, 0u);
  EXPECT_EQ(via_ub->stats.traffic.ub_out_bytes, 2048u * 2038u * 4u);
  EXPECT_LT(via_ub->stats.total_cycles, direct->stats.total_cycles);
}

TEST(EmulateKernelTest, MxScalesAddTheirLoadsToMte2AndMte1) {
  // The MXFP4 basic-API kernel moves one e8m0 byte per 32 K values of each
  // row of A and column of B beside the 4-bit data: 1/16 of the data's bytes
  // on MTE2, and a LOAD_MX per K step on MTE1. The cube runs fp4 at
  // 16 x 64 x 16 MACs per cycle.
  const MatmulProblem problem = npu::testing::MxFp4Problem(2048, 2048, 4096);
  KernelSchedule kernel = npu::testing::MxBasicApiKernel();
  kernel.single_core_m = 512;
  kernel.single_core_n = 256;
  absl::StatusOr<EmulationResult> mx = EmulateKernel(kernel, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(mx, IsOk());
  const uint64_t data = 2048ull * 4096 / 2 * (2048 / 256) * 2;  // A per N tile, B per M tile
  const uint64_t scales = data / 16;
  const TrafficStats& t = mx->stats.traffic;
  EXPECT_EQ(t.l2_read_bytes + t.ddr_read_bytes, data + scales);
  // Each core's MMADs: 2 tiles x 16 steps of 256 x 256 x 256 at 16x64x16.
  const uint64_t mmad = 2 * 16 * (256 / 16) * (256 / 16) * (256 / 64);
  EXPECT_GE(mx->stats.cores[0].pipe_busy_cycles[static_cast<int>(Pipe::kCube)], mmad);
  EXPECT_LT(mx->stats.cores[0].pipe_busy_cycles[static_cast<int>(Pipe::kCube)], mmad * 21 / 20);
}

TEST(EmulateKernelTest, L1BankConflictsSlowMte1) {
  // The same MX kernel with ping and pong in different banks, and with A's
  // and B's data sharing one: MTE2's writes then collide with MTE1's reads.
  const MatmulProblem problem = npu::testing::MxFp4Problem(2048, 2048, 4096);
  KernelSchedule split = npu::testing::MxBasicApiKernel();
  split.single_core_m = 512;
  split.single_core_n = 256;
  split.l1_bank_split = L1BankSplit::kPingPong;
  KernelSchedule shared = split;
  shared.l1_bank_split = L1BankSplit::kNone;
  absl::StatusOr<EmulationResult> a = EmulateKernel(split, problem, Chip950(), {}, TimingOnly());
  absl::StatusOr<EmulationResult> b = EmulateKernel(shared, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_GT(b->stats.msprof.aic_mte1_time_us, 1.05 * a->stats.msprof.aic_mte1_time_us);
  EXPECT_EQ(a->stats.traffic.l1_to_l0_bytes, b->stats.traffic.l1_to_l0_bytes);
  // Where the kernel leaves placement to the compiler nothing is modelled,
  // and the A2 has no such banks.
  KernelSchedule open = split;
  open.l1_bank_split = L1BankSplit::kUnspecified;
  absl::StatusOr<EmulationResult> c = EmulateKernel(open, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(c, IsOk());
  EXPECT_LE(c->stats.msprof.aic_mte1_time_us, a->stats.msprof.aic_mte1_time_us);
}

TEST(EmulateKernelTest, RelayedDequantRunsOnTheAivsOwnPipes) {
  // The grouped int8 kernel: int32 tiles through GM to the AIVs, which read
  // them back (MTE2), dequantize and apply GELU (VEC) and store fp16 (MTE3).
  // Fewer workspace slots make the AIC wait for the AIVs; one AIV per AIC
  // does twice the vector work of two.
  const MatmulProblem problem = npu::testing::W8A8Problem(2048, 2048, 1024);
  KernelSchedule four = npu::testing::GroupedW8A8Kernel(2, 4);
  four.group_m = {1024, 1024};
  KernelSchedule one = four;
  one.workspace_slots = 1;
  KernelSchedule single = npu::testing::GroupedW8A8Kernel(1, 1);
  single.group_m = {1024, 1024};
  absl::StatusOr<EmulationResult> s4 = EmulateKernel(four, problem, Chip950(), {}, TimingOnly());
  absl::StatusOr<EmulationResult> s1 = EmulateKernel(one, problem, Chip950(), {}, TimingOnly());
  absl::StatusOr<EmulationResult> s0 = EmulateKernel(single, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(s4, IsOk());
  ASSERT_THAT(s1, IsOk());
  ASSERT_THAT(s0, IsOk());
  // 16 blocks of 256 x 1024: 16 cores work.
  EXPECT_EQ(s4->stats.msprof.aic_cores, 16u);
  EXPECT_EQ(s4->stats.msprof.aiv_cores, 32u);
  EXPECT_EQ(s0->stats.msprof.aiv_cores, 16u);
  for (const EmulationResult* r : {&*s4, &*s1, &*s0}) {
    EXPECT_GT(r->stats.msprof.aiv_vec_time_us, 0.0);
    EXPECT_GT(r->stats.msprof.aiv_mte2_time_us, 0.0);
    EXPECT_GT(r->stats.msprof.aiv_mte3_time_us, 0.0);
    // The int32 tiles go out and come back in, 4 bytes per element each
    // way, with each row's per-token scale for every 256-column tile.
    EXPECT_EQ(r->stats.traffic.workspace_bytes, 2u * 2048u * 2048u * 4u + 2048u * 4u * 8u);
    EXPECT_EQ(r->stats.traffic.ub_out_bytes, 2048u * 2048u * 2u);
  }
  EXPECT_LE(s4->stats.total_cycles, s1->stats.total_cycles);
  EXPECT_LT(s1->stats.total_cycles, s0->stats.total_cycles);
  EXPECT_NEAR(s0->stats.msprof.aiv_vec_time_us, 2 * s1->stats.msprof.aiv_vec_time_us,
              0.05 * s0->stats.msprof.aiv_vec_time_us);
  // GELU is not in the numerics.
  EmulatorOptions numerics;
  EXPECT_THAT(EmulateKernel(four, problem, Chip950(), {}, numerics),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("timing_only")));
}

TEST(EmulateKernelTest, BlocksBeyondTheCoresRunAfterEachOther) {
  // 64 blocks of one 128 x 128 tile on 32 cores: each core runs two blocks,
  // the second after the first has ended and the block's init.
  const MatmulProblem problem = With(Problem(1024, 1024, 1024), false, false, true);
  KernelSchedule blocks = Kernel(KernelScheduleKind::kRoundRobinTiles, 64, 128, 64);
  blocks.l1_k = 64;
  blocks.tile_numbering = TileNumbering::kColMajor;
  KernelSchedule cores = blocks;
  cores.block_dim = 32;
  absl::StatusOr<EmulationResult> a = EmulateKernel(blocks, problem, Chip950(), {}, TimingOnly());
  absl::StatusOr<EmulationResult> b = EmulateKernel(cores, problem, Chip950(), {}, TimingOnly());
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(a->stats.msprof.aic_cores, 32u);
  EXPECT_GT(a->stats.kernel_cycles, b->stats.kernel_cycles);
}

}  // namespace
}  // namespace npu::emu
