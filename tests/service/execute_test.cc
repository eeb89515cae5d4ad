// Tests of server/service/execute.h: the Execute pipeline without a server.
#include "server/service/execute.h"

#include <atomic>
#include <memory>
#include <string>

#include "emulator/emulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/convert.h"
#include "server/tiling/registry.h"
#include "server/tiling/strategy.h"
#include "tests/testing/grouped_problems.h"
#include "tests/testing/problems.h"
#include "tests/testing/status_matchers.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using ::npu::testing::Chip950;
using ::npu::testing::DecideBuiltin;
using ::npu::testing::IsOk;
using ::npu::testing::Problem;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;

pb::ExecuteRequest RequestFor(const tl::MatmulProblem& problem) {
  pb::ExecuteRequest request;
  request.set_id("x");
  *request.mutable_problem() = ProblemToProto(problem);
  return request;
}

// A small round-robin kernel: 32x32 tiles, 64 of K per L1 transfer.
pb::KernelSchedule SmallKernel(uint32_t block_dim = 4) {
  pb::KernelSchedule k;
  k.set_kind(pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES);
  k.set_block_dim(block_dim);
  k.set_base_m(32);
  k.set_base_n(32);
  k.set_base_k(32);
  k.set_l1_m(32);
  k.set_l1_n(32);
  k.set_l1_k(64);
  return k;
}

pb::Tensor TensorOf(const emu::HostTensor& tensor) {
  pb::Tensor out;
  out.set_dtype(DataTypeToProto(tensor.dtype));
  for (int64_t dim : tensor.shape) out.add_shape(dim);
  out.set_data(tensor.bytes.data(), tensor.bytes.size());
  return out;
}

// The operands `seed` generates, as inline tensors.
void SetInlineFromSeed(pb::ExecuteRequest& request, const tl::MatmulProblem& problem,
                       uint64_t seed) {
  const emu::Tensors tensors = emu::RandomInputs(problem, seed);
  *request.mutable_inputs()->mutable_a() = TensorOf(tensors.a);
  *request.mutable_inputs()->mutable_b() = TensorOf(tensors.b);
  if (tensors.bias.has_value()) *request.mutable_inputs()->mutable_bias() = TensorOf(*tensors.bias);
  pb::ExecuteInputs& inputs = *request.mutable_inputs();
  if (tensors.scale.has_value()) *inputs.mutable_scale() = TensorOf(*tensors.scale);
  if (tensors.pertoken_scale.has_value()) {
    *inputs.mutable_pertoken_scale() = TensorOf(*tensors.pertoken_scale);
  }
  if (tensors.offset.has_value()) *inputs.mutable_offset() = TensorOf(*tensors.offset);
}

// A QuantBatchMatmulV3 problem: x1 [m, k] and x2 [k, n] of `dtype`, y of
// `y`, with its scale (dtype, shape) and an optional per-token scale.
tl::MatmulProblem QuantProblem(int64_t m, int64_t n, int64_t k, tl::DataType dtype, tl::DataType y,
                               tl::QuantTensorSpec scale, tl::QuantTensorSpec pertoken = {}) {
  tl::MatmulProblem p = Problem(m, n, k, dtype);
  p.op = tl::MatmulOp::kQuantBatchMatmulV3;
  p.dtype_c = y;
  p.quant.scale = std::move(scale);
  p.quant.pertoken = std::move(pertoken);
  return p;
}

class ExecutePipelineTest : public ::testing::Test {
 protected:
  absl::StatusOr<pb::ExecuteResponse> Run(const pb::ExecuteRequest& request,
                                          const std::atomic<bool>* cancelled = nullptr) {
    absl::StatusOr<PreparedExecute> prepared = PrepareExecute(request, registry_, options_);
    if (!prepared.ok()) return prepared.status();
    pb::ExecuteResponse response;
    absl::Status status = RunExecute(*prepared, options_, cancelled, &response);
    if (!status.ok()) return status;
    return response;
  }

  tl::StrategyRegistry registry_ = tl::MakeBuiltinRegistry();
  ExecuteOptions options_;
};

