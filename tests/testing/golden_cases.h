// Readers of the CANN golden files: `cann950-tiling-cases/1`
// (tests/data/cann950/README.md, MatMulV3) and `cann950-ut-decoded/1`
// (tests/data/cann950_ops/README.md, BatchMatMulV3 and FusedMatMul). Each
// turns a case into a MatmulProblem + ChipSpec and its expected outputs.
#ifndef NPU_TESTS_TESTING_GOLDEN_CASES_H_
#define NPU_TESTS_TESTING_GOLDEN_CASES_H_

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "server/tiling/types.h"

namespace npu::testing {

struct GoldenCase {
  std::string name;
  tiling::MatmulProblem problem;
  tiling::ChipSpec chip;
  uint32_t block_dim = 0;
  uint64_t tiling_key = 0;
  std::string api_level, model, full_load, l0c2out, tiling_struct;
  std::vector<std::pair<std::string, uint64_t>> fields;  // file order
};

// gtest prints a failing case by its name rather than its bytes.
inline void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

inline tiling::DataType DtypeOf(const nlohmann::json& value) {
  return *tiling::ParseDataType(value.get<std::string>());
}

inline std::vector<GoldenCase> LoadGoldenCases(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<GoldenCase> cases;
  for (const auto& c : doc.at("cases")) {
    GoldenCase g;
    g.name = c.at("name").get<std::string>();
    const auto& in_json = c.at("input");
    tiling::MatmulProblem& p = g.problem;
    p.m = in_json.at("m");
    p.n = in_json.at("n");
    p.k = in_json.at("k");
    p.dtype_a = DtypeOf(in_json.at("dtype_a"));
    p.dtype_b = DtypeOf(in_json.at("dtype_b"));
    p.dtype_c = DtypeOf(in_json.at("dtype_c"));
    p.trans_a = in_json.at("trans_a");
    p.trans_b = in_json.at("trans_b");
    p.format_a = *tiling::ParseFormat(in_json.at("format_a").get<std::string>());
    p.format_b = *tiling::ParseFormat(in_json.at("format_b").get<std::string>());
    p.format_c = *tiling::ParseFormat(in_json.at("format_c").get<std::string>());
    p.has_bias = in_json.at("bias");
    if (p.has_bias) p.dtype_bias = DtypeOf(in_json.at("bias_dtype"));
    p.hf32 = in_json.at("hf32");
    p.force_grp_acc_fp32 = in_json.at("force_grp_acc_fp32");
    g.chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
    const auto& pl = in_json.at("platform");
    g.chip.aic_num = pl.at("aic_num");
    g.chip.aiv_num = pl.at("aiv_num");
    g.chip.l1_bytes = pl.at("l1_bytes");
    g.chip.l0a_bytes = pl.at("l0a_bytes");
    g.chip.l0b_bytes = pl.at("l0b_bytes");
    g.chip.l0c_bytes = pl.at("l0c_bytes");
    g.chip.ub_bytes = pl.at("ub_bytes");
    g.chip.l2_bytes = pl.at("l2_bytes");
    g.chip.bt_bytes = pl.at("bt_bytes");
    const auto& ex = c.at("expected");
    g.block_dim = ex.at("block_dim");
    g.tiling_key = ex.at("tiling_key");
    g.api_level = ex.at("api_level");
    g.model = ex.at("model");
    g.full_load = ex.at("full_load");
    g.l0c2out = ex.at("l0c2out");
    g.tiling_struct = ex.at("tiling_struct");
    for (const auto& [field, value] : ex.at("fields").items()) {
      g.fields.emplace_back(field, value.get<uint64_t>());
    }
    cases.push_back(std::move(g));
  }
  return cases;
}

// One `cann950-ut-decoded/1` case. The mapping is the one of tilingctl's
// conform (client/tilingctl/conform.cc, RequestFromDecodedCase), on the
// engine's own types.
struct DecodedGoldenCase {
  std::string name;
  tiling::MatmulProblem problem;
  tiling::ChipSpec chip;
  // Why no MatmulProblem can state the case's input (A's K differing from
  // B's, a shape that does not follow from m/n/k); empty when it can.
  std::string inexpressible;
  // What the case states that the request leaves out (a y shape that
  // disagrees with x1 and x2), for the test's log.
  std::string note;
  bool expect_refusal = false;  // status GRAPH_FAILED
  std::optional<uint32_t> block_dim;
  std::optional<uint64_t> tiling_key;
  // The words CANN's test compares: (index, expected word).
  std::vector<std::pair<size_t, uint32_t>> words;
  // The golden string's word count, when the test compares all of it.
  std::optional<size_t> word_count;
};

inline void PrintTo(const DecodedGoldenCase& c, std::ostream* os) { *os << c.name; }

inline std::vector<int64_t> DimsOf(const nlohmann::json& object, const char* key) {
  std::vector<int64_t> dims;
  if (object.is_object() && object.contains(key) && !object.at(key).is_null()) {
    dims = object.at(key).get<std::vector<int64_t>>();
  }
  return dims;
}

inline std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

// The stored shape of a tensor whose logical dims are `logical` read
// through `perm` (logical[i] = stored[perm[i]]); `logical` for a perm that
// is not a permutation of 0..n-1.
inline std::vector<int64_t> StoredThrough(const std::vector<int64_t>& perm,
                                          const std::vector<int64_t>& logical) {
  std::vector<int64_t> stored(logical.size(), -1);
  if (perm.size() != logical.size()) return logical;
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || static_cast<size_t>(perm[i]) >= logical.size() || stored[perm[i]] != -1) {
      return logical;
    }
    stored[perm[i]] = logical[i];
  }
  return stored;
}

