// The wire answer against protobuf's own serializer: a TilingResponse built
// field by field with protobuf's setters (the reference below) must
// serialize to the encoder's bytes, and DecisionToProto() (those bytes
// parsed) must equal it, for edge values of every field and for
// the engine's decisions over shapes that reach every strategy, in both
// views, with and without the trace; and the service must send those bytes
// with the cache off and on.
#include "server/service/wire_answer.h"

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/convert.h"
#include "server/service/provenance.h"
#include "server/service/tiling_service.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/key_layout.h"
#include "tests/service/test_server.h"
#include "tests/testing/byte_buffers.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

// The reference, written apart from the encoder: the answer as the .proto
// describes it, built field by field with protobuf's setters.
// The block tiling's wire form, every field set.
void BlockToProto(const tl::BlockTiling& b, pb::BlockTiling* block) {
  block->set_base_m(b.base_m);
  block->set_base_n(b.base_n);
  block->set_base_k(b.base_k);
  block->set_m_l1(b.m_l1);
  block->set_n_l1(b.n_l1);
  block->set_k_l1(b.k_l1);
  block->set_step_m(b.step_m);
  block->set_step_n(b.step_n);
  block->set_step_ka(b.step_ka);
  block->set_step_kb(b.step_kb);
  block->set_depth_a1(b.depth_a1);
  block->set_depth_b1(b.depth_b1);
  block->set_single_core_m(b.single_core_m);
  block->set_single_core_n(b.single_core_n);
  block->set_single_core_k(b.single_core_k);
  block->set_m_tail_cnt(b.m_tail_cnt);
  block->set_n_tail_cnt(b.n_tail_cnt);
  block->set_k_cnt(b.k_cnt);
  block->set_l1_buffer_num(b.l1_buffer_num);
  block->set_l0c_db(b.l0c_db);
  block->set_ub_db(b.ub_db);
}

void BuildReference(const tl::TilingDecision& decision, const tl::ChipSpec& chip,
                    pb::TilingResponse* response, bool include_trace, pb::ResponseView view) {
  // Field by field as the .proto describes it (a set sub-message is
  // present even when empty), with protobuf's setters.
  response->Clear();
  const tl::TilingPlan& plan = decision.plan;
  const bool full = view != pb::RESPONSE_VIEW_COMPACT;
  response->set_tiling_key(plan.key.Encode());
  if (full) {
    pb::DecodedTilingKey* key = response->mutable_key();
    const tl::KeyLayoutSpec& layout = tl::KeyLayoutSpecOf(plan.key.layout);
    if (layout.listed) {
      key->set_layout(std::string(layout.name));
      for (const tl::KeyFieldSpec& spec : layout.fields) {
        pb::KeyField* field = key->add_fields();
        field->set_name(std::string(spec.name));
        field->set_value(static_cast<uint32_t>(spec.get(plan.key)));
        field->set_value_name(std::string(tl::KeyValueName(spec, spec.get(plan.key))));
      }
    }
    if (!layout.listed) {
      key->set_api_level(ApiLevelToProto(plan.key.api_level));
      key->set_api_level_name(std::string(tl::ApiLevelName(plan.key.api_level)));
      key->set_trans_a(plan.key.trans_a);
      key->set_trans_b(plan.key.trans_b);
      key->set_batch_model(plan.key.batch_model);
      key->set_model(KernelModelToProto(plan.key.model));
      key->set_model_name(std::string(tl::KernelModelName(plan.key.model)));
      key->set_full_load(FullLoadToProto(plan.key.full_load));
      key->set_full_load_name(std::string(tl::FullLoadName(plan.key.full_load)));
      key->set_l0c2out(L0cToOutToProto(plan.key.l0c2out));
      key->set_l0c2out_name(std::string(tl::L0cToOutName(plan.key.l0c2out)));
      if (plan.key.layout == tl::KeyLayout::kFused) {
        key->set_fused_op(FusedOpToProto(plan.key.fused_op));
        key->set_fused_op_name(std::string(tl::FusedOpKeyName(plan.key.fused_op)));
        key->set_inner_precise(plan.key.inner_precise);
      }
    }
    response->set_tiling_struct(std::string(plan.data.struct_name()));
    for (const tl::TilingField& field : plan.data.fields) {
      pb::TilingField* out = response->add_fields();
      out->set_name(std::string(field.name));
      out->set_value(field.value);
      out->set_bits(static_cast<uint32_t>(field.bits));
    }
  }
  for (uint32_t word : plan.data.RawWords()) response->add_raw_words(word);
  response->set_block_dim(plan.block_dim);
  response->set_kernel_type(KernelTypeToProto(plan.kernel_type));
  if (full) response->set_kernel_type_name(std::string(tl::KernelTypeName(plan.kernel_type)));
  response->set_workspace_bytes(plan.workspace_bytes);
  response->set_strategy(plan.strategy);
  if (full) {
    response->set_detail(plan.detail.str());
    BlockToProto(plan.block, response->mutable_block());
  }
  if (include_trace) {
    for (const tl::TraceEntry& entry : decision.trace) {
      pb::TraceEntry* out = response->add_trace();
      out->set_strategy(entry.strategy);
      out->set_capable(entry.capable);
      out->set_chosen(entry.chosen);
      out->set_reason(entry.reason.str());
    }
  }
  if (full) *response->mutable_platform() = ChipToProto(chip);
  for (const tl::PlanWarning& warning : plan.warnings) {
    pb::PlanWarning* out = response->add_warnings();
    out->set_buffer(warning.buffer);
    out->set_need_bytes(warning.need_bytes);
    out->set_have_bytes(warning.have_bytes);
    out->set_message(warning.message);
  }
  if (full) {
    *response->mutable_provenance() = EngineProvenance();
    response->mutable_provenance()->set_chip_fingerprint(ChipFingerprint(chip));
  }
  response->set_quant_mode(std::string(plan.quant_mode));
}

