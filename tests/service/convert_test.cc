#include "server/service/convert.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/operator_table.h"
#include "tests/service/test_server.h"
#include "tests/testing/status_matchers.h"

namespace npu::server {
namespace {

using ::npu::server::testing::StreamKRequest;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

TEST(ProblemConversionTest, EveryFieldRoundTrips) {
  pb::MatmulProblem wire;
  wire.set_m(100);
  wire.set_n(200);
  wire.set_k(300);
  wire.set_dtype_a(pb::DATA_TYPE_BFLOAT16);
  wire.set_dtype_b(pb::DATA_TYPE_BFLOAT16);
  wire.set_dtype_c(pb::DATA_TYPE_FLOAT32);
  wire.set_has_bias(true);
  wire.set_dtype_bias(pb::DATA_TYPE_FLOAT32);
  wire.set_trans_a(true);
  wire.set_trans_b(true);
  wire.set_format_a(pb::FORMAT_ND);
  wire.set_format_b(pb::FORMAT_FRACTAL_NZ);
  wire.set_format_c(pb::FORMAT_ND);
  wire.add_storage_shape_b(19);
  wire.add_storage_shape_b(13);
  wire.add_storage_shape_b(16);
  wire.add_storage_shape_b(16);
  wire.set_hf32(true);
  wire.set_force_grp_acc_fp32(true);
  wire.set_deterministic_level(2);
  wire.set_avoid_tensor_api(true);
  wire.mutable_a_slice()->set_enabled(true);
  wire.mutable_a_slice()->set_rank(3);
  wire.mutable_a_slice()->set_batch(4);
  wire.mutable_a_slice()->set_batch_stride(5000);
  wire.mutable_a_slice()->set_row_stride(700);

  const tl::MatmulProblem problem = ProblemFromProto(wire);
  EXPECT_EQ(problem.m, 100);
  EXPECT_EQ(problem.dtype_a, tl::DataType::kBFloat16);
  EXPECT_EQ(problem.dtype_c, tl::DataType::kFloat32);
  EXPECT_EQ(problem.dtype_bias, tl::DataType::kFloat32);
  EXPECT_EQ(problem.format_b, tl::Format::kFractalNz);
  EXPECT_EQ(problem.storage_shape_b, (std::vector<int64_t>{19, 13, 16, 16}));
  EXPECT_TRUE(problem.a_slice.enabled);
  EXPECT_EQ(problem.a_slice.batch_stride, 5000);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ProblemToProto(problem), wire))
      << ProblemToProto(problem).ShortDebugString();
}

TEST(ProblemConversionTest, OperatorFieldsRoundTrip) {
  pb::MatmulProblem wire = StreamKRequest().problem();
  wire.set_format_a(pb::FORMAT_ND);  // the canonical form spells formats out
  wire.set_format_c(pb::FORMAT_ND);
  wire.set_op(pb::OPERATOR_FUSED_MATMUL);
  wire.add_batch_a(3);
  wire.add_batch_a(5);
  wire.add_batch_b(3);
  wire.add_batch_b(5);
  wire.add_batch_c(3);
  wire.add_batch_c(5);
  wire.add_batch_bias(15);
  wire.set_fused_op(pb::FUSED_OP_MUL);
  wire.add_x3_shape(15);
  wire.add_x3_shape(wire.m());
  wire.add_x3_shape(wire.n());
  wire.set_inner_precise(1);
  wire.set_a_batch_interleaved(true);
  wire.set_b_batch_interleaved(true);

  const tl::MatmulProblem problem = ProblemFromProto(wire);
  EXPECT_EQ(problem.op, tl::MatmulOp::kFusedMatMul);
  EXPECT_EQ(problem.batch.a, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(problem.batch.bias, (std::vector<int64_t>{15}));
  EXPECT_EQ(problem.fused.op, tl::FusedOp::kMul);
  EXPECT_EQ(problem.fused.x3_shape.size(), 3u);
  EXPECT_EQ(problem.fused.inner_precise, 1);
  EXPECT_TRUE(problem.batch.b_interleaved);
  EXPECT_FALSE(problem.IsPlainMatMulV3());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ProblemToProto(problem), wire))
      << ProblemToProto(problem).ShortDebugString();
}

