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

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/grouped/weight_quant/gwq_facts.h"
#include "server/tiling/grouped/weight_quant/gwq_resplit.h"
#include "server/tiling/types.h"

namespace npu::tiling::grouped::weight_quant {

// What the strategy answers.
struct GwqPlan {
  // GMMWeightQuantTilingData (GmmWeightQuantField, tiling_data.h): the
  // parameters, gmmArray and TCubeTiling.
  TilingData data;
  // The TCubeTiling written into `data`.
  CubeTiling mm;
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