TEST_F(ExecutePipelineTest, EnginePathRunsTheEnginesPlan) {
  tl::MatmulProblem problem = Problem(300, 260, 500);
  problem.has_bias = true;
  pb::ExecuteRequest request = RequestFor(problem);
  request.set_seed(5);
  request.set_return_c(true);
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());

  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem);
  ASSERT_THAT(decision, IsOk());
  EXPECT_EQ(response->id(), "x");
  EXPECT_FALSE(response->explicit_tiling());
  EXPECT_EQ(response->tiling().strategy(), decision->plan.strategy);
  EXPECT_EQ(response->tiling().tiling_key(), decision->plan.key.Encode());
  EXPECT_EQ(response->tiling().trace_size(), 0);
  EXPECT_EQ(response->input_source(), pb::INPUT_SOURCE_SEED);
  EXPECT_EQ(response->seed(), 5u);
  EXPECT_TRUE(response->accuracy().passed());
  EXPECT_LE(response->accuracy().worst_bound_ratio(), 1.0);
  EXPECT_EQ(response->accuracy().output_unit_roundoff(), 1.0 / 2048);

  // The timing report is the emulator's for the same plan.
  emu::EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<emu::EmulationResult> direct =
      emu::Emulate(decision->plan, problem, Chip950(), {}, options);
  ASSERT_THAT(direct, IsOk());
  const pb::TimingReport& timing = response->timing();
  EXPECT_EQ(timing.predicted_cycles(), direct->stats.total_cycles);
  EXPECT_DOUBLE_EQ(timing.predicted_time_us(), direct->stats.microseconds);
  EXPECT_DOUBLE_EQ(timing.cube_utilization(), direct->stats.cube_utilization);
  EXPECT_EQ(timing.bound_resource(), direct->stats.bound);
  ASSERT_EQ(timing.cores_size(), static_cast<int>(direct->stats.cores.size()));
  EXPECT_EQ(timing.cores(0).kind(), pb::CORE_KIND_AIC);
  EXPECT_EQ(timing.cores(0).busy_cycles().cube(),
            direct->stats.cores[0].pipe_busy_cycles[static_cast<int>(emu::Pipe::kCube)]);
  EXPECT_GT(timing.traffic().l1_to_l0_bytes(), 0u);
  EXPECT_EQ(timing.simulated_ops(), direct->stats.events);

  // C as the kernel wrote it.
  EXPECT_EQ(response->c().dtype(), pb::DATA_TYPE_FLOAT16);
  EXPECT_THAT(response->c().shape(), ::testing::ElementsAre(300, 260));
  EXPECT_EQ(response->c().data().size(), 300u * 260u * 2u);
}

TEST_F(ExecutePipelineTest, SeedAndInlineBytesGiveTheSameResult) {
  tl::MatmulProblem problem = Problem(130, 70, 257, tl::DataType::kBFloat16);
  problem.trans_a = true;
  problem.has_bias = true;
  problem.dtype_bias = tl::DataType::kFloat32;
  pb::ExecuteRequest seeded = RequestFor(problem);
  seeded.set_seed(42);
  seeded.set_return_c(true);
  pb::ExecuteRequest inlined = seeded;
  SetInlineFromSeed(inlined, problem, 42);
  absl::StatusOr<pb::ExecuteResponse> a = Run(seeded);
  absl::StatusOr<pb::ExecuteResponse> b = Run(inlined);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->input_source(), pb::INPUT_SOURCE_INLINE);
  EXPECT_EQ(a->c().data(), b->c().data());
  EXPECT_EQ(a->accuracy().SerializeAsString(), b->accuracy().SerializeAsString());
  EXPECT_EQ(a->timing().SerializeAsString(), b->timing().SerializeAsString());
}

TEST_F(ExecutePipelineTest, ThreadsChangeNeitherCNorCycles) {
  pb::ExecuteRequest one = RequestFor(Problem(512, 384, 1000));
  one.set_return_c(true);
  one.set_threads(1);
  pb::ExecuteRequest four = one;
  four.set_threads(4);
  options_.max_threads_per_run = 4;
  absl::StatusOr<pb::ExecuteResponse> a = Run(one);
  absl::StatusOr<pb::ExecuteResponse> b = Run(four);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(a->threads_used(), 1u);
  EXPECT_EQ(b->threads_used(), 4u);
  EXPECT_EQ(a->c().data(), b->c().data());
  EXPECT_EQ(a->timing().predicted_cycles(), b->timing().predicted_cycles());
}

TEST_F(ExecutePipelineTest, TimingOnlyHasNoAccuracyAndNoWorkLimitOnMacs) {
  pb::ExecuteRequest request = RequestFor(Problem(8192, 8192, 8192));
  request.set_timing_only(true);
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_FALSE(response->has_accuracy());
  EXPECT_FALSE(response->has_c());
  EXPECT_EQ(response->input_source(), pb::INPUT_SOURCE_NONE);
  EXPECT_GT(response->timing().cube_utilization(), 0.5);
  EXPECT_EQ(response->timing().bound_resource(), "CUBE");
}

TEST_F(ExecutePipelineTest, StreamKReportsItsAivReduction) {
  pb::ExecuteRequest request = RequestFor(Problem(4096, 1280, 8192));
  request.set_timing_only(true);
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->tiling().strategy(), "BASIC_STREAM_K");
  EXPECT_GT(response->timing().aiv_cores(), 0u);
  EXPECT_GT(response->timing().busy_cycles().vec(), 0u);
  EXPECT_GT(response->timing().traffic().workspace_bytes(), 0u);
}

struct ErrorCase {
  std::string name;
  std::function<void(pb::ExecuteRequest&)> edit;
  absl::StatusCode code;
  std::string message;
};

class ExecuteErrorTest : public ExecutePipelineTest,
                         public ::testing::WithParamInterface<ErrorCase> {};

