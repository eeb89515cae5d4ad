// Tests of server/service/execute.h for BatchMatMulV3 and FusedMatMul:
// explicit tilings of the batch structs, batched and x3 operands on the
// wire, the work limits over every batch, and the errors naming fields.
#include <atomic>
#include <functional>
#include <string>

#include "emulator/emulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/convert.h"
#include "server/service/execute.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/tiling_data.h"
#include "tests/testing/status_matchers.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const tl::ChipSpec& Chip950() { return tl::BuiltinPlatforms().front(); }

tl::MatmulProblem Problem(tl::MatmulOp op, int64_t m, int64_t n, int64_t k, tl::DataType dtype) {
  tl::MatmulProblem p;
  p.op = op;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = p.dtype_c = p.dtype_bias = dtype;
  return p;
}

template <typename Field, size_t N>
tl::TilingData Words(const uint64_t (&words)[N]) {
  tl::TilingData data = tl::NewTilingData<Field>();
  for (size_t i = 0; i < N && i < data.fields.size(); ++i) data.fields[i].value = words[i];
  return data;
}

// CANN's golden BatchMatMulV3_950_test_iterbatch_basicapi_fixpip_opt_fp32_01.
tl::MatmulProblem IterBatchProblem() {
  tl::MatmulProblem p = Problem(tl::MatmulOp::kBatchMatMulV3, 47, 77, 8, tl::DataType::kFloat32);
  p.batch.a = p.batch.b = {10, 9};
  p.trans_b = true;
  p.hf32 = true;
  return p;
}
tl::TilingPlan IterBatchPlan() {
  tl::TilingPlan plan;
  plan.strategy = "ITER_BATCH_BASICAPI";
  plan.key = *tl::TilingKey::Decode(0x200141);
  plan.block_dim = 32;
  plan.kernel_type = tl::KernelType::kMixed1To2;
  plan.data = Words<tl::IterBatchField>({47, 77, 8, 90, 3, 3, 1, 48, 80, 16, 0, 1, 0, 0});
  return plan;
}

// CANN's golden FusedMatMul_950_bmm_add_fixp1v2 with 24 batches.
tl::MatmulProblem FusedAddProblem() {
  tl::MatmulProblem p = Problem(tl::MatmulOp::kFusedMatMul, 150, 150, 8, tl::DataType::kFloat32);
  p.fused.op = tl::FusedOp::kAdd;
  p.batch.a = p.batch.b = {24};
  p.fused.x3_shape = {24, 150, 150};
  p.hf32 = true;
  return p;
}
tl::TilingPlan FusedAddPlan() {
  tl::TilingPlan plan;
  plan.strategy = "ITER_BATCH_BASICAPI_INHERITED_FROM_BMMV3";
  plan.key = *tl::TilingKey::Decode(0x1200101, tl::KeyLayout::kFused);
  plan.block_dim = 32;
  plan.kernel_type = tl::KernelType::kMixed1To2;
  plan.data = Words<tl::IterBatchField>({150, 150, 8, 24, 8, 1, 1, 160, 160, 16, 0, 24, 0, 0});
  return plan;
}

pb::ExecuteRequest RequestFor(const tl::MatmulProblem& problem, const tl::TilingPlan& plan) {
  pb::ExecuteRequest request;
  request.set_id("b");
  *request.mutable_problem() = ProblemToProto(problem);
  tl::TilingDecision decision;
  decision.plan = plan;
  DecisionToProto(decision, Chip950(), request.mutable_tiling());
  return request;
}

pb::Tensor TensorOf(const emu::HostTensor& tensor) {
  pb::Tensor out;
  out.set_dtype(DataTypeToProto(tensor.dtype));
  for (int64_t dim : tensor.shape) out.add_shape(dim);
  out.set_data(tensor.bytes.data(), tensor.bytes.size());
  return out;
}

class ExecuteBatchTest : public ::testing::Test {
 protected:
  absl::StatusOr<pb::ExecuteResponse> Run(const pb::ExecuteRequest& request) {
    absl::StatusOr<PreparedExecute> prepared = PrepareExecute(request, registry_, options_);
    if (!prepared.ok()) return prepared.status();
    pb::ExecuteResponse response;
    absl::Status status = RunExecute(*prepared, options_, nullptr, &response);
    if (!status.ok()) return status;
    return response;
  }