// A case's expectations: the status, then block dim, key and compared words
// where given.
inline void ReadExpected(const nlohmann::json& ex, DecodedGoldenCase& g) {
  g.expect_refusal = ex.at("status") == "GRAPH_FAILED";
  if (!ex.at("block_dim").is_null()) g.block_dim = ex.at("block_dim").get<uint32_t>();
  if (!ex.at("tiling_key").is_null()) g.tiling_key = ex.at("tiling_key").get<uint64_t>();
  if (ex.contains("compared_word_indices") && !ex.at("compared_word_indices").is_null()) {
    const auto& words = ex.at("tiling_data_words");
    for (const auto& index : ex.at("compared_word_indices")) {
      const size_t i = index.get<size_t>();
      // The tests print words as int32.
      g.words.emplace_back(i, static_cast<uint32_t>(words.at(i).get<int64_t>()));
    }
    // A test that compares every word compares the string's length too.
    if (!words.empty() && g.words.size() == words.size()) g.word_count = words.size();
  }
}

// A TransposeBatchMatMul / TransposeQuantBatchMatMul case of the same schema
// (tests/data/cann950_tbmm/README.md): the logical m, n, k and batch, the
// perms, x1's and x2's origin shapes (which must be the logical ones read
// through the perms; y's is only noted), the scales (their storage shapes,
// which CANN reads), the group size split into its m / n / k parts, and
// the vector core count the op's compile info holds where it reads one.
inline void FillTransposeCase(const nlohmann::json& c, DecodedGoldenCase& g) {
  tiling::MatmulProblem& p = g.problem;
  p.m = c.at("m");
  p.n = c.at("n");
  p.k = c.at("k");
  p.dtype_a = DtypeOf(c.at("dtype_a"));
  p.dtype_b = DtypeOf(c.at("dtype_b"));
  p.dtype_c = DtypeOf(c.at("dtype_c"));
  p.format_a = *tiling::ParseFormat(c.at("format_a").get<std::string>());
  p.format_b = *tiling::ParseFormat(c.at("format_b").get<std::string>());
  p.format_c = *tiling::ParseFormat(c.at("format_c").get<std::string>());
  p.has_bias = c.at("bias");
  p.hf32 = c.value("enable_hf32_attr", false);
  tiling::TransposeAttrs& t = p.transpose;
  t.perm_x1 = c.at("perm_x1").get<std::vector<int64_t>>();
  t.perm_x2 = c.at("perm_x2").get<std::vector<int64_t>>();
  t.perm_y = c.at("perm_y").get<std::vector<int64_t>>();
  t.batch = c.at("batch").at("batch_c");
  t.batch_split_factor = c.at("batch_split_factor");
  if (!c.at("k_b").is_null() && c.at("k_b").get<int64_t>() != p.k) {
    g.inexpressible = "x1's K differs from x2's K";
  }
  const nlohmann::json& ori = c.at("ori_shapes");
  const nlohmann::json& storage = c.at("storage_shapes");
  const std::vector<int64_t> x1 = StoredThrough(t.perm_x1, {t.batch, p.m, p.k});
  const std::vector<int64_t> x2 = StoredThrough(t.perm_x2, {t.batch, p.k, p.n});
  if (g.inexpressible.empty() && DimsOf(ori, "x1") != x1) {
    g.inexpressible = "x1's shape " + DimsText(DimsOf(ori, "x1")) + " is not " + DimsText(x1);
  }
  if (g.inexpressible.empty() && DimsOf(ori, "x2") != x2) {
    g.inexpressible = "x2's shape " + DimsText(DimsOf(ori, "x2")) + " is not " + DimsText(x2);
  }
  const std::vector<int64_t> y = DimsOf(ori, "y");
  if (y.size() != 3 && g.inexpressible.empty()) g.inexpressible = "y is not 3-D";
  if (p.op == tiling::MatmulOp::kTransposeQuantBatchMatMul) {
    tiling::QuantInputs& q = p.quant;
    if (!c.at("x1_scale_dtype").is_null()) {
      q.pertoken = {true, DtypeOf(c.at("x1_scale_dtype")), DimsOf(storage, "x1_scale")};
    }
    if (!c.at("x2_scale_dtype").is_null()) {
      q.scale = {true, DtypeOf(c.at("x2_scale_dtype")), DimsOf(storage, "x2_scale")};
    }
    const uint64_t group = c.at("group_size").get<uint64_t>();
    q.group_size_k = static_cast<int64_t>(group & 0xFFFF);
    q.group_size_n = static_cast<int64_t>((group >> 16) & 0xFFFF);
    q.group_size_m = static_cast<int64_t>((group >> 32) & 0xFFFF);
  }
  g.chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
  const auto& pl = c.at("platform");
  g.chip.aic_num = pl.at("core_num");
  g.chip.l1_bytes = pl.at("l1");
  g.chip.l0a_bytes = pl.at("l0a");
  g.chip.l0b_bytes = pl.at("l0b");
  g.chip.l0c_bytes = pl.at("l0c");
  g.chip.ub_bytes = pl.at("ub");
  g.chip.l2_bytes = pl.at("l2");
  g.chip.bt_bytes = pl.at("bt");
  // TransposeBatchMatMul never reads the vector core count (its compile
  // info holds 0); TransposeQuantBatchMatMul's FP8 mode checks it (its MX
  // mode, whose only case with 0 is test_4, does not).
  const uint32_t aiv = c.at("test_harness").at("aiv_num_seen_by_tiling");
  if (aiv != 0) g.chip.aiv_num = aiv;
}

