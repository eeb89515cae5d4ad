#include "server/service/validate.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "server/service/convert.h"
#include "server/tiling/chip_fields.h"
#include "server/tiling/types.h"
#include "tests/service/test_server.h"
#include "tests/testing/status_matchers.h"

namespace npu::server {
namespace {

using ::npu::server::testing::StreamKRequest;
using ::npu::testing::IsOk;
using ::npu::testing::StatusIs;
using ::testing::HasSubstr;
namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

TEST(ValidateRequestTest, AcceptsAValidRequest) {
  EXPECT_THAT(ValidateRequest(StreamKRequest()), IsOk());
}

TEST(ValidateRequestTest, UnspecifiedFormatsAreAllowed) {
  pb::TilingRequest request = StreamKRequest();
  request.mutable_problem()->set_format_b(pb::FORMAT_UNSPECIFIED);
  EXPECT_THAT(ValidateRequest(request), IsOk());
}

TEST(ValidateRequestTest, DtypeBiasIsIgnoredWithoutBias) {
  pb::TilingRequest request = StreamKRequest();
  request.mutable_problem()->set_dtype_bias(pb::DATA_TYPE_UNSPECIFIED);
  EXPECT_THAT(ValidateRequest(request), IsOk());
  request.mutable_problem()->set_dtype_bias(static_cast<pb::DataType>(99));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.dtype_bias")));
}

TEST(ValidateRequestTest, NamesTheFirstBadField) {
  pb::TilingRequest request = StreamKRequest();
  request.mutable_problem()->set_dtype_c(pb::DATA_TYPE_UNSPECIFIED);
  request.mutable_platform_overrides()->set_aic_num(0);
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.dtype_c")));
}

TEST(ValidateRequestTest, StringLimits) {
  pb::TilingRequest request = StreamKRequest();
  request.set_id(std::string(kMaxIdBytes, 'a'));
  request.set_platform(std::string(kMaxNameBytes, 'p'));
  request.set_forced_strategy(std::string(kMaxNameBytes, 's'));
  EXPECT_THAT(ValidateRequest(request), IsOk());
  request.set_forced_strategy(std::string(kMaxNameBytes + 1, 's'));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("forced_strategy")));
}

TEST(ValidateRequestTest, SliceRankMustBeTwoOrThreeWhenEnabled) {
  pb::TilingRequest request = StreamKRequest();
  request.mutable_problem()->mutable_a_slice()->set_rank(7);  // ignored while disabled
  EXPECT_THAT(ValidateRequest(request), IsOk());
  request.mutable_problem()->mutable_a_slice()->set_enabled(true);
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.a_slice.rank")));
  request.mutable_problem()->mutable_a_slice()->set_rank(2);
  EXPECT_THAT(ValidateRequest(request), IsOk());
}

TEST(ValidateRequestTest, OperatorAndFusedOpMustBeKnown) {
  pb::TilingRequest request = StreamKRequest();
  request.mutable_problem()->set_op(pb::OPERATOR_FUSED_MATMUL);
  request.mutable_problem()->set_fused_op(pb::FUSED_OP_16CAST32);
  EXPECT_THAT(ValidateRequest(request), IsOk());
  request.mutable_problem()->set_op(static_cast<pb::Operator>(99));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.op")));
  request.mutable_problem()->set_op(pb::OPERATOR_BATCH_MATMUL_V3);
  request.mutable_problem()->set_fused_op(static_cast<pb::FusedOp>(7));  // CANN's quant
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.fused_op")));
}

TEST(ValidateRequestTest, BatchDimListsAreBounded) {
  pb::TilingRequest request = StreamKRequest();
  request.mutable_problem()->set_op(pb::OPERATOR_BATCH_MATMUL_V3);
  for (int i = 0; i < kMaxBatchRank; ++i) request.mutable_problem()->add_batch_b(2);
  EXPECT_THAT(ValidateRequest(request), IsOk());
  request.mutable_problem()->add_batch_b(2);
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.batch_b")));
  request.mutable_problem()->clear_batch_b();
  for (int i = 0; i <= kMaxX3Rank; ++i) request.mutable_problem()->add_x3_shape(1);
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.x3_shape")));
}

// Appends `dims` to a repeated int64 field (this protobuf has no
// initializer-list Add()).
void AddDims(google::protobuf::RepeatedField<int64_t>* field, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) field->Add(d);
}