  tl::StrategyRegistry registry_ = tl::MakeBuiltinRegistry();
  ExecuteOptions options_;
};

TEST_F(ExecuteBatchTest, IterBatchTilingRunsEveryBatch) {
  pb::ExecuteRequest request = RequestFor(IterBatchProblem(), IterBatchPlan());
  request.set_seed(7);
  request.set_return_c(true);
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_TRUE(response->explicit_tiling());
  EXPECT_EQ(response->tiling().tiling_struct(), "BatchMatMulV3IterBatchBasicTilingData");
  EXPECT_TRUE(response->accuracy().passed());
  EXPECT_THAT(response->c().shape(), ElementsAre(10, 9, 47, 77));
  EXPECT_EQ(response->timing().aic_cores(), 30u);
  // ND_FIXPIPE_1_2: C leaves through both AIVs of every busy AIC.
  int aiv_with_work = 0;
  for (const pb::CoreTiming& core : response->timing().cores()) {
    aiv_with_work += core.kind() == pb::CORE_KIND_AIV && core.units() > 0;
  }
  EXPECT_EQ(aiv_with_work, 60);
}

TEST_F(ExecuteBatchTest, FusedAddTakesX3InlineOrFromTheSeed) {
  const tl::MatmulProblem problem = FusedAddProblem();
  pb::ExecuteRequest seeded = RequestFor(problem, FusedAddPlan());
  seeded.set_seed(11);
  seeded.set_return_c(true);
  absl::StatusOr<pb::ExecuteResponse> from_seed = Run(seeded);
  ASSERT_THAT(from_seed, IsOk());
  EXPECT_TRUE(from_seed->accuracy().passed());

  pb::ExecuteRequest inline_request = seeded;
  const emu::Tensors tensors = emu::RandomInputs(problem, 11);
  ASSERT_TRUE(tensors.x3.has_value());
  *inline_request.mutable_inputs()->mutable_a() = TensorOf(tensors.a);
  *inline_request.mutable_inputs()->mutable_b() = TensorOf(tensors.b);
  *inline_request.mutable_inputs()->mutable_x3() = TensorOf(*tensors.x3);
  absl::StatusOr<pb::ExecuteResponse> from_inline = Run(inline_request);
  ASSERT_THAT(from_inline, IsOk());
  EXPECT_EQ(from_inline->input_source(), pb::INPUT_SOURCE_INLINE);
  EXPECT_EQ(from_inline->c().data(), from_seed->c().data());

  // Without x3 an add has nothing to add.
  inline_request.mutable_inputs()->clear_x3();
  EXPECT_THAT(Run(inline_request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("inputs.x3: required")));
  // A batch of A with the 2-D shape is named with the layout it needs.
  *inline_request.mutable_inputs()->mutable_x3() = TensorOf(*tensors.x3);
  inline_request.mutable_inputs()->mutable_a()->set_shape(0, 150);
  EXPECT_THAT(Run(inline_request), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("inputs.a.shape: [150,150,8]")));
}

TEST_F(ExecuteBatchTest, WorkLimitsCountEveryBatch) {
  options_.max_numeric_macs = 47 * 77 * 8 * 10;  // ten batches' worth, 90 asked
  pb::ExecuteRequest request = RequestFor(IterBatchProblem(), IterBatchPlan());
  EXPECT_THAT(Run(request),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("m * n * k * batches")));
  request.set_timing_only(true);
  EXPECT_THAT(Run(request), IsOk());
}

struct BadTiling {
  std::string name;
  std::function<void(tl::MatmulProblem&, pb::ExecuteRequest&)> edit;
  std::string message;
};

class ExecuteBatchErrorTest : public ExecuteBatchTest,
                              public ::testing::WithParamInterface<BadTiling> {};