TEST_P(ExecuteErrorTest, MapsToCodeNamingTheField) {
  tl::MatmulProblem problem = Problem(64, 48, 80);
  pb::ExecuteRequest request = RequestFor(problem);
  SetInlineFromSeed(request, problem, 1);
  GetParam().edit(request);
  EXPECT_THAT(Run(request), StatusIs(GetParam().code, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Requests, ExecuteErrorTest,
    ::testing::Values(
        ErrorCase{"WrongByteLength",
                  [](auto& r) { r.mutable_inputs()->mutable_a()->mutable_data()->pop_back(); },
                  absl::StatusCode::kInvalidArgument,
                  "inputs.a.data: 10239 bytes, but [64,80] float16 is 10240 bytes"},
        ErrorCase{"WrongShape",
                  [](auto& r) {
                    r.mutable_inputs()->mutable_b()->set_shape(0, 48);
                    r.mutable_inputs()->mutable_b()->set_shape(1, 80);
                  },
                  absl::StatusCode::kInvalidArgument,
                  "inputs.b.shape: [48,80], but the problem stores it as [80,48] ([k, n])"},
        ErrorCase{
            "WrongDtype",
            [](auto& r) { r.mutable_inputs()->mutable_a()->set_dtype(pb::DATA_TYPE_FLOAT32); },
            absl::StatusCode::kInvalidArgument,
            "inputs.a.dtype: DATA_TYPE_FLOAT32, but the problem says DATA_TYPE_FLOAT16"},
        ErrorCase{"MissingB", [](auto& r) { r.mutable_inputs()->clear_b(); },
                  absl::StatusCode::kInvalidArgument, "inputs.b: required with inputs"},
        ErrorCase{"BiasWithoutProblemBias",
                  [](auto& r) { *r.mutable_inputs()->mutable_bias() = pb::Tensor(); },
                  absl::StatusCode::kInvalidArgument,
                  "inputs.bias: given, but problem.has_bias is not set"},
        ErrorCase{"BiasMissing",
                  [](auto& r) {
                    r.mutable_problem()->set_has_bias(true);
                    r.mutable_problem()->set_dtype_bias(pb::DATA_TYPE_FLOAT16);
                  },
                  absl::StatusCode::kInvalidArgument,
                  "inputs.bias: required: problem.has_bias is set"},
        ErrorCase{"ReturnCWithTimingOnly",
                  [](auto& r) {
                    r.set_timing_only(true);
                    r.set_return_c(true);
                  },
                  absl::StatusCode::kInvalidArgument, "return_c: there is no C with timing_only"},
        ErrorCase{"TooManyThreads", [](auto& r) { r.set_threads(257); },
                  absl::StatusCode::kInvalidArgument, "threads: at most 256"},
        ErrorCase{"ForcedStrategyWithTiling",
                  [](auto& r) {
                    r.set_forced_strategy("BASIC_ASWT");
                    r.mutable_tiling();
                  },
                  absl::StatusCode::kInvalidArgument,
                  "forced_strategy: not with an explicit tiling"},
        ErrorCase{"UnknownStrategy", [](auto& r) { r.set_forced_strategy("FAST"); },
                  absl::StatusCode::kNotFound, "forced_strategy: "},
        ErrorCase{"BadProblem", [](auto& r) { r.mutable_problem()->set_m(0); },
                  absl::StatusCode::kInvalidArgument, "problem: field m=0"},
        ErrorCase{"MissingProblem", [](auto& r) { r.clear_problem(); },
                  absl::StatusCode::kInvalidArgument, "problem: required"},
        ErrorCase{"LongId", [](auto& r) { r.set_id(std::string(300, 'i')); },
                  absl::StatusCode::kInvalidArgument, "id: at most 256 bytes"},
        ErrorCase{"NzIsNotModelled",
                  [](auto& r) {
                    r.mutable_problem()->set_format_b(pb::FORMAT_FRACTAL_NZ);
                    r.clear_inputs();
                  },
                  absl::StatusCode::kUnimplemented, "problem.format_b"},
        ErrorCase{"UnknownPlatform", [](auto& r) { r.set_platform("ascend1"); },
                  absl::StatusCode::kNotFound, "platform: "},
        ErrorCase{"CannTilingOnAnotherArchitecture", [](auto& r) { r.set_platform("ascend910b1"); },
                  absl::StatusCode::kFailedPrecondition,
                  "platform: CANN's arch35 mat_mul_v3 tiling applies to DAV_3510 only; platform "
                  "\"ascend910b1\" is DAV_2201 (Execute with a kernel_schedule runs on it)"},
        ErrorCase{"KernelScheduleWithTiling",
                  [](auto& r) {
                    *r.mutable_kernel_schedule() = SmallKernel();
                    r.mutable_tiling();
                  },
                  absl::StatusCode::kInvalidArgument, "kernel_schedule: exclusive with tiling"},
        ErrorCase{"KernelScheduleWithForcedStrategy",
                  [](auto& r) {
                    *r.mutable_kernel_schedule() = SmallKernel();
                    r.set_forced_strategy("BASIC_ASWT");
                  },
                  absl::StatusCode::kInvalidArgument,
                  "kernel_schedule: exclusive with forced_strategy"},
        ErrorCase{"KernelScheduleWithoutKind",
                  [](auto& r) {
                    *r.mutable_kernel_schedule() = SmallKernel();
                    r.mutable_kernel_schedule()->clear_kind();
                  },
                  absl::StatusCode::kInvalidArgument, "kernel_schedule.kind: required"},
        // The emulator's check against the chip (32 cube cores).
        ErrorCase{"KernelScheduleBeyondTheCores",
                  [](auto& r) {
                    // Round-robin tiles may launch more blocks than cores;
                    // the other kinds may not.
                    pb::KernelSchedule k = SmallKernel(33);
                    k.set_kind(pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE);
                    *r.mutable_kernel_schedule() = k;
                  },
                  absl::StatusCode::kInvalidArgument, "kernel_schedule.block_dim"},
        ErrorCase{"KernelScheduleWithAnNzProblem",
                  [](auto& r) {
                    *r.mutable_kernel_schedule() = SmallKernel();
                    r.mutable_problem()->set_format_b(pb::FORMAT_FRACTAL_NZ);
                    r.clear_inputs();
                  },
                  absl::StatusCode::kInvalidArgument,
                  "problem.format_b: must be ND with a kernel_schedule"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST_F(ExecutePipelineTest, WorkLimitsAreResourceExhaustedBeforeAnythingRuns) {
  pb::ExecuteRequest request = RequestFor(Problem(4096, 4096, 4096));
  EXPECT_THAT(Run(request), StatusIs(absl::StatusCode::kResourceExhausted,
                                     HasSubstr("(--max_execute_work); use timing_only")));
  options_.max_numeric_macs = uint64_t{1} << 40;
  EXPECT_THAT(Run(RequestFor(Problem(1, 1, 1 << 25))),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("A has 33554432 elements, above the limit of 16777216")));
  options_.max_operand_elements = uint64_t{1} << 26;
  pb::ExecuteRequest big_c = RequestFor(Problem(8192, 4096, 1));
  big_c.set_return_c(true);
  EXPECT_THAT(Run(big_c), StatusIs(absl::StatusCode::kResourceExhausted,
                                   HasSubstr("return_c: C is 67108864 bytes")));
  pb::ExecuteRequest huge = RequestFor(Problem(65536, 65536, 65536));
  huge.set_timing_only(true);
  EXPECT_THAT(Run(huge), StatusIs(absl::StatusCode::kResourceExhausted,
                                  HasSubstr("--max_execute_simulated_ops")));
}

TEST_F(ExecutePipelineTest, TinyExplicitBlocksOnAHugeProblemAreRefusedUpFront) {
  // 2^31-1 squared outputs in 16x16 blocks: expanding this would need
  // terabytes; the estimate refuses it first.
  const tl::MatmulProblem problem = Problem(2147483647, 2147483647, 16);
  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(Problem(1024, 1024, 16));
  ASSERT_THAT(decision, IsOk());
  tl::TilingPlan plan = decision->plan;
  plan.block.base_m = plan.block.base_n = 16;
  plan.block.m_l1 = plan.block.n_l1 = 16;
  EXPECT_THAT(
      CheckEmulationWork(plan, problem, 5'000'000),
      StatusIs(absl::StatusCode::kResourceExhausted,
               HasSubstr("simulated pipe operations (18014398509481984 base blocks x 1 K steps)")));
  EXPECT_THAT(CheckEmulationWork(decision->plan, Problem(1024, 1024, 16), 5'000'000), IsOk());
}

TEST_F(ExecutePipelineTest, ExplicitTilingRunsOnItsOwnPlatform) {
  const tl::MatmulProblem problem = Problem(512, 512, 512);
  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem, Chip950(24));
  ASSERT_THAT(decision, IsOk());
  pb::ExecuteRequest request = RequestFor(problem);
  request.set_timing_only(true);
  DecisionToProto(*decision, Chip950(24), request.mutable_tiling());
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_TRUE(response->explicit_tiling());
  EXPECT_EQ(response->tiling().platform().aic_num(), 24u);
  EXPECT_EQ(response->tiling().detail(), "explicit tiling from the request");

  // Naming another chip in the request conflicts with the tiling's.
  request.mutable_platform_overrides()->set_aic_num(32);
  request.mutable_platform_overrides()->set_aiv_num(64);
  EXPECT_THAT(
      Run(request),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("tiling.platform.aic_num: 24, but the request's platform has 32")));
  // The same chip is fine.
  request.mutable_platform_overrides()->set_aic_num(24);
  request.mutable_platform_overrides()->set_aiv_num(48);
  EXPECT_THAT(Run(request), IsOk());
}

TEST_F(ExecutePipelineTest, ExplicitOverflowNamesTheTilingField) {
  const tl::MatmulProblem problem = Problem(1024, 1024, 1024);
  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem);
  ASSERT_THAT(decision, IsOk());
  pb::ExecuteRequest request = RequestFor(problem);
  request.set_timing_only(true);
  DecisionToProto(*decision, Chip950(), request.mutable_tiling());
  for (pb::TilingField& field : *request.mutable_tiling()->mutable_fields()) {
    if (field.name() == "baseK" || field.name() == "kL1") field.set_value(1024);
  }
  EXPECT_THAT(Run(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tiling: tiling field baseK (baseM=128)=1024 overflows L0A")));
}

TEST_F(ExecutePipelineTest, ExplicitKernelFaultIsTheTilingsNotOurs) {
  // Stream-K on 16 x 5 = 80 MN tiles over usedCoreNum = 16: no tail round.
  const tl::MatmulProblem problem = Problem(4096, 1280, 8192);
  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem);
  ASSERT_THAT(decision, IsOk());
  ASSERT_EQ(decision->plan.key.model, tl::KernelModel::kStreamK);
  pb::ExecuteRequest request = RequestFor(problem);
  request.set_timing_only(true);
  DecisionToProto(*decision, Chip950(), request.mutable_tiling());
  for (pb::TilingField& field : *request.mutable_tiling()->mutable_fields()) {
    if (field.name() == "usedCoreNum") field.set_value(16);
  }
  EXPECT_THAT(Run(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("tiling: Stream-K needs a tail round")));
}

// Every Execute answers the chip it ran on and the msprof summary of its run.
TEST_F(ExecutePipelineTest, EnginePathAnswersThePlatformAndTheMsprofSummary) {
  const tl::MatmulProblem problem = Problem(1024, 1024, 1024);
  pb::ExecuteRequest request = RequestFor(problem);
  request.set_timing_only(true);
  request.mutable_platform_overrides()->set_aic_num(24);
  request.mutable_platform_overrides()->set_aiv_num(48);
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->platform().name(), "ascend950pr");
  EXPECT_EQ(response->platform().npu_arch(), "DAV_3510");
  EXPECT_EQ(response->platform().aic_num(), 24u);
  EXPECT_EQ(response->platform().SerializeAsString(),
            response->tiling().platform().SerializeAsString());
  EXPECT_FALSE(response->has_kernel_schedule());

  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem, Chip950(24));
  ASSERT_THAT(decision, IsOk());
  emu::EmulatorOptions options;
  options.timing_only = true;
  absl::StatusOr<emu::EmulationResult> direct =
      emu::Emulate(decision->plan, problem, Chip950(24), {}, options);
  ASSERT_THAT(direct, IsOk());
  const pb::MsprofSummary& msprof = response->timing().msprof();
  ASSERT_TRUE(response->timing().has_msprof());
  EXPECT_DOUBLE_EQ(msprof.task_duration_us(), direct->stats.msprof.task_duration_us);
  EXPECT_DOUBLE_EQ(msprof.aic_mac_time_us(), direct->stats.msprof.aic_mac_time_us);
  EXPECT_DOUBLE_EQ(msprof.aic_mte2_ratio(), direct->stats.msprof.aic_mte2_ratio);
  EXPECT_EQ(msprof.aic_cores(), direct->stats.msprof.aic_cores);
  EXPECT_EQ(msprof.aiv_cores(), direct->stats.msprof.aiv_cores);
}

