// QuantBatchMatmulV3 (CANN's quant_batch_matmul_v3, arch35 / DAV_3510): the
// problem as its strategies see it once CANN's parse and checks are done,
// and what a strategy answers. The parse (quant_parse.h) makes a QuantFacts
// from the request; each strategy (quant_strategies.h) reads it and the chip.
// Part of `npu_tiling`.
#ifndef NPU_SERVER_TILING_QUANT_QUANT_FACTS_H_
#define NPU_SERVER_TILING_QUANT_QUANT_FACTS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace npu::tiling::quant {

// GE's dtype numbers, as CANN's checks and the biasDtype words carry them.
enum class GeDtype : uint32_t {
  kFloat = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kInt32 = 3,
  kInt64 = 9,
  kUint64 = 10,
  kBFloat16 = 27,
  kInt4 = 29,
  kHiFloat8 = 34,
  kFloat8E5M2 = 35,
  kFloat8E4M3 = 36,
  kFloat8E8M0 = 37,
  kFloat4E2M1 = 40,
  kFloat4E1M2 = 41,
};

// CANN's quant modes of one side (x1: the pertoken scale, x2: the scale);
// the values are the x1QuantMode / x2QuantMode words.
enum QuantModeBits : uint32_t {
  kDefaultMode = 0,
  kPerTensor = 1,
  kPerChannel = 2,
  kPerToken = 4,
  kMxPerGroup = 8,
  kPerBlock = 16,
  kPerGroup = 32,
};

// One tensor of the request as CANN's tiling context holds it: present or
// not (an absent optional input has no description and no shape), its
// dtype and its origin and storage shapes.
struct QuantTensor {
  bool present = false;
  GeDtype dtype = GeDtype::kFloat;
  std::vector<int64_t> origin;   // the logical shape
  std::vector<int64_t> storage;  // equal to `origin` but for FRACTAL_NZ
  bool nz = false;               // FRACTAL_NZ storage (x1, x2 only)
};

// A QuantBatchMatmulV3 request in CANN's terms: inputs 0 x1, 1 x2, 2 scale,
// 3 offset (optional), 4 bias (optional), 5 pertoken_scale (optional), the
// output y, and the attributes.
struct QuantRequest {
  QuantTensor x1, x2, scale, offset, bias, pertoken, y;
  bool transpose_x1 = false, transpose_x2 = false;
  // The group_size attribute: k | n << 16 | m << 32, 16 bits each.
  int64_t group_size = 0;
  int deterministic_level = 0;
  bool tensor_api = true;
};

// The problem after CANN's parse (shapes from the origin shapes, batch dims
// right-aligned, A's batch folded into M where CANN folds it) and its quant
// mode classification.
struct QuantFacts {
  uint64_t m = 0, n = 0, k = 0;  // after transposes and the batch fold
  bool trans_a = false, trans_b = false;
  // Products of the batch dims before the last two of x1, x2, the output
  // and the bias (1 when none), and the dims right-aligned into four slots
  // (slot 3 innermost, missing dims 1). After the fold, A's and C's are 1.
  uint64_t batch_a = 1, batch_b = 1, batch_c = 1, batch_bias = 1;
  std::array<uint64_t, 4> batch_a_dims{1, 1, 1, 1};
  std::array<uint64_t, 4> batch_b_dims{1, 1, 1, 1};
  std::array<uint64_t, 4> batch_c_dims{1, 1, 1, 1};

  GeDtype x1 = GeDtype::kInt8, x2 = GeDtype::kInt8, y = GeDtype::kFloat16;
  GeDtype scale = GeDtype::kUint64;
  bool has_pertoken = false;
  GeDtype pertoken = GeDtype::kFloat;  // meaningful when has_pertoken
  bool has_bias = false;
  GeDtype bias = GeDtype::kInt32;  // meaningful when has_bias
  bool has_offset = false;
  bool x1_nz = false, x2_nz = false;  // FRACTAL_NZ storage

  // The classification (CANN's SetQuantMode).
  uint32_t x1_quant_mode = kDefaultMode;
  uint32_t x2_quant_mode = kDefaultMode;
  bool is_per_channel = false;
  bool is_per_tensor = false;
  bool is_double_scale = false;
  bool is_pertoken = false;
  bool is_mx = false;
  bool is_per_block = false;
  uint64_t group_size_m = 0, group_size_n = 0, group_size_k = 0;

  int deterministic_level = 0;
  // The runtime's asc-devkit has the Tensor API (version >= 9.1.0); every
  // CANN golden assumes it.
  bool tensor_api = true;
};

// The 18-bit key's fields (CANN's QuantBatchMatmulV3 template arguments).
struct QuantKey {
  uint32_t a_trans = 0;     // bits 1:0
  uint32_t b_trans = 0;     // bits 3:2
  uint32_t batch_mode = 0;  // bits 7:4: 0 WITH_BATCH, 1 WITHOUT_BATCH
  uint32_t kernel = 0;      // bits 15:8
  uint32_t api_level = 0;   // bits 17:16: 0 HIGH, 1 BASIC, 2 BLAZE
  uint64_t Encode() const {
    return a_trans | b_trans << 2 | batch_mode << 4 | kernel << 8 |
           static_cast<uint64_t>(api_level) << 16;
  }
};

// One strategy's answer: the key, the block dim, the workspace, the
// schedule mode and the tiling data as CANN's int32 words (16, 38, 42 or 96
// of them).
struct QuantPlan {
  std::string strategy;  // CANN's name, "PERBLOCK_BASIC_API_ASW"...
  QuantKey key;
  uint32_t block_dim = 0;
  uint64_t workspace_bytes = 0;
  uint32_t schedule_mode = 0;
  std::vector<uint32_t> words;
};

}  // namespace npu::tiling::quant

#endif  // NPU_SERVER_TILING_QUANT_QUANT_FACTS_H_
