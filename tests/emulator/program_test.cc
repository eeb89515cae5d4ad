// Cores with identical programs simulated once (program.h): BuildPrograms()
// shares a program only where no flag crosses cores, and the shared run
// reports exactly what simulating every core reports, field by field, for
// CANN's plans and hand-written kernel schedules.
#include "emulator/program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "emulator/emulator.h"
#include "server/tiling/schedule.h"
#include "tests/testing/kernel_schedules.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::emu {
namespace {

using ::npu::testing::BuiltinPlan;
using ::npu::testing::Chip950;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using tiling::DataType;
using tiling::KernelModel;
using tiling::MatmulProblem;
using tiling::TilingPlan;

// Every field of the two runs' statistics is the same, doubles bit for bit.
void ExpectSameStats(const EmulatorStats& shared, const EmulatorStats& full) {
  EXPECT_EQ(shared.total_cycles, full.total_cycles);
  EXPECT_EQ(shared.kernel_cycles, full.kernel_cycles);
  EXPECT_EQ(shared.microseconds, full.microseconds);
  EXPECT_EQ(shared.cube_utilization, full.cube_utilization);
  ASSERT_EQ(shared.cores.size(), full.cores.size());
  for (size_t i = 0; i < full.cores.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("cores[", i, "]"));
    const CoreStats& s = shared.cores[i];
    const CoreStats& f = full.cores[i];
    EXPECT_EQ(s.kind, f.kind);
    EXPECT_EQ(s.core, f.core);
    EXPECT_EQ(s.units, f.units);
    EXPECT_EQ(s.finish_cycle, f.finish_cycle);
    EXPECT_EQ(s.pipe_busy_cycles, f.pipe_busy_cycles);
  }
  EXPECT_EQ(shared.pipe_busy_cycles, full.pipe_busy_cycles);
  EXPECT_EQ(shared.ddr_channel_busy_cycles, full.ddr_channel_busy_cycles);
  EXPECT_EQ(shared.l2_channel_busy_cycles, full.l2_channel_busy_cycles);
  EXPECT_EQ(shared.ddr_write_channel_busy_cycles, full.ddr_write_channel_busy_cycles);
  const TrafficStats& st = shared.traffic;
  const TrafficStats& ft = full.traffic;
  EXPECT_EQ(st.ddr_read_bytes, ft.ddr_read_bytes);
  EXPECT_EQ(st.l2_read_bytes, ft.l2_read_bytes);
  EXPECT_EQ(st.gm_write_bytes, ft.gm_write_bytes);
  EXPECT_EQ(st.ddr_write_bytes, ft.ddr_write_bytes);
  EXPECT_EQ(st.l1_to_l0_bytes, ft.l1_to_l0_bytes);
  EXPECT_EQ(st.l0c_out_bytes, ft.l0c_out_bytes);
  EXPECT_EQ(st.ub_in_bytes, ft.ub_in_bytes);
  EXPECT_EQ(st.ub_out_bytes, ft.ub_out_bytes);
  EXPECT_EQ(st.workspace_bytes, ft.workspace_bytes);
  EXPECT_EQ(shared.bound, full.bound);
  EXPECT_EQ(shared.events, full.events);
  const MsprofSummary& sm = shared.msprof;
  const MsprofSummary& fm = full.msprof;
  EXPECT_EQ(sm.task_duration_us, fm.task_duration_us);
  EXPECT_EQ(sm.aic_time_us, fm.aic_time_us);
  EXPECT_EQ(sm.aic_mac_time_us, fm.aic_mac_time_us);
  EXPECT_EQ(sm.aic_mte1_time_us, fm.aic_mte1_time_us);
  EXPECT_EQ(sm.aic_mte2_time_us, fm.aic_mte2_time_us);
  EXPECT_EQ(sm.aic_fixpipe_time_us, fm.aic_fixpipe_time_us);
  EXPECT_EQ(sm.aic_mac_ratio, fm.aic_mac_ratio);
  EXPECT_EQ(sm.aic_mte1_ratio, fm.aic_mte1_ratio);
  EXPECT_EQ(sm.aic_mte2_ratio, fm.aic_mte2_ratio);
  EXPECT_EQ(sm.aic_fixpipe_ratio, fm.aic_fixpipe_ratio);
  EXPECT_EQ(sm.aic_cores, fm.aic_cores);
  EXPECT_EQ(sm.aiv_time_us, fm.aiv_time_us);
  EXPECT_EQ(sm.aiv_vec_time_us, fm.aiv_vec_time_us);
  EXPECT_EQ(sm.aiv_mte2_time_us, fm.aiv_mte2_time_us);
  EXPECT_EQ(sm.aiv_mte3_time_us, fm.aiv_mte3_time_us);
  EXPECT_EQ(sm.aiv_vec_ratio, fm.aiv_vec_ratio);
  EXPECT_EQ(sm.aiv_mte2_ratio, fm.aiv_mte2_ratio);
  EXPECT_EQ(sm.aiv_mte3_ratio, fm.aiv_mte3_ratio);
  EXPECT_EQ(sm.aiv_cores, fm.aiv_cores);
}