// An explicit CANN tiling cannot run on the A2 either, named or inherited
// from the tiling's own platform.
TEST_F(ExecutePipelineTest, ExplicitTilingOnAnotherArchitectureIsFailedPrecondition) {
  const tl::MatmulProblem problem = Problem(512, 512, 512);
  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem);
  ASSERT_THAT(decision, IsOk());
  pb::ExecuteRequest request = RequestFor(problem);
  request.set_timing_only(true);
  DecisionToProto(*decision, Chip950(), request.mutable_tiling());
  ASSERT_THAT(Run(request), IsOk());

  pb::ExecuteRequest on_a2 = request;
  *on_a2.mutable_tiling()->mutable_platform() = ChipToProto(*tl::FindPlatform("ascend910b1"));
  EXPECT_THAT(Run(on_a2), StatusIs(absl::StatusCode::kFailedPrecondition,
                                   HasSubstr("\"ascend910b1\" is DAV_2201")));
  // An arch the request's chip does not have, or one nobody knows.
  pb::ExecuteRequest mismatch = request;
  mismatch.set_platform("ascend950pr");
  mismatch.mutable_tiling()->mutable_platform()->set_npu_arch("DAV_2201");
  EXPECT_THAT(Run(mismatch),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tiling.platform.npu_arch: DAV_2201, but the request's platform "
                                 "is DAV_3510")));
  pb::ExecuteRequest unknown = request;
  unknown.mutable_tiling()->mutable_platform()->set_npu_arch("DAV_9999");
  EXPECT_THAT(Run(unknown), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("tiling.platform.npu_arch: unknown NPU")));
  // An answer from before the field: DAV_3510.
  pb::ExecuteRequest old_answer = request;
  old_answer.mutable_tiling()->mutable_platform()->clear_npu_arch();
  EXPECT_THAT(Run(old_answer), IsOk());
}