// Appends `dims` to a repeated int64 field (this protobuf has no
// initializer-list Add()).
void AddDims(google::protobuf::RepeatedField<int64_t>* field, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) field->Add(d);
}

// GroupedMatmul's group round-trips; an empty storage shape is the
// origin's, an absent group_type CANN's -1, and only the op and the group
// go on the wire.
TEST(ProblemConversionTest, GroupedInputsRoundTrip) {
  pb::MatmulProblem wire;
  wire.set_op(pb::OPERATOR_GROUPED_MATMUL);
  pb::GroupedInputs* g = wire.mutable_grouped();
  g->mutable_x()->set_dtype(pb::DATA_TYPE_BFLOAT16);
  g->mutable_x()->set_format(pb::FORMAT_ND);  // the canonical form spells ND
  AddDims(g->mutable_x()->add_instances()->mutable_origin(), {128, 512});
  pb::GroupedTensorList* w = g->mutable_weight();
  w->set_dtype(pb::DATA_TYPE_BFLOAT16);
  w->set_format(pb::FORMAT_FRACTAL_NZ);
  pb::GroupedShape* shape = w->add_instances();
  AddDims(shape->mutable_origin(), {4, 512, 256});
  AddDims(shape->mutable_storage(), {4, 8, 32, 16, 32});
  g->mutable_group_list()->set_dtype(pb::DATA_TYPE_INT64);
  g->mutable_group_list()->set_format(pb::FORMAT_ND);
  g->mutable_group_list()->add_instances()->mutable_origin()->Add(4);
  g->set_split_item(3);
  g->set_group_type(0);
  g->set_group_list_type(1);
  g->set_transpose_weight(true);
  g->mutable_tuning_config()->Add(0);
  AddDims(g->mutable_token_histogram(), {100, 20, 8, 0});
  const tl::MatmulProblem problem = ProblemFromProto(wire);
  EXPECT_EQ(problem.op, tl::MatmulOp::kGroupedMatmul);
  const tl::GroupedTensorList& x = problem.grouped[tl::GroupedTensor::kX];
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x.instances[0].storage, x.instances[0].origin);
  EXPECT_EQ(problem.grouped[tl::GroupedTensor::kWeight].format, tl::Format::kFractalNz);
  EXPECT_EQ(problem.grouped.token_histogram, (std::vector<int64_t>{100, 20, 8, 0}));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ProblemToProto(problem), wire))
      << ProblemToProto(problem).DebugString();
  g->clear_group_type();
  EXPECT_EQ(ProblemFromProto(wire).grouped.group_type, tl::kGroupTypeNone);
}

TEST(ProblemConversionTest, MatMulV3StaysUnsetSoOldCacheKeysHold) {
  pb::MatmulProblem wire = StreamKRequest().problem();
  wire.set_op(pb::OPERATOR_MATMUL_V3);
  const tl::MatmulProblem problem = ProblemFromProto(wire);
  EXPECT_TRUE(problem.IsPlainMatMulV3());
  const pb::MatmulProblem canonical = ProblemToProto(problem);
  EXPECT_EQ(canonical.op(), pb::OPERATOR_UNSPECIFIED);
  EXPECT_EQ(canonical.SerializeAsString(),
            ProblemToProto(ProblemFromProto(StreamKRequest().problem())).SerializeAsString());
}

// The operator table's wire values are the proto's enum: each names the
// OPERATOR_ value of its CLI name, and a problem keeps its operator through
// the wire.
TEST(ProblemConversionTest, OperatorTableMatchesTheWireEnum) {
  for (const tl::OperatorSpec& spec : tl::Operators()) {
    const std::string want =
        absl::AsciiStrToUpper(absl::StrCat("OPERATOR_", std::string(spec.cli_name)));
    EXPECT_EQ(pb::Operator_Name(static_cast<pb::Operator>(spec.wire_value)), want);
    pb::MatmulProblem wire = StreamKRequest().problem();
    wire.set_op(static_cast<pb::Operator>(spec.wire_value));
    EXPECT_EQ(ProblemFromProto(wire).op, spec.op) << want;
    tl::MatmulProblem problem = ProblemFromProto(StreamKRequest().problem());
    problem.op = spec.op;
    EXPECT_EQ(ProblemToProto(problem).op(),
              spec.wire_default ? pb::OPERATOR_UNSPECIFIED : wire.op());
  }
}

