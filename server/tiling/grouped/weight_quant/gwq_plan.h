// GroupedMatmul's weight-quant tiling on a parsed problem: the one
// strategy's plan (SetTiling of grouped_weight_quant_batch_matmul_tiling.cpp
// after AnalyzeAttr): the N tail re-split, GMMWeightQuantTilingData (the
// parameters, gmmArray and the fixed TCubeTiling of a 256 x 256 x 64 block),
// the key, the block dim and the workspace.
//
// The kernel is the mix (1 AIC : 2 AIV) anti-quant kernel: the vector cores
// dequantize the weight into L1, the cube multiplies. Its block is fixed:
// 256 x 256 with K 64 per step (128 for A8W4, whose cube multiplies int8),
// four K steps per L1 load (three for A8W4 with group size 192), eight L1
// buffers per side; a bias on the vector path shrinks M to 240. Part of
// `npu_tiling`.
#ifndef NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_PLAN_H_
#define NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_PLAN_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/grouped/weight_quant/gwq_facts.h"
#include "server/tiling/grouped/weight_quant/gwq_resplit.h"

namespace npu::tiling::grouped::weight_quant {

// GMMWeightQuantTilingData (op_kernel/arch35/grouped_matmul_tiling_data_apt.h),
// member by member: GMMWeightQuantParam (14 words), GMMArray (3 x 128 words)
// and TCubeTiling (50 words).
struct GwqTilingValues {
  uint32_t group_num = 0;
  uint32_t core_num = 0;
  uint64_t k_size = 0;
  uint64_t n_size = 0;
  uint8_t single_x = 0;
  uint8_t single_weight = 0;
  uint8_t single_y = 0;
  int8_t group_type = 0;
  uint8_t group_list_type = 0;
  uint8_t has_bias = 0;
  uint8_t cube_num_blocks_n = 0;
  uint8_t reserved = 0;
  uint32_t group_size = 0;
  uint32_t main_block_size = 0;
  uint64_t main_block_count = 0;
  uint16_t first_tail_block_size = 0;
  uint16_t second_tail_block_size = 0;
  uint16_t first_tail_block_count = 0;
  uint16_t second_tail_block_count = 0;
  std::array<int32_t, kGwqMaxTensors> m_list{};
  std::array<int32_t, kGwqMaxTensors> k_list{};
  std::array<int32_t, kGwqMaxTensors> n_list{};
  CubeTiling mm;
};

// Words of GMMWeightQuantTilingData: 14 + 384 + 50.
inline constexpr int kGwqParamWords = 14;
inline constexpr int kGwqTilingWords = kGwqParamWords + 3 * kGwqMaxTensors + kCubeTilingWords;

// The struct as the kernel reads it: 448 int32 words, packed 8- / 16-bit
// members low first, uint64 members low word first.
std::array<uint32_t, kGwqTilingWords> GwqTilingWords(const GwqTilingValues& values);

// What the strategy answers.
struct GwqPlan {
  GwqTilingValues data;
  GwqKey key;
  uint32_t block_dim = 0;
  uint64_t workspace_bytes = 0;
  GwqResplit resplit;
};

// The workspace the kernel asks for: the library's 16 MiB system workspace.
inline constexpr uint64_t kGwqWorkspaceBytes = 16ull * 1024 * 1024;

// SetTiling after AnalyzeAttr: the re-split (CANN's refusals there are
// INVALID_ARGUMENT), then the struct, the key, block dim and workspace.
// A plan whose words would wrap where CANN's do (cubeNumBlocksN is 8 bits,
// the lists' m / n and TCubeTiling's M / N 32) is refused with
// INVALID_ARGUMENT naming the word and its limit.
absl::StatusOr<GwqPlan> GwqBuildPlan(const GwqFacts& facts);

}  // namespace npu::tiling::grouped::weight_quant

#endif  // NPU_SERVER_TILING_GROUPED_WEIGHT_QUANT_GWQ_PLAN_H_