// CANN's plan that overflows a buffer (GetTiling answers it with a warning)
// is a hazard Execute names instead of running it.
TEST_F(ExecutePipelineTest, CannPlanThatOverflowsABufferIsAHazard) {
  tl::MatmulProblem problem =
      ::npu::testing::Batched(1, 200, 64, {5, 256, 8}, {5, 1, 8}, tl::DataType::kFloat32);
  problem.trans_b = true;
  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem);
  ASSERT_THAT(decision, IsOk());
  ASSERT_EQ(decision->plan.warnings.size(), 1u);
  pb::ExecuteRequest request = RequestFor(problem);
  request.set_timing_only(true);
  EXPECT_THAT(Run(request),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::AllOf(HasSubstr("hazard: CANN's ITER_BATCH_BROADCAST_BASICAPI"),
                                        HasSubstr("l0b_bytes=65536"))));
}

// A kernel schedule is prepared on any built-in platform, overrides
// included, with its defaults filled in for the echo; no CANN tiling is
// decided.
TEST_F(ExecutePipelineTest, KernelSchedulePreparesOnEveryPlatform) {
  for (const tl::ChipSpec& builtin : tl::BuiltinPlatforms()) {
    SCOPED_TRACE(builtin.name);
    pb::ExecuteRequest request = RequestFor(Problem(256, 256, 512));
    request.set_platform(builtin.name);
    request.mutable_platform_overrides()->set_cube_freq_mhz(1000);
    *request.mutable_kernel_schedule() = SmallKernel();
    absl::StatusOr<PreparedExecute> prepared = PrepareExecute(request, registry_, options_);
    ASSERT_THAT(prepared, IsOk());
    ASSERT_TRUE(prepared->kernel.has_value());
    EXPECT_EQ(prepared->kernel->kind, emu::KernelScheduleKind::kRoundRobinTiles);
    EXPECT_EQ(prepared->kernel->block_dim, 4u);
    EXPECT_EQ(prepared->chip.name, builtin.name);
    EXPECT_EQ(prepared->chip.npu_arch, builtin.npu_arch);
    EXPECT_EQ(prepared->chip.cube_freq_mhz, 1000u);
    EXPECT_TRUE(prepared->plan.strategy.empty());
    EXPECT_EQ(prepared->input_source, pb::INPUT_SOURCE_SEED);
    EXPECT_EQ(prepared->kernel_schedule.depth_a1(), 2u);
    EXPECT_TRUE(prepared->kernel_schedule.l0_double_buffer());
    EXPECT_EQ(prepared->kernel_schedule.epilogue(), pb::EPILOGUE_NONE);
  }
}

