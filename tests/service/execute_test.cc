// Tests of server/service/execute.h: the Execute pipeline without a server.
#include "server/service/execute.h"

#include <atomic>
#include <string>

#include "emulator/emulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/convert.h"
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
                  absl::StatusCode::kNotFound, "platform: "}),
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

TEST_F(ExecutePipelineTest, CancellationStopsTheRun) {
  pb::ExecuteRequest request = RequestFor(Problem(512, 512, 512));
  std::atomic<bool> cancelled{true};
  EXPECT_THAT(Run(request, &cancelled), StatusIs(absl::StatusCode::kCancelled));
}

}  // namespace
}  // namespace npu::server