pb::TilingResponse Reference(const tl::TilingDecision& decision, const tl::ChipSpec& chip,
                             pb::ResponseView view, bool include_trace, const std::string& id) {
  pb::TilingResponse r;
  BuildReference(decision, chip, &r, include_trace, view);
  r.set_id(id);
  return r;
}

// Compares the encoder with the reference in every view, with and without
// the trace, for a few ids.
void ExpectSameBytes(const tl::TilingDecision& decision, const tl::ChipSpec& chip) {
  const std::string long_id(300, 'x');  // a two-byte length
  for (const std::string& id :
       {std::string(), std::string("a"), long_id, std::string("\xe7\x9f\xa9\xe9\x98\xb5-17")}) {
    for (pb::ResponseView view :
         {pb::RESPONSE_VIEW_UNSPECIFIED, pb::RESPONSE_VIEW_FULL, pb::RESPONSE_VIEW_COMPACT}) {
      for (bool trace : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "id of " << id.size() << " bytes, view " << view << ", trace " << trace);
        pb::TilingResponse reference = Reference(decision, chip, view, trace, id);
        AnswerForm form;
        form.view = view;
        form.include_trace = trace;
        form.id = id;
        form.from_cache = id.size() == 1;  // now and then
        reference.set_from_cache(form.from_cache);
        const std::string expected = reference.SerializeAsString();
        EXPECT_EQ(AnswerBytes(decision, chip, form), expected);
        pb::TilingResponse message;
        DecisionToProto(decision, chip, &message, trace, view);
        message.set_id(id);
        message.set_from_cache(form.from_cache);
        EXPECT_EQ(message.SerializeAsString(), expected);
        // Into a reused buffer, larger or smaller than the answer: the
        // front holds the answer, whatever the buffer held before.
        for (size_t reused : {size_t{0}, size_t{1}, expected.size() / 2, expected.size() + 100}) {
          std::string buffer(reused, '\xff');
          const size_t size = EncodeAnswer(decision, chip, form, &buffer);
          ASSERT_EQ(size, expected.size());
          ASSERT_GE(buffer.size(), size);
          EXPECT_EQ(buffer.substr(0, size), expected) << "buffer of " << reused << " bytes";
        }
      }
    }
  }
}