// The limits a CANN plan gets: numerics past --max_execute_work, and a
// kernel whose tiles are too many to emulate, both refused before anything
// runs.
TEST_F(ExecutePipelineTest, KernelScheduleWorkLimitsAreResourceExhausted) {
  pb::ExecuteRequest request = RequestFor(Problem(4096, 4096, 4096));
  *request.mutable_kernel_schedule() = SmallKernel();
  EXPECT_THAT(Run(request), StatusIs(absl::StatusCode::kResourceExhausted,
                                     HasSubstr("(--max_execute_work); use timing_only")));
  pb::ExecuteRequest tiny = RequestFor(Problem(8192, 8192, 8192));
  tiny.set_timing_only(true);
  *tiny.mutable_kernel_schedule() = SmallKernel();
  EXPECT_THAT(Run(tiny), StatusIs(absl::StatusCode::kResourceExhausted,
                                  HasSubstr("--max_execute_simulated_ops")));
}

// Needs the emulator's EmulateKernel(): a kernel schedule runs, with
// numerics against the fp64 reference, and the answer carries the schedule
// and the chip instead of a CANN tiling.
TEST_F(ExecutePipelineTest, KernelScheduleRunsWithNumericsAgainstTheReference) {
  pb::ExecuteRequest request = RequestFor(Problem(256, 192, 320));
  request.set_seed(3);
  *request.mutable_kernel_schedule() = SmallKernel();
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_FALSE(response->has_tiling());
  EXPECT_EQ(response->kernel_schedule().kind(), pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES);
  EXPECT_EQ(response->platform().name(), "ascend950pr");
  EXPECT_TRUE(response->accuracy().passed());
  EXPECT_LE(response->accuracy().worst_bound_ratio(), 1.0);
  EXPECT_GT(response->timing().predicted_cycles(), 0u);
  EXPECT_GT(response->timing().msprof().task_duration_us(), 0.0);
  EXPECT_GT(response->timing().msprof().aic_mac_time_us(), 0.0);
}

// Needs the emulator's EmulateKernel(): timing only on the Atlas A2.
TEST_F(ExecutePipelineTest, KernelScheduleTimingOnlyOnTheA2) {
  pb::ExecuteRequest request = RequestFor(Problem(1024, 1024, 1024));
  request.set_platform("ascend910b1");
  request.set_timing_only(true);
  *request.mutable_kernel_schedule() = SmallKernel(24);
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_FALSE(response->has_accuracy());
  EXPECT_EQ(response->input_source(), pb::INPUT_SOURCE_NONE);
  EXPECT_EQ(response->platform().npu_arch(), "DAV_2201");
  EXPECT_GT(response->timing().msprof().task_duration_us(), 0.0);
}

TEST_F(ExecutePipelineTest, CancellationStopsTheRun) {
  pb::ExecuteRequest request = RequestFor(Problem(512, 512, 512));
  std::atomic<bool> cancelled{true};
  EXPECT_THAT(Run(request, &cancelled), StatusIs(absl::StatusCode::kCancelled));
}

// QuantBatchMatmulV3 runs CANN's plan on the emulator: its kernel's tile
// loops, the dequantization path of its mode and that path's bound.
struct QuantExecuteCase {
  const char* name;
  tl::MatmulProblem problem;
  const char* strategy;
  const char* path;  // the bound rule's first word
  bool aiv_epilogue;
};

class QuantExecuteTest : public ExecutePipelineTest,
                         public ::testing::WithParamInterface<QuantExecuteCase> {};