TEST(ProblemConversionTest, DefaultsAreCanonical) {
  pb::MatmulProblem wire = StreamKRequest().problem();
  wire.set_format_a(pb::FORMAT_UNSPECIFIED);
  wire.set_dtype_bias(pb::DATA_TYPE_FLOAT32);  // no bias: dropped
  const pb::MatmulProblem canonical = ProblemToProto(ProblemFromProto(wire));
  EXPECT_EQ(canonical.format_a(), pb::FORMAT_ND);
  EXPECT_EQ(canonical.dtype_bias(), pb::DATA_TYPE_UNSPECIFIED);
  EXPECT_FALSE(canonical.has_a_slice());
}

TEST(ResolveChipTest, DefaultProfileWithOverrides) {
  pb::TilingRequest request = StreamKRequest();
  request.mutable_platform_overrides()->set_aic_num(24);
  request.mutable_platform_overrides()->set_l2_bytes(64 << 20);
  absl::StatusOr<tl::ChipSpec> chip = ResolveChip(request);
  ASSERT_TRUE(chip.ok()) << chip.status();
  EXPECT_EQ(chip->name, "ascend950pr");
  EXPECT_EQ(chip->aic_num, 24u);
  EXPECT_EQ(chip->aiv_num, 64u);
  EXPECT_EQ(chip->l2_bytes, 64u << 20);
  EXPECT_EQ(chip->l1_bytes, 512u * 1024);
}

// ResolveChip() answers a built-in profile without overrides unchecked:
// every profile must pass the checks an overridden one goes through.
TEST(ResolveChipTest, EveryBuiltinProfilePassesTheOverrideChecks) {
  for (const tl::ChipSpec& builtin : tl::BuiltinPlatforms()) {
    SCOPED_TRACE(builtin.name);
    pb::TilingRequest request = StreamKRequest();
    request.set_platform(builtin.name);
    request.mutable_platform_overrides();  // present and empty: the checked path
    absl::StatusOr<tl::ChipSpec> checked = ResolveChip(request);
    ASSERT_TRUE(checked.ok()) << checked.status();
    request.clear_platform_overrides();
    absl::StatusOr<tl::ChipSpec> shipped = ResolveChip(request);
    ASSERT_TRUE(shipped.ok()) << shipped.status();
    EXPECT_EQ(ChipToProto(*checked).SerializeAsString(), ChipToProto(*shipped).SerializeAsString());
  }
}

// The chip table's wire entries name the proto fields of the same name, in
// both messages, and cover every numeric field of each.
TEST(ChipFieldWireTest, MatchesTheProtoDescriptors) {
  const google::protobuf::Descriptor* spec = pb::ChipSpec::descriptor();
  const google::protobuf::Descriptor* overrides = pb::PlatformOverrides::descriptor();
  // + name and npu_arch, which are not numeric figures (nor overridable).
  ASSERT_EQ(static_cast<size_t>(spec->field_count()), tl::kChipFieldCount + 2);
  ASSERT_NE(spec->FindFieldByName("npu_arch"), nullptr);
  EXPECT_EQ(overrides->FindFieldByName("npu_arch"), nullptr);
  ASSERT_EQ(static_cast<size_t>(overrides->field_count()), tl::kChipFieldCount);
  for (size_t i = 0; i < tl::kChipFieldCount; ++i) {
    const std::string name(tl::kChipFields[i].name);
    ASSERT_NE(spec->FindFieldByNumber(kChipFieldWire[i].spec_number), nullptr) << name;
    EXPECT_EQ(spec->FindFieldByNumber(kChipFieldWire[i].spec_number)->name(), name);
    ASSERT_NE(overrides->FindFieldByNumber(kChipFieldWire[i].override_number), nullptr) << name;
    EXPECT_EQ(overrides->FindFieldByNumber(kChipFieldWire[i].override_number)->name(), name);
    // Accessors of the right field: a distinct value per field survives
    // both messages.
    pb::PlatformOverrides o;
    EXPECT_FALSE(kChipFieldWire[i].has_override(o)) << name;
    kChipFieldWire[i].set_override(o, 1000 + i);
    EXPECT_TRUE(kChipFieldWire[i].has_override(o)) << name;
    EXPECT_EQ(kChipFieldWire[i].override_value(o), 1000 + i) << name;
    const google::protobuf::FieldDescriptor* field =
        overrides->FindFieldByNumber(kChipFieldWire[i].override_number);
    EXPECT_TRUE(o.GetReflection()->HasField(o, field)) << name;
    pb::ChipSpec c;
    kChipFieldWire[i].set_spec(c, 2000 + i);
    EXPECT_EQ(kChipFieldWire[i].spec_value(c), 2000 + i) << name;
  }
}