EmulatorOptions TimingOnly(bool simulate_every_core) {
  EmulatorOptions options;
  options.timing_only = true;
  options.simulate_every_core = simulate_every_core;
  return options;
}

MatmulProblem With(MatmulProblem p, bool bias, bool trans_a, bool trans_b) {
  p.has_bias = bias;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  return p;
}

struct PlanCase {
  std::string name;
  MatmulProblem problem;
  uint32_t aic = 32;
  KernelModel model = KernelModel::kBasic;
  bool gm_split = false;
};

std::vector<PlanCase> PlanCases() {
  MatmulProblem to_mul = Problem(1, 300, 777, DataType::kFloat32);
  to_mul.force_grp_acc_fp32 = true;
  MatmulProblem to_multi_mul = With(Problem(50, 70, 300, DataType::kFloat32), false, false, true);
  to_multi_mul.force_grp_acc_fp32 = true;
  MatmulProblem hf32 = Problem(96, 160, 520, DataType::kFloat32);
  hf32.hf32 = true;
  return {
      {"Square2048", Problem(2048, 2048, 2048)},
      {"Square4096On24Cores", Problem(4096, 4096, 4096), 24},
      {"Tall", Problem(16384, 256, 1024)},
      {"Wide", Problem(128, 20000, 512)},
      // Tiles that do not divide among the cores, with tail tiles and a
      // split last round.
      {"UnevenTiles", Problem(3000, 2900, 700)},
      {"UnevenTilesOn7Cores", Problem(1000, 1300, 300), 7},
      {"OddShape", Problem(77, 131, 300)},
      {"MultiRoundTail", Problem(1000, 257, 129)},
      {"Bf16BiasTransposed", With(Problem(333, 200, 96, DataType::kBFloat16), true, true, true)},
      {"Hf32", hf32},
      {"GmReadWriteSplit", Problem(4096, 4096, 32), 32, KernelModel::kBasic, true},
      {"BasicSplitKFp32", Problem(100, 200, 3000, DataType::kFloat32), 32,
       KernelModel::kBasicSplitK},
      {"AFullLoad", Problem(48, 9000, 64)},
      {"BFullLoad", With(Problem(5000, 128, 32), false, true, false)},
      // Stream-K's flags cross cores: simulated in full either way.
      {"StreamK", Problem(200, 300, 5000), 8, KernelModel::kStreamK},
      {"StreamKDataParallelSk", Problem(256, 1280, 4096), 4, KernelModel::kStreamK},
      {"StreamKSplitKFp32", Problem(40, 60, 20000, DataType::kFloat32), 8,
       KernelModel::kStreamKSplitK},
      {"KEqualZero", Problem(37, 53, 0), 32, KernelModel::kKEqualZero},
      {"ToMul", to_mul, 32, KernelModel::kToMul},
      {"ToMultiMul", to_multi_mul, 32, KernelModel::kToMultiMul},
  };
}