TEST_P(QuantExecuteTest, RunsCannsPlanWithinItsPathsBound) {
  const QuantExecuteCase& c = GetParam();
  pb::ExecuteRequest seeded = RequestFor(c.problem);
  seeded.set_seed(7);
  seeded.set_return_c(true);
  absl::StatusOr<pb::ExecuteResponse> seeded_answer = Run(seeded);
  ASSERT_THAT(seeded_answer, IsOk());
  EXPECT_EQ(seeded_answer->tiling().strategy(), c.strategy);
  EXPECT_TRUE(seeded_answer->accuracy().passed());
  EXPECT_EQ(seeded_answer->accuracy().elements_over_bound(), 0u);
  EXPECT_THAT(seeded_answer->accuracy().bound_rule(), ::testing::StartsWith(c.path));
  EXPECT_GT(seeded_answer->timing().predicted_cycles(), 0u);
  // The vector dequantization runs on the AIVs of the mix kernels only.
  EXPECT_EQ(seeded_answer->timing().msprof().aiv_cores() > 0, c.aiv_epilogue);
  EXPECT_EQ(seeded_answer->c().dtype(), DataTypeToProto(c.problem.dtype_c));

  // The same operands inline give the same C, accuracy and timing.
  pb::ExecuteRequest inlined = seeded;
  SetInlineFromSeed(inlined, c.problem, 7);
  absl::StatusOr<pb::ExecuteResponse> inlined_answer = Run(inlined);
  ASSERT_THAT(inlined_answer, IsOk());
  EXPECT_EQ(inlined_answer->input_source(), pb::INPUT_SOURCE_INLINE);
  EXPECT_EQ(inlined_answer->c().data(), seeded_answer->c().data());
  EXPECT_EQ(inlined_answer->accuracy().SerializeAsString(),
            seeded_answer->accuracy().SerializeAsString());
  EXPECT_EQ(inlined_answer->timing().SerializeAsString(),
            seeded_answer->timing().SerializeAsString());
}

QuantExecuteCase PerChannelInt8() {
  return {"PerChannelInt8",
          QuantProblem(96, 160, 512, tl::DataType::kInt8, tl::DataType::kFloat16,
                       {true, tl::DataType::kUint64, {160}}),
          "CUBE_BASIC_API_ASW", "fixpipe", false};
}

QuantExecuteCase PerTokenInt8() {
  return {"PerTokenInt8",
          QuantProblem(96, 160, 512, tl::DataType::kInt8, tl::DataType::kBFloat16,
                       {true, tl::DataType::kFloat32, {160}}, {true, tl::DataType::kFloat32, {96}}),
          "MIX_ASW", "vector_epilogue", true};
}

QuantExecuteCase MxFp8() {
  tl::MatmulProblem p =
      QuantProblem(128, 256, 512, tl::DataType::kFloat8E4M3, tl::DataType::kBFloat16,
                   {true, tl::DataType::kFloat8E8M0, {256, 8, 2}},
                   {true, tl::DataType::kFloat8E8M0, {128, 8, 2}});
  p.trans_b = true;
  p.quant.group_size_m = 1;
  p.quant.group_size_n = 1;
  p.quant.group_size_k = 32;
  return {"MxFp8", p, "MX_BASIC_API_ASW", "mx", false};
}

// An NZ x2 of int8 (storage [n / 32, k / 16, 16, 32]): the
// kernels that need one; its values travel in the ND layout.
tl::MatmulProblem WithNzWeight(tl::MatmulProblem p) {
  p.format_b = tl::Format::kFractalNz;
  p.storage_shape_b = {p.n / 32, p.k / 16, 16, 32};
  return p;
}

QuantExecuteCase MixBasicNz() {
  return {"MixBasicNz",
          WithNzWeight(QuantProblem(64, 1024, 256, tl::DataType::kInt8, tl::DataType::kBFloat16,
                                    {true, tl::DataType::kFloat32, {1024}},
                                    {true, tl::DataType::kFloat32, {64}})),
          "MIX_BASIC_API_ASW", "vector_epilogue", true};
}

QuantExecuteCase CubeAswWithoutTensorApi() {
  tl::MatmulProblem p =
      WithNzWeight(QuantProblem(64, 1024, 256, tl::DataType::kInt8, tl::DataType::kFloat16,
                                {true, tl::DataType::kUint64, {1024}}));
  p.quant.tensor_api = false;
  return {"CubeAswWithoutTensorApi", p, "CUBE_ASW", "fixpipe", false};
}

INSTANTIATE_TEST_SUITE_P(Modes, QuantExecuteTest,
                         ::testing::Values(PerChannelInt8(), PerTokenInt8(), MxFp8(), MixBasicNz(),
                                           CubeAswWithoutTensorApi()),
                         [](const ::testing::TestParamInfo<QuantExecuteCase>& info) {
                           return std::string(info.param.name);
                         });

TEST_F(ExecutePipelineTest, QuantInlineInputsNameTheMissingScale) {
  const tl::MatmulProblem problem = PerChannelInt8().problem;
  pb::ExecuteRequest request = RequestFor(problem);
  SetInlineFromSeed(request, problem, 1);
  request.mutable_inputs()->clear_scale();
  EXPECT_THAT(Run(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("inputs.scale: required: problem.quant.scale")));
  // A scale for an operator that takes none is named too.
  const tl::MatmulProblem float_problem = Problem(64, 64, 64);
  pb::ExecuteRequest float_request = RequestFor(float_problem);
  SetInlineFromSeed(float_request, float_problem, 1);
  *float_request.mutable_inputs()->mutable_scale() = *request.mutable_inputs()->mutable_a();
  EXPECT_THAT(Run(float_request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("inputs.scale: given")));
}