TEST_P(ExecuteBatchErrorTest, NamesTheField) {
  tl::MatmulProblem problem = IterBatchProblem();
  pb::ExecuteRequest request = RequestFor(problem, IterBatchPlan());
  request.set_timing_only(true);
  GetParam().edit(problem, request);
  *request.mutable_problem() = ProblemToProto(problem);
  EXPECT_THAT(Run(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

pb::TilingField* FieldNamed(pb::ExecuteRequest& request, const std::string& name) {
  for (pb::TilingField& field : *request.mutable_tiling()->mutable_fields()) {
    if (field.name() == name) return &field;
  }
  return nullptr;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ExecuteBatchErrorTest,
    ::testing::Values(BadTiling{"BatchCount",
                                [](tl::MatmulProblem&, pb::ExecuteRequest& r) {
                                  FieldNamed(r, "b")->set_value(91);
                                },
                                "tiling.fields[b]: 91, but the C batches is 90"},
                      BadTiling{"IterBatchL1Zero",
                                [](tl::MatmulProblem&, pb::ExecuteRequest& r) {
                                  FieldNamed(r, "iterBatchL1")->set_value(0);
                                },
                                "tiling.fields[iterBatchL1]"},
                      BadTiling{"IterBatchL1Overflow",
                                [](tl::MatmulProblem&, pb::ExecuteRequest& r) {
                                  FieldNamed(r, "iterBatchL1")->set_value(500);
                                },
                                "iterBatchL1=500 overflows L1"},
                      BadTiling{"StructOfAnotherBatchModel",
                                [](tl::MatmulProblem&, pb::ExecuteRequest& r) {
                                  r.mutable_tiling()->set_tiling_struct(
                                      "BatchMatMulV3BasicTilingData");
                                },
                                "reads BatchMatMulV3IterBatchBasicTilingData"},
                      BadTiling{"BatchDimsThatDoNotBroadcast",
                                [](tl::MatmulProblem& p, pb::ExecuteRequest&) {
                                  p.batch.b = {10, 3};
                                },
                                "break the broadcast rule"},
                      BadTiling{"BatchModelOutOfRange",
                                [](tl::MatmulProblem&, pb::ExecuteRequest& r) {
                                  r.mutable_tiling()->mutable_key()->set_batch_model(9);
                                  r.mutable_tiling()->set_tiling_key(0);
                                },
                                "tiling.key.batch_model"}),
    [](const ::testing::TestParamInfo<BadTiling>& info) { return info.param.name; });

TEST_F(ExecuteBatchTest, FusedKeyMustCarryTheProblemsOp) {
  tl::MatmulProblem problem = FusedAddProblem();
  pb::ExecuteRequest request = RequestFor(problem, FusedAddPlan());
  request.set_timing_only(true);
  problem.fused.op = tl::FusedOp::kMul;
  *request.mutable_problem() = ProblemToProto(problem);
  EXPECT_THAT(Run(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("tiling.key.fused_op: ADD, but problem.fused_op")));
}

TEST_F(ExecuteBatchTest, BatchViewsAreUnimplemented) {
  tl::MatmulProblem problem = IterBatchProblem();
  problem.batch.a = problem.batch.b = {90};  // a view has one batch dim
  problem.batch.b_interleaved = true;
  pb::ExecuteRequest request = RequestFor(problem, IterBatchPlan());
  request.set_timing_only(true);
  EXPECT_THAT(Run(request),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("b_batch_interleaved")));
}

TEST_F(ExecuteBatchTest, EnginePlanOfTheHighLevelStructRunsEveryBatch) {
  // Broadcast batches A [4,1] x B [1,3] with transposed A: the engine ends
  // in BASE (the 90-word BatchMatMulV3TilingData), which Execute runs.
  tl::MatmulProblem p = Problem(tl::MatmulOp::kBatchMatMulV3, 77, 93, 45, tl::DataType::kFloat16);
  p.trans_a = true;
  p.batch.a = {4, 1};
  p.batch.b = {1, 3};
  p.batch.c = {4, 3};
  pb::ExecuteRequest request;
  request.set_id("base");
  *request.mutable_problem() = ProblemToProto(p);
  request.set_seed(5);
  request.set_return_c(true);
  absl::StatusOr<pb::ExecuteResponse> response = Run(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_FALSE(response->explicit_tiling());
  EXPECT_EQ(response->tiling().strategy(), "BASE");
  EXPECT_EQ(response->tiling().tiling_struct(), "BatchMatMulV3TilingData");
  EXPECT_TRUE(response->accuracy().passed());
  EXPECT_THAT(response->c().shape(), ElementsAre(4, 3, 77, 93));
  EXPECT_GT(response->timing().aic_cores(), 0u);
}

}  // namespace
}  // namespace npu::server