TEST(WireAnswerTest, SameBytesAsProtobufForEdgeValues) {
  constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
  const tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);

  // Every field at its default: the key, block and platform messages are
  // still present (empty) in the full view.
  ExpectSameBytes(tl::TilingDecision{}, tl::ChipSpec{});
  pb::TilingResponse empty;
  DecisionToProto(tl::TilingDecision{}, tl::ChipSpec{}, &empty);
  EXPECT_TRUE(empty.has_key());
  EXPECT_TRUE(empty.has_block());
  EXPECT_TRUE(empty.has_platform());

  tl::TilingDecision edge;
  tl::TilingPlan& plan = edge.plan;
  plan.strategy = "BASIC_STREAM_K";
  plan.key.api_level = tl::ApiLevel::kTensor;
  plan.key.trans_a = true;
  plan.key.trans_b = true;
  plan.key.batch_model = 15;
  plan.key.model = tl::KernelModel::kStreamKSplitK;
  plan.key.full_load = tl::FullLoad::kAB;
  plan.key.l0c2out = tl::L0cToOut::kNdFixpipe1To2;
  plan.block_dim = std::numeric_limits<uint32_t>::max();
  plan.kernel_type = tl::KernelType::kMixed1To2;
  plan.workspace_bytes = kMax64;
  plan.block.base_m = kMax64;
  plan.block.base_n = 0;
  plan.block.base_k = 127;
  plan.block.k_l1 = 128;
  plan.block.ub_db = 16384;
  plan.data.kernel = tl::KernelId::kMatMulCube;
  // Varints of one to five bytes, zero values and names left out, packed
  // bytes, and more than 127 words (a two-byte packed length).
  plan.data.fields = {{"usedCoreNum", 0, 32}, {"m", 127, 32},        {"n", 128, 32},
                      {"k", 16383, 32},       {"baseM", 16384, 32},  {"", 0xFFFFFFFFu, 32},
                      {"mmadParam", 0, 8},    {"l1BufferNum", 2, 8}, {"l0cDB", 255, 8}};
  for (int i = 0; i < 150; ++i) plan.data.fields.push_back({"pad", 0x80808080u, 32});
  plan.detail = std::string(200, 'd');
  edge.trace = {{"K_EQUAL_ZERO", false, false, ""},
                {"TO_MUL", false, false, std::string(500, 'r')},
                {"BASIC_STREAM_K", true, true, "SK"},
                {"", false, false, ""}};
  ExpectSameBytes(edge, chip);
  // A QuantBatchMatmulV3 key: its fields listed by name, value and value name.
  tl::TilingDecision quant = edge;
  quant.plan.key = tl::TilingKey{};
  quant.plan.key.layout = tl::KeyLayout::kQuant;
  quant.plan.key.trans_b = true;
  quant.plan.key.batch_model = 1;
  quant.plan.key.quant_kernel = 11;
  quant.plan.key.api_level = tl::ApiLevel::kTensor;
  quant.plan.quant_mode = "PERCHANNEL";
  ExpectSameBytes(quant, chip);
  pb::TilingResponse listed;
  DecisionToProto(quant, chip, &listed);
  EXPECT_EQ(listed.tiling_key(), 0x20B14u);
  EXPECT_EQ(listed.key().layout(), "QUANT");
  ASSERT_EQ(listed.key().fields_size(), 5);
  EXPECT_EQ(listed.key().fields(3).name(), "kernel_type");
  EXPECT_EQ(listed.key().fields(3).value(), 11u);
  EXPECT_EQ(listed.key().fields(3).value_name(), "VEC_EPILOGUE_STREAMK");
  EXPECT_EQ(listed.key().model_name(), "");
  EXPECT_EQ(listed.quant_mode(), "PERCHANNEL");

  tl::ChipSpec big = chip;
  big.name = std::string(130, 'c');
  big.l2_bytes = kMax64;
  big.aic_num = 0;
  ExpectSameBytes(edge, big);

  // Fields without a word (no bits): the packed raw words are left out,
  // as protobuf leaves out an empty repeated field.
  tl::TilingDecision wordless = edge;
  wordless.plan.data.fields = {{"x", 5, 0}};
  ExpectSameBytes(wordless, chip);

  for (tl::KernelType type :
       {tl::KernelType::kAicOnly, tl::KernelType::kMixed1To2, tl::KernelType::kAivOnly}) {
    tl::TilingDecision decision = edge;
    decision.plan.kernel_type = type;
    ExpectSameBytes(decision, chip);
  }

  // Warnings after from_cache, in every view: none, one with a long
  // message, several, and one with every field at its default.
  tl::TilingDecision warned = edge;
  warned.plan.warnings = {{"L0B", 106496, 65536, std::string(200, 'w')}};
  ExpectSameBytes(warned, chip);
  warned.plan.warnings.push_back({"L1", kMax64, 0, "L1 stages need more"});
  warned.plan.warnings.push_back({});
  ExpectSameBytes(warned, chip);
  pb::TilingResponse compact;
  DecisionToProto(warned, chip, &compact, false, pb::RESPONSE_VIEW_COMPACT);
  ASSERT_EQ(compact.warnings_size(), 3);
  EXPECT_EQ(compact.warnings(0).buffer(), "L0B");
  EXPECT_EQ(compact.warnings(0).need_bytes(), 106496u);
}