// GroupedMatmul: its group is required, the problem's dtypes are not, and
// the lists are bounded (1024 instances, 8 dims) with a dtype for a list
// that has an instance.
TEST(ValidateRequestTest, GroupedMatmulBoundsItsLists) {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_op(pb::OPERATOR_GROUPED_MATMUL);
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("problem.grouped: required")));
  pb::GroupedInputs* g = p->mutable_grouped();
  g->mutable_x()->set_dtype(pb::DATA_TYPE_FLOAT16);
  AddDims(g->mutable_x()->add_instances()->mutable_origin(), {16, 32});
  EXPECT_THAT(ValidateRequest(request), IsOk());
  AddDims(g->mutable_weight()->add_instances()->mutable_origin(), {32, 16});
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("problem.grouped.weight.dtype: required for a list")));
  g->mutable_weight()->set_dtype(pb::DATA_TYPE_FLOAT16);
  for (int i = 0; i < 1024; ++i) g->mutable_bias()->add_instances();
  g->mutable_bias()->set_dtype(pb::DATA_TYPE_FLOAT16);
  EXPECT_THAT(ValidateRequest(request), IsOk());
  g->mutable_bias()->add_instances();
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("problem.grouped.bias: at most 1024 instances")));
  g->clear_bias();
  g->mutable_y()->set_dtype(pb::DATA_TYPE_FLOAT16);
  AddDims(g->mutable_y()->add_instances()->mutable_origin(), {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("problem.grouped.y.instances[0]: at most 8 dims")));
}

TEST(ValidatePlatformOverridesTest, EveryOverrideFieldHasARange) {
  const google::protobuf::Descriptor* descriptor = pb::PlatformOverrides::descriptor();
  ASSERT_EQ(static_cast<size_t>(descriptor->field_count()), tl::kChipFieldCount);
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const std::string name = descriptor->field(i)->name();
    bool found = false;
    for (const tl::ChipField& range : tl::kChipFields) found = found || name == range.name;
    EXPECT_TRUE(found) << "no range for " << name;
  }
}

// Sets override `field` to `value` through reflection.
pb::TilingRequest WithOverride(const std::string& field, uint64_t value) {
  pb::TilingRequest request = StreamKRequest();
  pb::PlatformOverrides* overrides = request.mutable_platform_overrides();
  const google::protobuf::FieldDescriptor* descriptor =
      overrides->GetDescriptor()->FindFieldByName(field);
  if (descriptor->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_UINT32) {
    overrides->GetReflection()->SetUInt32(overrides, descriptor, static_cast<uint32_t>(value));
  } else {
    overrides->GetReflection()->SetUInt64(overrides, descriptor, value);
  }
  return request;
}

// The service's ranges must be the engine's: a value the service accepts
// must give a chip the engine accepts, and the first value outside is
// rejected under its wire name.
TEST(ValidatePlatformOverridesTest, RangesAgreeWithTheEngine) {
  for (const tl::ChipField& range : tl::kChipFields) {
    const std::string name(range.name);
    SCOPED_TRACE(name);
    for (uint64_t inside : {range.min, range.max}) {
      pb::TilingRequest request = WithOverride(name, inside);
      // ResolveChip() also keeps L0A and L0B within L1 (convert.cc): give
      // the other side of that pair room.
      const std::string& field = name;
      if (field == "l0a_bytes" || field == "l0b_bytes") {
        request.mutable_platform_overrides()->set_l1_bytes(uint64_t{64} << 20);
      } else if (field == "l1_bytes") {
        request.mutable_platform_overrides()->set_l0a_bytes(4 * kKiB);
        request.mutable_platform_overrides()->set_l0b_bytes(4 * kKiB);
      }
      EXPECT_THAT(ValidateRequest(request), IsOk());
      EXPECT_THAT(ResolveChip(request), IsOk());
    }
    if (range.min > 0) {
      EXPECT_THAT(
          ValidateRequest(WithOverride(name, range.min - 1)),
          StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("platform_overrides." + name)));
    }
    EXPECT_THAT(
        ValidateRequest(WithOverride(name, range.max + 1)),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("platform_overrides." + name)));
  }
}

// An L0A or L0B above L1 is no Ascend core, and made BASIC_ASWT divide by
// zero (tests/fuzz/corpus/tiling_request/regression-aswt-*).
TEST(ResolveChipTest, RefusesL0BuffersAboveL1) {
  EXPECT_THAT(ResolveChip(WithOverride("l0a_bytes", uint64_t{8} << 20)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("platform: l0a_bytes=8388608 and l0b_bytes=65536 must not "
                                 "exceed l1_bytes=524288")));
  EXPECT_THAT(ResolveChip(WithOverride("l0b_bytes", 600 * kKiB)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("l1_bytes=524288")));
  EXPECT_THAT(ResolveChip(WithOverride("l0a_bytes", 512 * kKiB)), IsOk());  // equal is fine
}

}  // namespace
}  // namespace npu::server