// GroupedMatmul: Execute runs a grouped plan over the token histogram (a
// registry whose one grouped strategy answers the hand-built no-quant plan,
// whatever strategies the engine registers), answers how the groups were
// split, reads inline tensor lists and names bad ones.
class HandBuiltGroupedStrategy : public tl::Strategy {
 public:
  std::string_view name() const override { return "HAND_BUILT_GROUPED"; }
  tl::Capability IsCapable(const tl::MatmulProblem& problem, const tl::ProblemFacts& /*facts*/,
                           const tl::ChipSpec& /*chip*/) const override {
    return problem.op == tl::MatmulOp::kGroupedMatmul ? tl::Capability::Yes(tl::LazyText())
                                                      : tl::Capability::No(tl::LazyText());
  }
  absl::StatusOr<tl::TilingPlan> DoTiling(const tl::MatmulProblem& problem,
                                          const tl::ProblemFacts& /*facts*/,
                                          const tl::ChipSpec& /*chip*/) const override {
    return ::npu::testing::NoQuantPlan(problem, 16, 64, 128, 32);
  }
};

class ExecuteGroupedTest : public ::testing::Test {
 protected:
  ExecuteGroupedTest() {
    EXPECT_TRUE(registry_
                    .Add(std::make_unique<HandBuiltGroupedStrategy>(),
                         tl::MatmulOp::kGroupedMatmul)
                    .ok());
  }
  absl::StatusOr<pb::ExecuteResponse> Run(const pb::ExecuteRequest& request) {
    absl::StatusOr<PreparedExecute> prepared = PrepareExecute(request, registry_, options_);
    if (!prepared.ok()) return prepared.status();
    pb::ExecuteResponse response;
    absl::Status status = RunExecute(*prepared, options_, nullptr, &response);
    if (!status.ok()) return status;
    return response;
  }
  static tl::MatmulProblem Grouped() {
    ::npu::testing::GroupedSpec spec;
    spec.groups = 4;
    spec.m = 200;
    spec.n = 96;
    spec.k = 64;
    return ::npu::testing::GroupedProblem(spec);
  }
  static void SetInlineLists(pb::ExecuteRequest& request, const tl::MatmulProblem& problem,
                             uint64_t seed) {
    const emu::Tensors tensors = emu::RandomInputs(problem, seed);
    pb::GroupedExecuteInputs* g = request.mutable_inputs()->mutable_grouped();
    for (const emu::HostTensor& x : tensors.grouped[0]) *g->add_x() = TensorOf(x);
    for (const emu::HostTensor& w : tensors.grouped[1]) *g->add_weight() = TensorOf(w);
  }

  tl::StrategyRegistry registry_;
  ExecuteOptions options_;
};

TEST_F(ExecuteGroupedTest, WithoutAHistogramTheRowsAreSpreadEvenlyAndTheAnswerSaysSo) {
  absl::StatusOr<pb::ExecuteResponse> response = Run(RequestFor(Grouped()));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_TRUE(response->accuracy().passed()) << response->accuracy().bound_rule();
  ASSERT_EQ(response->notes_size(), 1);
  EXPECT_THAT(response->notes(0), HasSubstr("spread evenly"));
  EXPECT_THAT(response->token_histogram(), ::testing::ElementsAre(50, 50, 50, 50));
  EXPECT_GT(response->timing().predicted_cycles(), 0u);
  EXPECT_EQ(response->tiling().tiling_struct(), "GMMNoQuantTilingData");
}

TEST_F(ExecuteGroupedTest, AGivenHistogramRunsAndInlineListsGiveTheSeedsResult) {
  tl::MatmulProblem problem = Grouped();
  problem.grouped.token_histogram = {0, 170, 30, 0};
  pb::ExecuteRequest seeded = RequestFor(problem);
  seeded.set_seed(3);
  seeded.set_return_c(true);
  absl::StatusOr<pb::ExecuteResponse> a = Run(seeded);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->accuracy().passed());
  EXPECT_THAT(a->notes(0), HasSubstr("0,170,30,0 (the token_histogram given)"));
  pb::ExecuteRequest inline_request = RequestFor(problem);
  SetInlineLists(inline_request, problem, 3);
  inline_request.set_return_c(true);
  absl::StatusOr<pb::ExecuteResponse> b = Run(inline_request);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->input_source(), pb::INPUT_SOURCE_INLINE);
  EXPECT_EQ(a->c().data(), b->c().data());
  EXPECT_EQ(a->timing().predicted_cycles(), b->timing().predicted_cycles());
}

TEST_F(ExecuteGroupedTest, BadHistogramsAndListsAreInvalidArgumentsNamingTheField) {
  tl::MatmulProblem problem = Grouped();
  problem.grouped.token_histogram = {100, 100};
  EXPECT_THAT(Run(RequestFor(problem)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram has 2 entries, but the problem has 4")));
  problem.grouped.token_histogram = {100, 100, 1, 0};
  EXPECT_THAT(Run(RequestFor(problem)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grouped.token_histogram sums to 201, but x has M = 200")));
  problem = Grouped();
  pb::ExecuteRequest request = RequestFor(problem);
  SetInlineLists(request, problem, 1);
  request.mutable_inputs()->mutable_grouped()->mutable_weight(0)->add_shape(1);
  EXPECT_THAT(Run(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("inputs.grouped.weight[0].shape")));
  request = RequestFor(problem);
  SetInlineLists(request, problem, 1);
  *request.mutable_inputs()->mutable_a() = request.inputs().grouped().x(0);
  EXPECT_THAT(Run(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("inputs.a: given, but GroupedMatmul's tensors are its lists")));
}

}  // namespace
}  // namespace npu::server