TEST(ChipFieldWireTest, ChipRoundTripsThroughProtoAndOverrides) {
  tl::ChipSpec chip = tl::BuiltinPlatforms().front();
  for (size_t i = 0; i < tl::kChipFieldCount; ++i) tl::kChipFields[i].Set(chip, 7 + i);
  const pb::ChipSpec wire = ChipToProto(chip);
  EXPECT_EQ(wire.name(), chip.name);
  EXPECT_EQ(wire.aic_num(), 7u);
  EXPECT_EQ(wire.l2_bytes_per_cycle(), 7u + tl::kChipFieldCount - 1);
  EXPECT_EQ(wire.l0c_bytes(), chip.l0c_bytes);
  pb::PlatformOverrides o;
  ChipFieldsToOverrides(chip, &o);
  EXPECT_EQ(o.bt_bytes(), chip.bt_bytes);
  EXPECT_EQ(o.cube_freq_mhz(), chip.cube_freq_mhz);
  EXPECT_TRUE(o.has_aiv_num());
}

// The architecture is the profile's: it reaches the wire, and overrides keep
// it.
TEST(ResolveChipTest, ArchitectureComesFromTheProfile) {
  pb::TilingRequest request = StreamKRequest();
  request.set_platform("ascend910b1");
  request.mutable_platform_overrides()->set_aic_num(32);
  request.mutable_platform_overrides()->set_cube_freq_mhz(1650);
  absl::StatusOr<tl::ChipSpec> chip = ResolveChip(request);
  ASSERT_TRUE(chip.ok()) << chip.status();
  EXPECT_EQ(chip->npu_arch, tl::NpuArch::kDav2201);
  EXPECT_EQ(ChipToProto(*chip).npu_arch(), "DAV_2201");
  request.set_platform("");
  chip = ResolveChip(request);
  ASSERT_TRUE(chip.ok()) << chip.status();
  EXPECT_EQ(ChipToProto(*chip).npu_arch(), "DAV_3510");
}

TEST(ResolveChipTest, UnknownPlatformIsNotFound) {
  pb::TilingRequest request = StreamKRequest();
  request.set_platform("ascend910");
  EXPECT_THAT(ResolveChip(request), StatusIs(absl::StatusCode::kNotFound, HasSubstr("platform: ")));
}

TEST(EnumConversionTest, WireValueIsCannValuePlusOne) {
  for (int v = 0; v <= 2; ++v) {
    EXPECT_EQ(ApiLevelToProto(static_cast<tl::ApiLevel>(v)), v + 1);
    EXPECT_EQ(L0cToOutToProto(static_cast<tl::L0cToOut>(v)), v + 1);
  }
  for (int v = 0; v <= 7; ++v) {
    EXPECT_EQ(KernelModelToProto(static_cast<tl::KernelModel>(v)), v + 1);
  }
  for (int v = 0; v <= 3; ++v) {
    EXPECT_EQ(FullLoadToProto(static_cast<tl::FullLoad>(v)), v + 1);
  }
  EXPECT_EQ(KernelTypeToProto(tl::KernelType::kAicOnly), pb::KERNEL_TYPE_AIC_ONLY);
  EXPECT_EQ(KernelTypeToProto(tl::KernelType::kMixed1To2), pb::KERNEL_TYPE_MIX_AIC_1_AIV_2);
  EXPECT_EQ(KernelTypeToProto(tl::KernelType::kAivOnly), pb::KERNEL_TYPE_AIV_ONLY);
}