TEST(IdenticalCoresTest, CannPlansGiveTheFullSimulationsStats) {
  for (const PlanCase& test_case : PlanCases()) {
    SCOPED_TRACE(test_case.name);
    const tiling::ChipSpec chip = Chip950(test_case.aic);
    const TilingPlan plan = BuiltinPlan(test_case.problem, chip);
    ASSERT_EQ(plan.key.model, test_case.model) << plan.strategy;
    EmulatorOptions shared_options = TimingOnly(false);
    EmulatorOptions full_options = TimingOnly(true);
    shared_options.gm_split.enabled = full_options.gm_split.enabled = test_case.gm_split;
    absl::StatusOr<EmulationResult> shared =
        Emulate(plan, test_case.problem, chip, {}, shared_options);
    absl::StatusOr<EmulationResult> full = Emulate(plan, test_case.problem, chip, {}, full_options);
    ASSERT_THAT(shared, IsOk());
    ASSERT_THAT(full, IsOk());
    ExpectSameStats(shared->stats, full->stats);
  }
}

TEST(IdenticalCoresTest, ResidentBandPlansGiveTheFullSimulationsStats) {
  // Bands change between a core's units or stay: part of a core's class.
  const MatmulProblem problem = Problem(300, 700, 1000);
  const tiling::ChipSpec chip = Chip950(4);
  TilingPlan plan = BuiltinPlan(problem, chip);
  plan.block.base_m = plan.block.base_n = 64;
  plan.block.m_l1 = 128;
  plan.block.n_l1 = 64;
  plan.block.base_k = 64;
  plan.block.k_l1 = 128;
  plan.block.m_tail_cnt = plan.block.n_tail_cnt = 1;
  plan.l1_residency = tiling::L1Residency::kABand;
  plan.swat_window_rows = 1;
  for (tiling::L1Residency residency : {tiling::L1Residency::kABand, tiling::L1Residency::kBBand}) {
    SCOPED_TRACE(static_cast<int>(residency));
    plan.l1_residency = residency;
    if (residency == tiling::L1Residency::kBBand) {
      plan.block.m_l1 = 64;
      plan.block.n_l1 = 128;
      plan.swat_window_rows = 5;
    }
    absl::StatusOr<EmulationResult> shared = Emulate(plan, problem, chip, {}, TimingOnly(false));
    absl::StatusOr<EmulationResult> full = Emulate(plan, problem, chip, {}, TimingOnly(true));
    ASSERT_THAT(shared, IsOk());
    ASSERT_THAT(full, IsOk());
    ExpectSameStats(shared->stats, full->stats);
  }
}

// A valid fp16 schedule of `kind` with 128 x 128 x 64 base tiles and
// 128 x 256 x 128 L1 tiles, ping-pong everywhere.
KernelSchedule SmallKernel(KernelScheduleKind kind, uint32_t block_dim) {
  KernelSchedule kernel;
  kernel.kind = kind;
  kernel.block_dim = kind == KernelScheduleKind::kSingleCore ? 1 : block_dim;
  kernel.base_m = kernel.base_n = 128;
  kernel.base_k = 64;
  kernel.l1_m = 128;
  kernel.l1_n = 256;
  kernel.l1_k = 128;
  kernel.single_core_m = 300;
  kernel.single_core_n = 500;
  return kernel;
}

using ::npu::testing::CatlassAswt;

struct KernelCase {
  std::string name;
  KernelSchedule kernel;
  MatmulProblem problem;
};

