// Tests of server/service/explicit_tiling.h: a tiling from the wire rebuilt
// into the engine's plan, every check naming its field, and robustness of the
// whole Execute pipeline against arbitrary edits.
#include "server/service/explicit_tiling.h"

#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/convert.h"
#include "server/service/execute.h"
#include "server/tiling/tiling_data.h"
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

// The engine's answer for `problem` in its wire form, and the plan.
struct Decided {
  tl::TilingPlan plan;
  pb::TilingResponse wire;
};

Decided Decide(const tl::MatmulProblem& problem, const tl::ChipSpec& chip = Chip950()) {
  absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem, chip);
  EXPECT_THAT(decision, IsOk());
  Decided out;
  if (!decision.ok()) return out;
  out.plan = decision->plan;
  DecisionToProto(*decision, chip, &out.wire);
  return out;
}

tl::MatmulProblem VectorProblem(int64_t m, int64_t n, int64_t k, bool trans_b) {
  tl::MatmulProblem problem = Problem(m, n, k, tl::DataType::kFloat32);
  problem.force_grp_acc_fp32 = true;
  problem.trans_b = trans_b;
  return problem;
}

void SetField(pb::TilingResponse& tiling, const std::string& name, uint64_t value) {
  for (pb::TilingField& field : *tiling.mutable_fields()) {
    if (field.name() == name) {
      field.set_value(value);
      return;
    }
  }
  ADD_FAILURE() << "no field " << name;
}

void ExpectSamePlan(const tl::TilingPlan& got, const tl::TilingPlan& want) {
  EXPECT_EQ(got.key.Encode(), want.key.Encode());
  EXPECT_EQ(got.block_dim, want.block_dim);
  EXPECT_EQ(got.kernel_type, want.kernel_type);
  EXPECT_EQ(got.workspace_bytes, want.workspace_bytes);
  EXPECT_EQ(got.strategy, want.strategy);
  EXPECT_EQ(got.data.struct_name(), want.data.struct_name());
  ASSERT_EQ(got.data.fields.size(), want.data.fields.size());
  for (size_t i = 0; i < want.data.fields.size(); ++i) {
    EXPECT_EQ(got.data.fields[i].name, want.data.fields[i].name);
    EXPECT_EQ(got.data.fields[i].value, want.data.fields[i].value) << want.data.fields[i].name;
    EXPECT_EQ(got.data.fields[i].bits, want.data.fields[i].bits) << want.data.fields[i].name;
  }
  const tl::BlockTiling& a = got.block;
  const tl::BlockTiling& b = want.block;
  EXPECT_EQ(a.base_m, b.base_m);
  EXPECT_EQ(a.base_n, b.base_n);
  EXPECT_EQ(a.base_k, b.base_k);
  EXPECT_EQ(a.m_l1, b.m_l1);
  EXPECT_EQ(a.n_l1, b.n_l1);
  EXPECT_EQ(a.k_l1, b.k_l1);
  EXPECT_EQ(a.single_core_k, b.single_core_k);
  EXPECT_EQ(a.m_tail_cnt, b.m_tail_cnt);
  EXPECT_EQ(a.n_tail_cnt, b.n_tail_cnt);
  EXPECT_EQ(a.l1_buffer_num, b.l1_buffer_num);
  EXPECT_EQ(a.l0c_db, b.l0c_db);
  EXPECT_EQ(a.ub_db, b.ub_db);
  EXPECT_EQ(a.step_m, b.step_m);
  EXPECT_EQ(a.depth_a1, b.depth_a1);
  EXPECT_EQ(a.single_core_m, b.single_core_m);
  EXPECT_EQ(a.k_cnt, b.k_cnt);
}

