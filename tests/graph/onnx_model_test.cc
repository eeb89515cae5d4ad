#include "server/graph/onnx_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/protobuf/text_format.h"
#include "tests/testing/onnx_builder.h"
#include "tests/testing/status_matchers.h"

namespace npu::graph {
namespace {

using ::npu::testing::IsOk;
using ::npu::testing::kFloat16;
using ::npu::testing::kInt64;
using ::npu::testing::OnnxBuilder;
using ::npu::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

OnnxBuilder MatMulModel() {
  OnnxBuilder model;
  model.Input("a", kFloat16, {"batch", "seq", 64}).Input("b", kFloat16, {64, 32});
  model.Node("MatMul", {"a", "b"}, {"c"}).Output("c", kFloat16);
  return model;
}

TEST(ParseModelTest, ReadsBinaryAndTextForms) {
  const OnnxBuilder model = MatMulModel();
  absl::StatusOr<onnx::ModelProto> binary = ParseModel(model.Bytes(), ModelEncoding::kDetect);
  ASSERT_THAT(binary, IsOk());
  EXPECT_EQ(binary->graph().node(0).op_type(), "MatMul");
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(model.model(), &text));
  absl::StatusOr<onnx::ModelProto> parsed = ParseModel(text, ModelEncoding::kDetect);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->graph().input_size(), 2);
  EXPECT_THAT(ParseModel(text, ModelEncoding::kText), IsOk());
}

TEST(ParseModelTest, GarbageIsInvalidArgumentNamingTheModel) {
  EXPECT_THAT(ParseModel("", ModelEncoding::kDetect),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("model: empty")));
  EXPECT_THAT(ParseModel("\x08\x96\x01 not a model {", ModelEncoding::kDetect),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("model: neither")));
  EXPECT_THAT(ParseModel("ir_version: 8", ModelEncoding::kBinary),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a binary")));
  // Text without a graph.
  EXPECT_THAT(ParseModel("ir_version: 8", ModelEncoding::kText),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no graph")));
}

TEST(CheckModelTest, AcceptsAValidModelAndRefusesBrokenOnes) {
  EXPECT_THAT(CheckModel(MatMulModel().model()), IsOk());
  OnnxBuilder newer(18);
  newer.Input("a", kFloat16, {4, 4}).Node("Relu", {"a"}, {"b"}).Output("b", kFloat16);
  EXPECT_THAT(CheckModel(newer.model()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("opset 18")));
  OnnxBuilder dangling;
  dangling.Input("a", kFloat16, {4, 4})
      .Node("MatMul", {"a", "missing"}, {"b"})
      .Output("b", kFloat16);
  EXPECT_THAT(CheckModel(dangling.model()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ONNX checker")));
  OnnxBuilder unknown_op;
  unknown_op.Input("a", kFloat16, {4, 4}).Node("NoSuchOp", {"a"}, {"b"}).Output("b", kFloat16);
  EXPECT_THAT(CheckModel(unknown_op.model()), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StripInitializerDataTest, LargeInitializersBecomeInputsAndSmallOnesStay) {
  OnnxBuilder model;
  model.Input("a", kFloat16, {8, 128})
      .Initializer("w", kFloat16, {128, 256})
      .Initializer("shape", kInt64, {2}, {8, 256});
  model.Node("MatMul", {"a", "w"}, {"c"}).Node("Reshape", {"c", "shape"}, {"d"});
  model.Output("d", kFloat16);
  onnx::ModelProto stripped = model.model();
  EXPECT_EQ(StripInitializerData(stripped), 1);
  ASSERT_EQ(stripped.graph().initializer_size(), 1);
  EXPECT_EQ(stripped.graph().initializer(0).name(), "shape");
  ASSERT_EQ(stripped.graph().input_size(), 2);
  const onnx::ValueInfoProto& w = stripped.graph().input(1);
  EXPECT_EQ(w.name(), "w");
  EXPECT_EQ(w.type().tensor_type().elem_type(), kFloat16);
  EXPECT_EQ(w.type().tensor_type().shape().dim(1).dim_value(), 256);
  EXPECT_THAT(CheckModel(stripped), IsOk());
}

TEST(SymbolicDimsTest, ListsEachInputSymbolOnceInOrder) {
  OnnxBuilder model = MatMulModel();
  model.Input("mask", kFloat16, {"seq", "batch"});
  EXPECT_THAT(SymbolicDims(model.model().graph()), ElementsAre("batch", "seq"));
}

TEST(BuildGearsTest, ZipPairsValuesAndBroadcastsSingleOnes) {
  absl::StatusOr<std::vector<Gear>> gears =
      BuildGears({"batch", "seq"}, {{"batch", {1}}, {"seq", {128, 2048}}}, GearPolicy::kZip, 64);
  ASSERT_THAT(gears, IsOk());
  ASSERT_EQ(gears->size(), 2u);
  EXPECT_THAT((*gears)[0], ElementsAre(Pair("batch", 1), Pair("seq", 128)));
  EXPECT_THAT((*gears)[1], ElementsAre(Pair("batch", 1), Pair("seq", 2048)));
}

TEST(BuildGearsTest, ProductTakesEveryCombinationFirstDimOutermost) {
  absl::StatusOr<std::vector<Gear>> gears = BuildGears(
      {"batch", "seq"}, {{"batch", {1, 8}}, {"seq", {128, 2048, 4096}}}, GearPolicy::kProduct, 64);
  ASSERT_THAT(gears, IsOk());
  ASSERT_EQ(gears->size(), 6u);
  EXPECT_THAT((*gears)[0], ElementsAre(Pair("batch", 1), Pair("seq", 128)));
  EXPECT_THAT((*gears)[2], ElementsAre(Pair("batch", 1), Pair("seq", 4096)));
  EXPECT_THAT((*gears)[3], ElementsAre(Pair("batch", 8), Pair("seq", 128)));
}

TEST(BuildGearsTest, NoValuesIsOneEmptyGear) {
  absl::StatusOr<std::vector<Gear>> gears = BuildGears({"batch"}, {}, GearPolicy::kZip, 64);
  ASSERT_THAT(gears, IsOk());
  ASSERT_EQ(gears->size(), 1u);
  EXPECT_TRUE((*gears)[0].empty());
}

TEST(BuildGearsTest, ErrorsNameTheDimsAndTheLimit) {
  EXPECT_THAT(BuildGears({"batch"}, {{"bacth", {1}}}, GearPolicy::kZip, 64),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("dims: 'bacth' is not a symbolic dim of the model's inputs (it "
                                 "has: batch)")));
  EXPECT_THAT(BuildGears({"a", "b"}, {{"a", {1, 2}}, {"b", {1, 2, 3}}}, GearPolicy::kZip, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("GEAR_POLICY_ZIP")));
  EXPECT_THAT(
      BuildGears({"a", "b"}, {{"a", {1, 2, 3, 4, 5, 6, 7, 8, 9}}, {"b", {1, 2, 3, 4, 5, 6, 7, 8}}},
                 GearPolicy::kProduct, 64),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("more than 64 gears, the limit (--max_graph_gears)")));
  EXPECT_THAT(BuildGears({"a"}, {{"a", {0}}}, GearPolicy::kZip, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'a' value 0")));
  EXPECT_THAT(BuildGears({"a"}, {{"a", {}}}, GearPolicy::kZip, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lists 0 values")));
  EXPECT_THAT(
      BuildGears({"a"}, {{"a", {1, 2, 3}}}, GearPolicy::kZip, 2),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("3 gears is above the limit of 2")));
}

}  // namespace
}  // namespace npu::graph