std::vector<KernelCase> KernelCases() {
  std::vector<KernelCase> cases;
  // 1000 x 1300 in 300 x 500 blocks: tail blocks in both dimensions, 12
  // blocks on 7 cores.
  const MatmulProblem odd = Problem(1000, 1300, 300);
  cases.push_back({"StaticGridTailBlock", SmallKernel(KernelScheduleKind::kStaticGrid, 7), odd});
  KernelSchedule grid_l2 = SmallKernel(KernelScheduleKind::kStaticGrid, 5);
  grid_l2.l2_split_rounds = 3;
  grid_l2.inner_order = TileOrder::kColMajor;
  cases.push_back({"StaticGridL2SplitColMajor", grid_l2, odd});
  KernelSchedule grid_buffers = SmallKernel(KernelScheduleKind::kStaticGrid, 4);
  grid_buffers.depth_a1 = grid_buffers.depth_b1 = 1;
  grid_buffers.l0_double_buffer = false;
  grid_buffers.l0c_double_buffer = true;
  grid_buffers.unit_flag = true;
  grid_buffers.b_format = tiling::Format::kFractalNz;
  MatmulProblem odd_nz = odd;
  odd_nz.format_b = tiling::Format::kFractalNz;
  cases.push_back({"StaticGridSingleBuffersUnitFlagNz", grid_buffers, odd_nz});
  // 8 x 6 = 48 L1 tiles on 5 cores: 10 and 9 tiles per core.
  cases.push_back(
      {"RoundRobinUnevenTiles", SmallKernel(KernelScheduleKind::kRoundRobinTiles, 5), odd});
  KernelSchedule swizzle = SmallKernel(KernelScheduleKind::kIdentitySwizzle, 6);
  swizzle.swizzle_offset = 3;
  swizzle.swizzle_direction = 1;
  cases.push_back({"IdentitySwizzle", swizzle, Problem(2058, 2038, 256)});
  // 72 tiles, the 8 tail tiles split 2 x 2; and 6 tiles split 4 ways.
  MatmulProblem aswt_tail = Problem(2058, 2038, 256);
  aswt_tail.dtype_c = DataType::kFloat32;
  aswt_tail.trans_b = true;
  cases.push_back({"AswtTailSplit", CatlassAswt(), aswt_tail});
  MatmulProblem aswt_pieces = Problem(567, 488, 399);
  aswt_pieces.dtype_c = DataType::kFloat32;
  aswt_pieces.trans_b = true;
  cases.push_back({"AswtSixTilesInPieces", CatlassAswt(), aswt_pieces});
  cases.push_back(
      {"SingleCore", SmallKernel(KernelScheduleKind::kSingleCore, 1), Problem(700, 900, 200)});
  KernelSchedule relu_ub = SmallKernel(KernelScheduleKind::kRoundRobinTiles, 7);
  relu_ub.epilogue = Epilogue::kReluUb;
  cases.push_back({"ReluThroughUb", relu_ub, odd});
  // Stream-K's flags cross cores: simulated in full either way.
  KernelSchedule stream_k = SmallKernel(KernelScheduleKind::kStreamKDp, 6);
  stream_k.sk_k_splits = 3;
  cases.push_back({"StreamKDp", stream_k, Problem(1000, 777, 333)});
  return cases;
}

TEST(IdenticalCoresTest, KernelSchedulesGiveTheFullSimulationsStats) {
  const tiling::ChipSpec chip = Chip950();
  for (const KernelCase& test_case : KernelCases()) {
    SCOPED_TRACE(test_case.name);
    absl::StatusOr<EmulationResult> shared =
        EmulateKernel(test_case.kernel, test_case.problem, chip, {}, TimingOnly(false));
    absl::StatusOr<EmulationResult> full =
        EmulateKernel(test_case.kernel, test_case.problem, chip, {}, TimingOnly(true));
    ASSERT_THAT(shared, IsOk());
    ASSERT_THAT(full, IsOk());
    ExpectSameStats(shared->stats, full->stats);
  }
}

absl::StatusOr<ProgramSet> Programs(const MatmulProblem& problem, const tiling::ChipSpec& chip,
                                    bool share) {
  const TilingPlan plan = BuiltinPlan(problem, chip);
  absl::StatusOr<tiling::Schedule> schedule = tiling::ExpandSchedule(plan, problem, chip);
  if (!schedule.ok()) return schedule.status();
  ProgramOptions options;
  options.pipeline = PipelineForPlan(plan);
  options.share_identical_cores = share;
  return BuildPrograms(*schedule, plan, problem, ChipModel::FromSpec(chip), options);
}