inline std::vector<DecodedGoldenCase> LoadDecodedCases(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<DecodedGoldenCase> cases;
  for (const auto& c : doc.at("cases")) {
    DecodedGoldenCase g;
    g.name = c.at("name").get<std::string>();
    tiling::MatmulProblem& p = g.problem;
    p.op = *tiling::ParseMatmulOp(c.at("op_type").get<std::string>());
    if (p.op == tiling::MatmulOp::kTransposeBatchMatMul ||
        p.op == tiling::MatmulOp::kTransposeQuantBatchMatMul) {
      FillTransposeCase(c, g);
      ReadExpected(c.at("expected"), g);
      cases.push_back(std::move(g));
      continue;
    }
    const bool fused = p.op == tiling::MatmulOp::kFusedMatMul;
    p.m = c.at("m");
    p.n = c.at("n");
    p.k = c.at("k");
    p.dtype_a = DtypeOf(c.at("dtype_a"));
    p.dtype_b = DtypeOf(c.at("dtype_b"));
    p.dtype_c = DtypeOf(c.at("dtype_c"));
    p.trans_a = c.at("trans_a");
    p.trans_b = c.at("trans_b");
    p.format_a = *tiling::ParseFormat(c.at("format_a").get<std::string>());
    p.format_b = *tiling::ParseFormat(c.at("format_b").get<std::string>());
    p.format_c = *tiling::ParseFormat(c.at("format_c").get<std::string>());
    p.has_bias = c.at("bias");
    // FusedMatMul's test wires the bias with A's dtype whatever bias_dtype says.
    if (p.has_bias) {
      p.dtype_bias = fused || c.at("bias_dtype").is_null() ? (fused ? p.dtype_a : p.dtype_c)
                                                           : DtypeOf(c.at("bias_dtype"));
    }
    p.hf32 = c.value("enable_hf32_attr", false);
    if (!fused) p.avoid_tensor_api = c.value("offset_x", 0) == 0x80;
    if (fused) {
      p.fused.op = *tiling::ParseFusedOp(c.value("fused_op_type", std::string()));
      p.fused.inner_precise = c.value("inner_precise", 0);
    }
    const nlohmann::json& batch = c.at("batch");
    p.batch.a = DimsOf(batch, "a_batch_dims");
    p.batch.b = DimsOf(batch, "b_batch_dims");
    p.batch.c = DimsOf(batch, "c_batch_dims");
    if (!c.at("k_b").is_null() && c.at("k_b").get<int64_t>() != p.k) {
      g.inexpressible = "A's K differs from B's K";
    }
    const nlohmann::json& ori = c.at("ori_shapes");
    const nlohmann::json& storage = c.at("storage_shapes");
    const nlohmann::json strides = c.value("strides", nlohmann::json::object());
    auto concat = [](std::vector<int64_t> a, std::vector<int64_t> b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    struct Operand {
      const char* name;
      std::vector<int64_t> expected;
      bool* view;
    };
    const Operand operands[] = {{"x1",
                                 concat(p.batch.a, p.trans_a ? std::vector<int64_t>{p.k, p.m}
                                                             : std::vector<int64_t>{p.m, p.k}),
                                 &p.batch.a_interleaved},
                                {"x2",
                                 concat(p.batch.b, p.trans_b ? std::vector<int64_t>{p.n, p.k}
                                                             : std::vector<int64_t>{p.k, p.n}),
                                 &p.batch.b_interleaved},
                                {"y", concat(p.batch.c, {p.m, p.n}), nullptr}};
    for (const Operand& operand : operands) {
      if (!g.inexpressible.empty()) break;
      const std::vector<int64_t> view = DimsOf(ori, operand.name);
      const std::vector<int64_t> stored = DimsOf(storage, operand.name);
      const std::vector<int64_t> stride = DimsOf(strides, operand.name);
      // CANN tiles from x1 and x2 and reads only y's batch dims: a y whose
      // [m, n] disagrees with them is noted, not refused.
      const bool is_y = operand.view == nullptr;
      const bool batch_only_differs =
          is_y && view.size() >= 2 && view.size() == operand.expected.size() &&
          std::equal(view.begin(), view.end() - 2, operand.expected.begin());
      if (!view.empty() && view != operand.expected && batch_only_differs) {
        g.note = "y's shape " + DimsText(view) + " disagrees with x1 and x2 (" +
                 DimsText(operand.expected) + "); CANN tiles from x1 and x2";
      } else if (!view.empty() && view != operand.expected) {
        g.inexpressible = std::string(operand.name) + "'s shape " + DimsText(view) + " is not " +
                          DimsText(operand.expected);
      } else if (!stride.empty()) {
        // CANN's {1, 0, 2} view: [batch, rows, cols] over [rows, batch, cols].
        if (operand.view != nullptr && view.size() == 3 && stored.size() == 1 &&
            stride == std::vector<int64_t>{view[2], view[0] * view[2], 1}) {
          *operand.view = true;
        } else {
          g.inexpressible = std::string(operand.name) + " is a view of another kind";
        }
      } else if (std::string(operand.name) == "x2" && p.format_b == tiling::Format::kFractalNz) {
        p.storage_shape_b = stored;
      }
    }
    const std::vector<int64_t> bias = DimsOf(ori, "bias");
    if (p.has_bias && !bias.empty()) {
      if (bias.back() != p.n || (bias.size() >= 2 && bias[bias.size() - 2] != 1)) {
        if (g.inexpressible.empty()) g.inexpressible = "bias shape " + DimsText(bias);
      } else if (bias.size() > 2) {
        p.batch.bias.assign(bias.begin(), bias.end() - 2);
      }
    }
    if (p.fused.op == tiling::FusedOp::kAdd || p.fused.op == tiling::FusedOp::kMul) {
      p.fused.x3_shape = ori.contains("x3") && !ori.at("x3").is_null()
                             ? DimsOf(ori, "x3")
                             : concat(p.batch.c, {p.m, p.n});
    }
    g.chip = *tiling::FindPlatform(tiling::kDefaultPlatform);
    const auto& pl = c.at("platform");
    g.chip.aic_num = pl.at("core_num");
    g.chip.aiv_num = pl.at("vector_core_num");
    g.chip.l1_bytes = pl.at("l1");
    g.chip.l0a_bytes = pl.at("l0a");
    g.chip.l0b_bytes = pl.at("l0b");
    g.chip.l0c_bytes = pl.at("l0c");
    g.chip.ub_bytes = pl.at("ub");
    g.chip.l2_bytes = pl.at("l2");
    g.chip.bt_bytes = pl.at("bt");
    ReadExpected(c.at("expected"), g);
    cases.push_back(std::move(g));
  }
  return cases;
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_GOLDEN_CASES_H_