// The platform's architecture (a string after the numeric figures, not one
// of them) in the bytes of every built-in profile and of each architecture.
TEST(WireAnswerTest, SameBytesAsProtobufOnEveryArchitecture) {
  absl::StatusOr<tl::TilingDecision> decision = tl::MakeBuiltinRegistry().Decide(
      ProblemFromProto(::npu::server::testing::StreamKRequest().problem()),
      *tl::FindPlatform(tl::kDefaultPlatform));
  ASSERT_TRUE(decision.ok()) << decision.status();
  std::set<std::string> arches;
  for (const tl::ChipSpec& builtin : tl::BuiltinPlatforms()) {
    SCOPED_TRACE(builtin.name);
    ExpectSameBytes(*decision, builtin);
    pb::TilingResponse reference = Reference(*decision, builtin, pb::RESPONSE_VIEW_FULL, false, "");
    EXPECT_EQ(reference.platform().npu_arch(), tl::NpuArchName(builtin.npu_arch));
    arches.insert(reference.platform().npu_arch());
  }
  EXPECT_EQ(arches, (std::set<std::string>{"DAV_2201", "DAV_3510"}));
  for (tl::NpuArch arch : {tl::NpuArch::kDav3510, tl::NpuArch::kDav2201}) {
    tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);
    chip.npu_arch = arch;
    ExpectSameBytes(*decision, chip);
  }
}

// Tiling-data names of every length around the encoder's short-copy sizes
// (4, 8, 16), and names long enough for a two-byte name length and a
// two-byte field length, each with values of one to ten bytes.
TEST(WireAnswerTest, SameBytesAsProtobufForNamesOfEveryLength) {
  const tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);
  // The names must outlive the decision: TilingField holds views.
  std::vector<std::string> names;
  for (size_t length = 0; length <= 20; ++length) {
    std::string name;
    for (size_t i = 0; i < length; ++i) name += static_cast<char>('a' + (i * 7 + length) % 26);
    names.push_back(name);
  }
  names.push_back(std::string(127, 'n'));
  names.push_back(std::string(128, 'n'));
  names.push_back(std::string(300, 'n'));
  tl::TilingDecision decision;
  decision.plan.strategy = "BASIC_ASWT";
  decision.plan.data.kernel = tl::KernelId::kMatMulCube;
  uint64_t value = 1;
  for (const std::string& name : names) {
    decision.plan.data.fields.push_back(
        {std::string_view(name), value, name.size() % 3 == 0 ? 8 : 32});
    value = value * 131 + 7;  // grows to ten-byte varints
  }
  decision.plan.data.fields.push_back({"max", std::numeric_limits<uint64_t>::max(), 32});
  ExpectSameBytes(decision, chip);
}