size_t CoresStoodFor(const ProgramSet& programs) {
  size_t cores = 0;
  for (const CoreProgram& program : programs.cores) cores += 1 + program.replicas.size();
  return cores;
}

TEST(IdenticalCoresTest, EqualTilesShareOneProgram) {
  // 8 x 8 tiles of 256 x 256 on 32 cores: two whole tiles each.
  const MatmulProblem problem = Problem(2048, 2048, 2048);
  absl::StatusOr<ProgramSet> shared = Programs(problem, Chip950(), true);
  absl::StatusOr<ProgramSet> full = Programs(problem, Chip950(), false);
  ASSERT_THAT(shared, IsOk());
  ASSERT_THAT(full, IsOk());
  ASSERT_EQ(shared->cores.size(), 1u);
  EXPECT_EQ(shared->cores[0].core, 0u);
  EXPECT_EQ(shared->cores[0].replicas.size(), 31u);
  EXPECT_EQ(full->cores.size(), 32u);
  EXPECT_EQ(shared->total_ops, full->total_ops);
}

TEST(IdenticalCoresTest, UnevenTilesShareWithinClasses) {
  const MatmulProblem problem = Problem(3000, 2900, 700);
  absl::StatusOr<ProgramSet> shared = Programs(problem, Chip950(), true);
  absl::StatusOr<ProgramSet> full = Programs(problem, Chip950(), false);
  ASSERT_THAT(shared, IsOk());
  ASSERT_THAT(full, IsOk());
  EXPECT_GT(shared->cores.size(), 1u);
  EXPECT_LT(shared->cores.size(), full->cores.size());
  EXPECT_EQ(CoresStoodFor(*shared), full->cores.size());
  EXPECT_EQ(shared->total_ops, full->total_ops);
}

TEST(IdenticalCoresTest, StreamKFlagsCrossCoresSoNothingIsShared) {
  const MatmulProblem problem = Problem(200, 300, 5000);
  const tiling::ChipSpec chip = Chip950(8);
  ASSERT_EQ(BuiltinPlan(problem, chip).key.model, KernelModel::kStreamK);
  absl::StatusOr<ProgramSet> shared = Programs(problem, chip, true);
  ASSERT_THAT(shared, IsOk());
  for (const CoreProgram& program : shared->cores) EXPECT_TRUE(program.replicas.empty());
  EXPECT_EQ(shared->cores.size(), 8u + 16u);
}

TEST(IdenticalCoresTest, WorkLimitCountsEveryCore) {
  // The limit sees the operations of all 32 cores whether or not they are
  // simulated once: the verdict and the message do not change.
  const MatmulProblem problem = Problem(2048, 2048, 2048);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  absl::StatusOr<EmulationResult> full = Emulate(plan, problem, Chip950(), {}, TimingOnly(true));
  ASSERT_THAT(full, IsOk());
  for (bool every_core : {false, true}) {
    SCOPED_TRACE(every_core);
    EmulatorOptions options = TimingOnly(every_core);
    options.max_simulated_ops = full->stats.events;
    EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options), IsOk());
    for (uint64_t limit : {full->stats.events - 1, full->stats.events / 32, uint64_t{100}}) {
      options.max_simulated_ops = limit;
      EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options),
                  StatusIs(absl::StatusCode::kResourceExhausted,
                           ::testing::HasSubstr(absl::StrCat("more than ", limit))));
    }
  }
}

TEST(IdenticalCoresTest, CancellationStopsASharedRun) {
  const MatmulProblem problem = Problem(4096, 4096, 4096);
  const TilingPlan plan = BuiltinPlan(problem, Chip950());
  std::atomic<bool> cancelled{true};
  EmulatorOptions options = TimingOnly(false);
  options.cancelled = &cancelled;
  EXPECT_THAT(Emulate(plan, problem, Chip950(), {}, options),
              StatusIs(absl::StatusCode::kCancelled));
}

}  // namespace
}  // namespace npu::emu