TEST(DecisionConversionTest, CopiesEveryPart) {
  tl::TilingDecision decision;
  tl::TilingPlan& plan = decision.plan;
  plan.strategy = "BASIC_ASWT";
  plan.key.api_level = tl::ApiLevel::kTensor;
  plan.key.trans_a = true;
  plan.key.model = tl::KernelModel::kBasic;
  plan.key.full_load = tl::FullLoad::kA;
  plan.key.l0c2out = tl::L0cToOut::kNdFixpipe1To2;
  plan.block_dim = 31;
  plan.kernel_type = tl::KernelType::kMixed1To2;
  plan.workspace_bytes = 4096;
  plan.block.base_m = 128;
  plan.block.k_cnt = 3;
  plan.data.kernel = tl::KernelId::kMatMulCube;
  plan.data.fields = {{"usedCoreNum", 31, 32},
                      {"mmadParam", 0, 8},
                      {"l1BufferNum", 2, 8},
                      {"l0cDB", 1, 8},
                      {"ubDB", 1, 8}};
  plan.detail = "because";
  decision.trace = {{"K_EQUAL_ZERO", false, false, "K=64 != 0"},
                    {"BASIC_ASWT", true, true, "fallback"}};
  tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);

  pb::TilingResponse response;
  DecisionToProto(decision, chip, &response);
  EXPECT_EQ(response.tiling_key(), plan.key.Encode());
  EXPECT_EQ(response.key().api_level_name(), "TENSOR_LEVEL");
  EXPECT_TRUE(response.key().trans_a());
  EXPECT_EQ(response.key().full_load(), pb::FULL_LOAD_A);
  EXPECT_EQ(response.key().full_load_name(), "A_FULL_LOAD");
  EXPECT_EQ(response.key().l0c2out(), pb::L0C_TO_OUT_ND_FIXPIPE_1_2);
  EXPECT_EQ(response.key().l0c2out_name(), "ND_FIXPIPE_1_2");
  EXPECT_EQ(response.block_dim(), 31u);
  EXPECT_EQ(response.kernel_type_name(), "MIX_AIC_1_AIV_2");
  EXPECT_EQ(response.workspace_bytes(), 4096u);
  EXPECT_EQ(response.block().base_m(), 128u);
  EXPECT_EQ(response.block().k_cnt(), 3u);
  ASSERT_EQ(response.fields_size(), 5);
  EXPECT_EQ(response.fields(2).name(), "l1BufferNum");
  EXPECT_EQ(response.fields(2).bits(), 8u);
  // Two words: usedCoreNum, then the four packed bytes (byte 0 first).
  ASSERT_EQ(response.raw_words_size(), 2);
  EXPECT_EQ(response.raw_words(0), 31u);
  EXPECT_EQ(response.raw_words(1), 0x01010200u);
  ASSERT_EQ(response.trace_size(), 2);
  EXPECT_EQ(response.trace(0).reason(), "K=64 != 0");
  EXPECT_TRUE(response.trace(1).chosen());
  EXPECT_EQ(response.platform().name(), "ascend950pr");
  EXPECT_EQ(response.platform().cube_freq_mhz(), chip.cube_freq_mhz);
  EXPECT_EQ(response.detail(), "because");
}

// Every decision field DecisionToProto() fills, in both views: a full
// answer cut down by ApplyView() (as a cached advice is) must equal the
// fresh one field for field.
TEST(DecisionConversionTest, ApplyViewEqualsAFreshAnswerInEachView) {
  const tl::StrategyRegistry registry = tl::MakeBuiltinRegistry();
  const tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);
  for (const pb::TilingRequest& request :
       {StreamKRequest(), npu::server::testing::ShapeRequest(17, 255, 1)}) {
    const tl::MatmulProblem problem = ProblemFromProto(request.problem());
    absl::StatusOr<tl::TilingDecision> decision = registry.Decide(problem, chip);
    ASSERT_TRUE(decision.ok()) << decision.status();
    pb::TilingResponse full;
    DecisionToProto(*decision, chip, &full, /*include_trace=*/true);
    for (pb::ResponseView view : {pb::RESPONSE_VIEW_FULL, pb::RESPONSE_VIEW_COMPACT}) {
      for (bool trace : {false, true}) {
        pb::TilingResponse fresh, copied = full;
        DecisionToProto(*decision, chip, &fresh, trace, view);
        if (!trace) copied.clear_trace();
        ApplyView(view, &copied);
        EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(fresh, copied))
            << "view " << view << " trace " << trace << "\nfresh:  " << fresh.ShortDebugString()
            << "\ncopied: " << copied.ShortDebugString();
      }
    }
  }
}

}  // namespace
}  // namespace npu::server