// The requests of the tests below: shapes that reach every built-in strategy
// (zero K, the vector multiplies, Stream-K, ASWT), with and without bias,
// transposed operands and forced fp32 accumulation.
std::vector<pb::TilingRequest> Requests() {
  std::vector<pb::TilingRequest> requests = {testing::StreamKRequest()};
  int n = 0;
  for (pb::DataType dtype :
       {pb::DATA_TYPE_FLOAT16, pb::DATA_TYPE_BFLOAT16, pb::DATA_TYPE_FLOAT32}) {
    for (int64_t m : {1, 17, 512, 4096}) {
      for (int64_t k : {0, 1, 64, 4097, 16384}) {
        for (int64_t cols : {1, 255, 8192}) {
          pb::TilingRequest request = testing::ShapeRequest(m, cols, k);
          request.set_id(absl::StrCat("item-", ++n));
          pb::MatmulProblem* p = request.mutable_problem();
          p->set_dtype_a(dtype);
          p->set_dtype_b(dtype);
          p->set_dtype_c(dtype);
          if (n % 3 == 0) {
            p->set_has_bias(true);
            p->set_dtype_bias(dtype);
          }
          if (n % 5 == 0) p->set_trans_a(true);
          // fp32 with the fp32 accumulation forced reaches the vector
          // strategies for a vector operand.
          if (dtype == pb::DATA_TYPE_FLOAT32 && n % 2 == 0) {
            p->set_trans_b(true);
            p->set_force_grp_acc_fp32(true);
          }
          requests.push_back(request);
        }
      }
    }
  }
  return requests;
}

TEST(WireAnswerTest, SameBytesAsProtobufForEveryStrategy) {
  const tl::StrategyRegistry registry = tl::MakeBuiltinRegistry();
  const tl::ChipSpec chip = *tl::FindPlatform(tl::kDefaultPlatform);
  std::set<std::string> strategies;
  for (const pb::TilingRequest& request : Requests()) {
    SCOPED_TRACE(request.ShortDebugString());
    absl::StatusOr<tl::TilingDecision> decision =
        registry.Decide(ProblemFromProto(request.problem()), chip);
    if (!decision.ok()) continue;  // e.g. a shape this chip cannot hold
    strategies.insert(decision->plan.strategy);
    ExpectSameBytes(*decision, chip);
  }
  EXPECT_EQ(strategies.size(), 5u)
      << "the requests should reach every built-in strategy: " << absl::StrJoin(strategies, ", ");
}

// Through the service: the bytes it sends are the serialized Answer(), fresh
// or from the cache, for every decision and in every view.
TEST(WireAnswerTest, ServiceSendsTheBytesOfItsAnswerMessage) {
  const tiling::StrategyRegistry registry = tiling::MakeBuiltinRegistry();
  for (const size_t cache_capacity : {size_t{0}, size_t{4096}}) {
    SCOPED_TRACE(cache_capacity == 0 ? "cache off" : "cache on");
    // Two services with the same history, so that their caches agree: one
    // answers with messages, the other in wire form.
    prometheus::Registry prometheus;
    ServiceMetrics metrics(prometheus);
    ServiceOptions options;
    options.cache_capacity = cache_capacity;
    TilingService by_message(registry, metrics, options);
    TilingService by_bytes(registry, metrics, options);
    for (const pb::TilingRequest& base : Requests()) {
      for (pb::ResponseView view : {pb::RESPONSE_VIEW_COMPACT, pb::RESPONSE_VIEW_FULL}) {
        for (bool trace : {false, true}) {
          pb::TilingRequest request = base;
          request.set_view(view);
          request.set_include_trace(trace);
          SCOPED_TRACE(request.ShortDebugString());
          // Twice: with the cache on, the second is a hit.
          for (int round = 0; round < 2; ++round) {
            pb::TilingResponse expected;
            const absl::Status answered = by_message.Answer(request, &expected);
            grpc::ByteBuffer bytes;
            const absl::Status serialized = by_bytes.AnswerSerialized(request, &bytes);
            ASSERT_EQ(answered.code(), serialized.code()) << answered << " / " << serialized;
            if (!answered.ok()) continue;
            // The cache's key leaves out the view and the trace: only the
            // first request of a shape misses.
            if (cache_capacity == 0 || round == 1) {
              EXPECT_EQ(expected.from_cache(), cache_capacity > 0);
            }
            EXPECT_EQ(::npu::testing::FlattenByteBuffer(bytes), expected.SerializeAsString());
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace npu::server