TEST(TilingStructLayoutTest, ModelsReadTheStructTheStrategiesFill) {
  const std::vector<tl::MatmulProblem> problems = {
      Problem(512, 512, 512),               // cube
      Problem(64, 48, 0),                   // K_EQUAL_ZERO
      VectorProblem(1, 4096, 4096, false),  // TO_MUL
      VectorProblem(10, 192, 4096, true),   // TO_MULTI_MUL
  };
  std::set<std::string> seen;
  for (const tl::MatmulProblem& problem : problems) {
    const Decided decided = Decide(problem);
    const std::string name(decided.plan.data.struct_name());
    seen.insert(name);
    EXPECT_EQ(decided.plan.data.kernel, tl::MatMulKernelOf(decided.plan.key.model));
    const absl::Span<const tl::TilingFieldSpec> layout =
        tl::TilingStructOf(decided.plan.data.kernel).fields;
    ASSERT_EQ(layout.size(), decided.plan.data.fields.size()) << name;
    for (size_t i = 0; i < layout.size(); ++i) {
      EXPECT_EQ(layout[i].name, decided.plan.data.fields[i].name) << name;
      EXPECT_EQ(layout[i].bits, decided.plan.data.fields[i].bits) << name;
    }
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(tl::KernelOfStruct("NoSuchTilingData"), std::nullopt);
}

// Every plan the engine gives for an ND problem survives the trip through
// its wire form: the explicit path accepts all of the engine's answers.
TEST(PlanFromExplicitTilingTest, EnginePlansRoundTrip) {
  std::vector<tl::MatmulProblem> problems;
  for (tl::DataType dtype :
       {tl::DataType::kFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32}) {
    for (int64_t m : {1, 16, 100, 512, 4096}) {
      for (int64_t n : {16, 300, 1280, 7168}) {
        for (int64_t k : {0, 32, 777, 8192}) {
          tl::MatmulProblem problem = Problem(m, n, k, dtype);
          problem.trans_b = (m + n) % 3 == 0;
          problem.has_bias = k != 0 && n % 3 == 0;
          problems.push_back(problem);
        }
      }
    }
  }
  problems.push_back(VectorProblem(1, 4096, 4096, false));
  problems.push_back(VectorProblem(10, 192, 4096, true));
  tl::MatmulProblem hf32 = Problem(1024, 1024, 1024, tl::DataType::kFloat32);
  hf32.hf32 = true;
  problems.push_back(hf32);
  std::set<tl::KernelModel> models;
  for (const tl::MatmulProblem& problem : problems) {
    absl::StatusOr<tl::TilingDecision> decision = DecideBuiltin(problem);
    if (!decision.ok()) continue;  // e.g. shapes the engine refuses
    pb::TilingResponse wire;
    DecisionToProto(*decision, Chip950(), &wire);
    absl::StatusOr<tl::TilingPlan> plan = PlanFromExplicitTiling(wire, problem, Chip950());
    ASSERT_THAT(plan, IsOk()) << problem.m << "x" << problem.n << "x" << problem.k << " "
                              << decision->plan.strategy;
    ExpectSamePlan(*plan, decision->plan);
    models.insert(decision->plan.key.model);
  }
  EXPECT_GE(models.size(), 5u);  // BASIC, STREAM_K, K_EQUAL_ZERO, TO_MUL, TO_MULTI_MUL, ...
}

TEST(PlanFromExplicitTilingTest, TilingKeyAloneIsEnough) {
  const tl::MatmulProblem problem = Problem(4096, 1280, 8192);
  Decided decided = Decide(problem);
  decided.wire.clear_key();
  absl::StatusOr<tl::TilingPlan> plan = PlanFromExplicitTiling(decided.wire, problem, Chip950());
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->key.Encode(), decided.plan.key.Encode());
}

TEST(PlanFromExplicitTilingTest, EditedBaseMIsUsedAndTheRestEchoed) {
  const tl::MatmulProblem problem = Problem(1024, 1024, 1024);
  Decided decided = Decide(problem);
  SetField(decided.wire, "baseM", 64);
  decided.wire.mutable_block()->set_step_m(7);    // bookkeeping, echoed
  decided.wire.mutable_block()->set_base_m(999);  // not read: fields win
  decided.wire.clear_raw_words();
  absl::StatusOr<tl::TilingPlan> plan = PlanFromExplicitTiling(decided.wire, problem, Chip950());
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->block.base_m, 64u);
  EXPECT_EQ(plan->data.Get("baseM"), 64u);
  EXPECT_EQ(plan->block.step_m, 7u);
  EXPECT_EQ(plan->detail, "explicit tiling from the request");
}

struct InvalidCase {
  std::string name;
  std::function<void(pb::TilingResponse&)> edit;
  std::string message;
};

class PlanFromExplicitTilingErrorTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(PlanFromExplicitTilingErrorTest, NamesTheField) {
  const tl::MatmulProblem problem = Problem(1024, 1024, 1024);
  Decided decided = Decide(problem);
  ASSERT_EQ(decided.plan.key.model, tl::KernelModel::kBasic);
  GetParam().edit(decided.wire);
  EXPECT_THAT(PlanFromExplicitTiling(decided.wire, problem, Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

void RemoveField(pb::TilingResponse& tiling, const std::string& name) {
  auto* fields = tiling.mutable_fields();
  for (int i = 0; i < fields->size(); ++i) {
    if (fields->Get(i).name() == name) {
      fields->DeleteSubrange(i, 1);
      return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, PlanFromExplicitTilingErrorTest,
    ::testing::Values(
        InvalidCase{"MissingField", [](auto& t) { RemoveField(t, "kL1"); },
                    "tiling.fields[kL1]: missing"},
        InvalidCase{"UnknownField",
                    [](auto& t) {
                      pb::TilingField* f = t.add_fields();
                      f->set_name("baseQ");
                    },
                    "tiling.fields[baseQ]: not a field of MatMulV3BasicTilingData"},
        InvalidCase{"DuplicateField", [](auto& t) { *t.add_fields() = t.fields(7); },
                    "tiling.fields[baseM]: given twice"},
        InvalidCase{"WrongWidth",
                    [](auto& t) {
                      for (auto& f : *t.mutable_fields()) {
                        if (f.name() == "l0cDB") f.set_bits(32);
                      }
                    },
                    "tiling.fields[l0cDB].bits: 32, but the field is 8 bits wide"},
        InvalidCase{"ValueTooWide", [](auto& t) { SetField(t, "l0cDB", 300); },
                    "tiling.fields[l0cDB]: 300 does not fit in 8 bits"},
        InvalidCase{"BaseMNotFractal", [](auto& t) { SetField(t, "baseM", 100); },
                    "tiling.fields[baseM]: 100 must be a positive multiple of 16"},
        InvalidCase{"BaseKNotFractal", [](auto& t) { SetField(t, "baseK", 40); },
                    "tiling.fields[baseK]: 40 must be a positive multiple of 16"},
        InvalidCase{"KL1NotWholeBaseK", [](auto& t) { SetField(t, "kL1", 96); },
                    "tiling.fields[kL1]: 96 must be a positive multiple of 64"},
        InvalidCase{"ZeroMl1", [](auto& t) { SetField(t, "mL1", 0); },
                    "tiling.fields[mL1]: 0 must be a positive multiple of 16"},
        InvalidCase{"WrongM", [](auto& t) { SetField(t, "m", 512); },
                    "tiling.fields[m]: 512, but problem.m is 1024"},
        InvalidCase{"NoUsedCores", [](auto& t) { SetField(t, "usedCoreNum", 0); },
                    "tiling.fields[usedCoreNum]: 0 must be in [1, 32]"},
        InvalidCase{"L1BufferNum", [](auto& t) { SetField(t, "l1BufferNum", 3); },
                    "tiling.fields[l1BufferNum]: 3 must be 2 or 4"},
        InvalidCase{"MmadParamWithoutHf32", [](auto& t) { SetField(t, "mmadParam", 1); },
                    "tiling.fields[mmadParam]: 1, but problem.hf32 is 0"},
        InvalidCase{"TailSplitBeyondCores",
                    [](auto& t) {
                      SetField(t, "mTailCnt", 8);
                      SetField(t, "nTailCnt", 8);
                    },
                    "tiling.fields[mTailCnt]: mTailCnt * nTailCnt = 64"},
        InvalidCase{"BlockDimZero", [](auto& t) { t.set_block_dim(0); },
                    "tiling.block_dim: 0 must be in [1, 32]"},
        InvalidCase{"BlockDimAboveChip", [](auto& t) { t.set_block_dim(33); },
                    "tiling.block_dim: 33 must be in [1, 32]"},
        InvalidCase{"WrongStruct",
                    [](auto& t) { t.set_tiling_struct("MatMulToMulBasicTilingData"); },
                    "tiling.tiling_struct: \"MatMulToMulBasicTilingData\", but model BASIC reads "
                    "MatMulV3BasicTilingData"},
        InvalidCase{"ModelUnspecified",
                    [](auto& t) { t.mutable_key()->set_model(pb::KERNEL_MODEL_UNSPECIFIED); },
                    "tiling.key.model: required"},
        InvalidCase{"ModelNameOnlyEdited",
                    [](auto& t) { t.mutable_key()->set_model_name("STREAM_K"); },
                    "tiling.key.model_name: \"STREAM_K\" does not name the value of "
                    "tiling.key.model"},
        InvalidCase{"KeyDisagrees",
                    [](auto& t) { t.mutable_key()->set_model(pb::KERNEL_MODEL_STREAM_K); },
                    "tiling.key.model_name"},
        InvalidCase{"PackedKeyDisagrees",
                    [](auto& t) {
                      t.mutable_key()->set_model(pb::KERNEL_MODEL_STREAM_K);
                      t.mutable_key()->set_model_name("STREAM_K");
                    },
                    "tiling.tiling_key: 2 disagrees with tiling.key"},
        InvalidCase{"BadPackedKey",
                    [](auto& t) {
                      t.clear_key();
                      t.set_tiling_key(uint64_t{1} << 30);
                    },
                    "tiling.tiling_key: tiling key: bits above 23 set"},
        InvalidCase{"TransposeDisagrees", [](auto& t) { t.mutable_key()->set_trans_b(true); },
                    "tiling.key.trans_b"},
        InvalidCase{"BatchModel", [](auto& t) { t.mutable_key()->set_batch_model(1); },
                    "tiling.key.batch_model"},
        InvalidCase{"KernelTypeDisagrees",
                    [](auto& t) { t.set_kernel_type(pb::KERNEL_TYPE_AIV_ONLY); },
                    "tiling.kernel_type: KERNEL_TYPE_AIV_ONLY, but model BASIC"},
        InvalidCase{"KZeroModelWithK",
                    [](auto& t) {
                      t.mutable_key()->set_model(pb::KERNEL_MODEL_K_EQUAL_ZERO);
                      t.mutable_key()->set_model_name("");
                      t.set_tiling_key(0);
                    },
                    "tiling.key.model: K_EQUAL_ZERO needs problem.k = 0"},
        InvalidCase{"LongStrategy", [](auto& t) { t.set_strategy(std::string(65, 'x')); },
                    "tiling.strategy"}),
    [](const ::testing::TestParamInfo<InvalidCase>& info) { return info.param.name; });

TEST(PlanFromExplicitTilingTest, StreamKNeedsAPositiveSliceK) {
  const tl::MatmulProblem problem = Problem(4096, 1280, 8192);
  Decided decided = Decide(problem);
  ASSERT_EQ(decided.plan.key.model, tl::KernelModel::kStreamK);
  SetField(decided.wire, "skSingleCoreK", 0);
  EXPECT_THAT(PlanFromExplicitTiling(decided.wire, problem, Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tiling.fields[skSingleCoreK]: 0 must be in [1, ")));
}

TEST(PlanFromExplicitTilingTest, VectorStructsAreSelfConsistent) {
  const tl::MatmulProblem problem = VectorProblem(1, 4096, 4096, false);
  Decided decided = Decide(problem);
  ASSERT_EQ(decided.plan.key.model, tl::KernelModel::kToMul);
  SetField(decided.wire, "baseMN", 32);  // tileNum still says 64 tiles of 64
  EXPECT_THAT(PlanFromExplicitTiling(decided.wire, problem, Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tiling.fields[tileNum]: 64, but ceil(m * n / baseMN) is 128")));
  SetField(decided.wire, "tileNum", 128);
  EXPECT_THAT(PlanFromExplicitTiling(decided.wire, problem, Chip950()), IsOk());
}

TEST(ChipFromProtoTest, ChecksTheChip) {
  pb::ChipSpec chip = ChipToProto(Chip950(24));
  absl::StatusOr<tl::ChipSpec> parsed = ChipFromProto(chip);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->aic_num, 24u);
  chip.set_l1_bytes(1);
  EXPECT_THAT(ChipFromProto(chip),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tiling.platform: ")));
}

// Arbitrary edits of every field of real tilings, through the whole Execute
// pipeline: the server answers each with a status, never a crash, a hang
// or INTERNAL (an explicit tiling's faults are the caller's). Run under
// NPU_SANITIZE for memory errors.
TEST(ExplicitTilingRobustnessTest, RandomEditsAlwaysGetAStatus) {
  const tl::StrategyRegistry registry = tl::MakeBuiltinRegistry();
  struct Base {
    tl::MatmulProblem problem;
    bool numerics;
  };
  // Numerics run on the small bases only: an edited plan's memory safety
  // does not depend on the size of C, and under the sanitizers the fp64
  // reference of 300x700x4000 took most of this test's time.
  std::vector<Base> bases = {
      {Problem(200, 300, 500), false},
      {Problem(64, 48, 80), true},
      {Problem(4096, 1280, 8192), false},  // Stream-K
      {Problem(300, 700, 4000), false},
      {VectorProblem(1, 512, 256, false), true},
      {VectorProblem(10, 192, 300, true), true},
      {Problem(40, 24, 0), true},
      {Problem(90, 130, 2100), true},
  };
  ExecuteOptions options;
  options.max_simulated_ops = 200000;  // keeps each attempt small
  std::mt19937_64 random(20261129);
  const uint64_t interesting[] = {0,    1,    2,     3,        4,          8,         15,  16,
                                  17,   32,   48,    64,       100,        128,       256, 512,
                                  1024, 4096, 65535, 1u << 20, 0x7fffffff, 0xffffffff};
  std::map<absl::StatusCode, int> codes;
  for (int attempt = 0; attempt < 400; ++attempt) {
    const Base& base = bases[attempt % bases.size()];
    const Decided decided = Decide(base.problem);
    pb::ExecuteRequest request;
    *request.mutable_problem() = ProblemToProto(base.problem);
    *request.mutable_tiling() = decided.wire;
    request.set_timing_only(!base.numerics);
    pb::TilingResponse& tiling = *request.mutable_tiling();
    const int edits = 1 + static_cast<int>(random() % 3);
    for (int e = 0; e < edits; ++e) {
      const uint64_t pick = random() % (tiling.fields_size() + 3);
      const uint64_t value =
          random() % 2 ? interesting[random() % std::size(interesting)] : random() % 5000;
      if (pick < static_cast<uint64_t>(tiling.fields_size())) {
        tiling.mutable_fields(static_cast<int>(pick))->set_value(value);
      } else if (pick == static_cast<uint64_t>(tiling.fields_size())) {
        tiling.set_block_dim(static_cast<uint32_t>(value));
      } else if (pick == static_cast<uint64_t>(tiling.fields_size()) + 1) {
        tiling.set_workspace_bytes(value);
      } else {
        // Another model or output mode for the same fields.
        const int model = 1 + static_cast<int>(random() % 8);
        tiling.mutable_key()->set_model(static_cast<pb::KernelModel>(model));
        tiling.mutable_key()->set_model_name("");
        tiling.mutable_key()->set_l0c2out(static_cast<pb::L0cToOut>(1 + random() % 3));
        tiling.mutable_key()->set_l0c2out_name("");
        tiling.set_tiling_key(0);
        tiling.set_kernel_type(pb::KERNEL_TYPE_UNSPECIFIED);
        tiling.set_kernel_type_name("");
      }
    }
    absl::StatusOr<PreparedExecute> prepared = PrepareExecute(request, registry, options);
    absl::Status status = prepared.status();
    if (prepared.ok()) {
      pb::ExecuteResponse response;
      status = RunExecute(*prepared, options, nullptr, &response);
      if (status.ok() && base.numerics) {
        // A tiling that runs computes the right C.
        EXPECT_TRUE(response.accuracy().passed()) << tiling.ShortDebugString();
      }
    }
    EXPECT_NE(status.code(), absl::StatusCode::kInternal) << status << "\n"
                                                          << tiling.ShortDebugString();
    EXPECT_NE(status.code(), absl::StatusCode::kUnknown) << status;
    ++codes[status.code()];
  }
  // The sweep reaches both accepted and rejected tilings.
  EXPECT_GT(codes[absl::StatusCode::kOk], 20);
  EXPECT_GT(codes[absl::StatusCode::kInvalidArgument], 20);
}

}  // namespace
}  // namespace npu::server

namespace npu::server {
namespace {

// BatchMatMulV3 / FusedMatMul tilings in CANN's words (the goldens of
// /work/shared/conformance/cann950_ops/cases.json) survive the wire: the
// fused key layout, the batch structs, and their checks.
struct BatchCase {
  tl::MatmulProblem problem;
  tl::TilingPlan plan;
};

template <typename Field, size_t N>
tl::TilingData BatchWords(const uint64_t (&words)[N]) {
  tl::TilingData data = tl::NewTilingData<Field>();
  for (size_t i = 0; i < N; ++i) data.fields[i].value = words[i];
  return data;
}

BatchCase MergeBatchGolden() {
  // BatchMatMulV3_910D1_test_mergebatch_01.
  BatchCase c;
  c.problem = Problem(1, 4, 976, tl::DataType::kFloat32);
  c.problem.op = tl::MatmulOp::kBatchMatMulV3;
  c.problem.batch.a = c.problem.batch.b = {2400};
  c.problem.trans_b = true;
  c.problem.hf32 = true;
  c.plan.strategy = "MERGE_BATCH_BASICAPI";
  c.plan.key = *tl::TilingKey::Decode(0x341);
  c.plan.block_dim = 32;
  c.plan.data = BatchWords<tl::MergeBatchField>({1, 4, 976, 2400, 8, 8, 8, 256, 64, 1, 0, 1});
  return c;
}

BatchCase FusedAswtReluGolden() {
  // FusedMatMul_950_bmm_aswt_relu: 25 words, key 0x5000411.
  BatchCase c;
  c.problem = Problem(21, 9, 16559, tl::DataType::kFloat32);
  c.problem.op = tl::MatmulOp::kFusedMatMul;
  c.problem.fused.op = tl::FusedOp::kRelu;
  c.problem.batch.a = c.problem.batch.b = {82, 22};
  c.problem.trans_a = true;
  c.plan.strategy = "ASWT_BASIC_INHERITED_FROM_BMMV3";
  c.plan.key = *tl::TilingKey::Decode(0x5000411, tl::KeyLayout::kFused);
  c.plan.block_dim = 32;
  c.plan.data = BatchWords<tl::BatchBasicField>({32,    21, 9,  16559, 32, 16, 512,  32, 16, 256,
                                                 16559, 1,  1,  1,     1,  0,  0,    0,  4,  2,
                                                 2,     0,  32, 1,     1,  0,  1804, 1});
  tl::ReadBlockFields(c.plan.data, c.plan.block);
  return c;
}

TEST(PlanFromExplicitBatchTilingTest, BatchBasicStructIsTheGoldensWords) {
  // Word 17 packs mmadParam 0, l1BufferNum 4, l0cDB 2, ubDB 2 (0x02020400).
  EXPECT_EQ(FusedAswtReluGolden().plan.data.RawWords(),
            (std::vector<uint32_t>{32, 21, 9, 16559, 32,       16, 512, 32, 16, 256, 16559, 1, 1,
                                   1,  1,  0, 0,     33686528, 0,  32,  1,  1,  0,   1804,  1}));
}

TEST(PlanFromExplicitBatchTilingTest, GoldensRoundTrip) {
  for (const BatchCase& c : {MergeBatchGolden(), FusedAswtReluGolden()}) {
    SCOPED_TRACE(c.plan.strategy);
    tl::TilingDecision decision;
    decision.plan = c.plan;
    pb::TilingResponse wire;
    DecisionToProto(decision, Chip950(), &wire);
    absl::StatusOr<tl::TilingPlan> plan = PlanFromExplicitTiling(wire, c.problem, Chip950());
    ASSERT_THAT(plan, IsOk());
    EXPECT_EQ(plan->key.Encode(), c.plan.key.Encode());
    EXPECT_EQ(plan->data.struct_name(), c.plan.data.struct_name());
    EXPECT_EQ(plan->data.RawWords(), c.plan.data.RawWords());
    // Only the key's packed form: the layout follows the problem's op.
    wire.clear_key();
    EXPECT_THAT(PlanFromExplicitTiling(wire, c.problem, Chip950()), IsOk());
  }
}

TEST(PlanFromExplicitBatchTilingTest, BatchStructFieldsAreChecked) {
  BatchCase c = FusedAswtReluGolden();
  tl::TilingDecision decision;
  decision.plan = c.plan;
  pb::TilingResponse wire;
  DecisionToProto(decision, Chip950(), &wire);
  pb::TilingResponse bad = wire;
  SetField(bad, "batchDimAll", 1803);
  EXPECT_THAT(PlanFromExplicitTiling(bad, c.problem, Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tiling.fields[batchDimAll]: 1803, but the C batches is 1804")));
  bad = wire;
  SetField(bad, "baseM", 40);
  EXPECT_THAT(PlanFromExplicitTiling(bad, c.problem, Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tiling.fields[baseM]")));
  bad = wire;
  bad.mutable_key()->set_fused_op(pb::FUSED_OP_ADD);
  bad.mutable_key()->clear_fused_op_name();
  bad.set_tiling_key(0);
  EXPECT_THAT(PlanFromExplicitTiling(bad, c.problem, Chip950()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tiling.key.fused_op")));
  // A MatMulV3 problem keeps refusing batch models.
  tl::MatmulProblem plain = c.problem;
  plain.op = tl::MatmulOp::kMatMulV3;
  plain.fused.op = tl::FusedOp::kNone;
  plain.batch.a.clear();
  plain.batch.b.clear();
  bad = wire;
  bad.mutable_key()->clear_fused_op();
  bad.mutable_key()->clear_fused_op_name();
  EXPECT_THAT(
      PlanFromExplicitTiling(bad, plain, Chip950()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("but MatMulV3 kernels use 0")));
}

}  // namespace
}  // namespace npu::server
