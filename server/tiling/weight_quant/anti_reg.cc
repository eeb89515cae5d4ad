#include "server/tiling/weight_quant/anti_reg.h"

#include <algorithm>
#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/weight_quant/basic_block_solver.h"
#include "server/tiling/weight_quant/wq_math.h"

namespace npu::tiling::weight_quant {
namespace {

constexpr uint64_t kSupportedC0 = 16;
constexpr int64_t kBuf2 = 2;
constexpr int64_t kBlockCube = 16;
constexpr int64_t kGroupAlign = 32;
constexpr int64_t kGroup64 = 64;
constexpr int64_t kL0cBytes = 256 * 1024;  // the solver's fixed L0C

// GetBlockAlignSizeByDataType: elements of one 32-byte block (64 for a
// 4-bit type).
int64_t BlockAlign(DataType dtype) {
  if (DataTypeBits(dtype) == 4) return 64;
  return 32 / static_cast<int64_t>(GeBytes(dtype));
}

struct Bub {
  int64_t n = 0, k = 0;
  bool set = false;
};

// SetBubTiling: the weight slice one vector core dequantizes per pass.
Bub BubTiling(const WqFacts& f, const BasicBlockParam& r) {
  const int64_t k_bl1 = std::min(r.single_k, r.l1.step_kb * r.block.base_k);
  const int64_t n_bl1 = std::min(r.single_n, r.l1.step_n * r.block.base_n);
  const int64_t g = static_cast<int64_t>(f.group_size);
  Bub bub;
  if (f.weight == DataType::kInt8 && f.group_size > 0) {  // int8, per group
    bub.set = true;
    if (f.trans_b) {
      bub.n = OpsCeilDiv<int64_t>(n_bl1, kBuf2);
      bub.k = OpsCeilAlign<int64_t>(k_bl1, BlockAlign(f.weight));
    } else {
      bub.k = g > 0 && k_bl1 > g ? OpsCeilDiv<int64_t>(k_bl1 / g, kBuf2) * g
                                 : OpsCeilDiv<int64_t>(k_bl1, kBuf2);
      bub.n = OpsCeilAlign<int64_t>(n_bl1, BlockAlign(f.weight));
    }
  } else if ((f.weight == DataType::kInt4 || f.weight == DataType::kFloat4E2M1) && f.weight_nz) {
    bub.set = true;
    if (n_bl1 > kBlockCube) {
      bub.n = OpsCeilAlign<int64_t>(OpsCeilDiv<int64_t>(n_bl1, kBuf2), kBlockCube);
      bub.k = k_bl1;
    } else {
      bub.n = n_bl1;
      bub.k = g > 0 && k_bl1 > g ? OpsCeilDiv<int64_t>(OpsCeilDiv<int64_t>(k_bl1, g), kBuf2) * g
                                 : OpsCeilDiv<int64_t>(k_bl1 / kGroupAlign, kBuf2) * kGroupAlign;
    }
  } else if (f.weight == DataType::kInt4) {  // int4 ND
    bub.set = true;
    if (f.trans_b) {
      bub.n = OpsCeilDiv<int64_t>(n_bl1, kBuf2);
      bub.k = OpsCeilAlign<int64_t>(k_bl1, BlockAlign(f.weight));
      if (g > kGroup64 && g % kGroup64 > 0 && bub.k > g) bub.k = std::max(bub.k, g + 96);
    } else {
      bub.n = OpsCeilAlign<int64_t>(n_bl1, BlockAlign(f.weight));
      bub.k = g > 0 && k_bl1 > g ? OpsCeilDiv<int64_t>(k_bl1 / g, kBuf2) * g
                                 : OpsCeilDiv<int64_t>(k_bl1, kBuf2);
    }
  }
  return bub;
}

}  // namespace

bool AntiRegStrategy::IsCapable(const WqFacts& f, const ChipSpec& /*chip*/,
                                std::string* reason) const {
  auto no = [reason](std::string text) {
    if (reason != nullptr) *reason = std::move(text);
    return false;
  };
  if (f.weight_nz && f.c0 != kSupportedC0) {
    return no(absl::StrCat("an NZ weight needs C0 ", kSupportedC0, "; its C0 is ", f.c0));
  }
  if (f.antiquant != QuantType::kPerGroup) {
    return no(
        absl::StrCat("per-group only; the scale is ", std::string(QuantTypeName(f.antiquant))));
  }
  if (f.weight != DataType::kInt4 && f.weight != DataType::kFloat4E2M1 &&
      f.weight != DataType::kInt8) {
    return no(absl::StrCat("int4, float4 or int8 weights only; the weight is ",
                           std::string(DataTypeName(f.weight))));
  }
  if (f.y == DataType::kInt8) return no("no int8 output");
  if (reason != nullptr) {
    *reason = absl::StrCat("per-group ", std::string(DataTypeName(f.weight)),
                           f.weight_nz ? " NZ" : " ND", " weight, group ", f.group_size);
  }
  return true;
}

absl::StatusOr<WqPlan> AntiRegStrategy::DoTiling(const WqFacts& f, const ChipSpec& chip) const {
  // The solver models the 950: the chip's AIC count and L1, fixed UB (248
  // KiB, as ADAPTIVE_SPLIT), L0A / L0B 64 KiB and L0C 256 KiB.
  SolverPlatform platform;
  platform.block_num = chip.aic_num;
  platform.l1_bytes = static_cast<int64_t>(chip.l1_bytes);
  BasicBlockParam p;
  p.m = static_cast<int64_t>(f.m);
  p.n = static_cast<int64_t>(f.n);
  p.k = static_cast<int64_t>(f.k);
  p.single_k = p.k;
  p.group_size = static_cast<int64_t>(f.group_size);
  p.trans_a = f.trans_a;
  p.trans_b = f.trans_b;
  p.has_bias = f.has_bias;
  p.weight_nz = f.weight_nz;
  p.a_bits = GeBits(f.x);
  p.b_bits = GeBits(f.weight);
  p.bias_bits = f.has_bias ? GeBits(f.bias) : 0;
  if (!SolveBasicBlock(platform, f.has_antiquant_offset, f.antiquant, &p)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the basic-block solver finds no tiling for m=", f.m, ", n=", f.n, ", k=", f.k,
                     ", group ", f.group_size, " (CANN's GetBasicBlockTiling fails)"));
  }
  const BasicBlockParam& r = p;
  CubeTiling t;
  t.m = static_cast<int32_t>(r.m);
  t.ka = static_cast<int32_t>(r.k);
  t.n = static_cast<int32_t>(r.n);
  t.kb = static_cast<int32_t>(r.k);
  t.single_core_m = static_cast<int32_t>(r.l1.step_m * r.block.base_m);
  t.single_core_k = static_cast<int32_t>(r.l1.step_ka * r.block.base_k);
  t.single_core_n = static_cast<int32_t>(r.l1.step_n * r.block.base_n);
  t.base_m = static_cast<int32_t>(r.block.base_m);
  t.base_n = static_cast<int32_t>(r.block.base_n);
  t.base_k = static_cast<int32_t>(r.block.base_k);
  t.db_l0a = 2;
  t.db_l0b = 2;
  // L0C double-buffers when two fp32 blocks fit the solver's 256 KiB.
  t.db_l0c = r.block.base_m * r.block.base_n * 4 * 2 <= kL0cBytes ? 2 : 1;
  t.step_m = static_cast<int32_t>(r.l1.step_m);
  t.step_n = static_cast<int32_t>(r.l1.step_n);
  t.step_ka = static_cast<int32_t>(r.l1.step_ka);
  t.step_kb = static_cast<int32_t>(r.l1.step_kb);
  t.depth_a1 = static_cast<int32_t>(r.l1.a1_buffers * r.l1.step_m * r.l1.step_ka);
  t.depth_b1 = static_cast<int32_t>(r.l1.b1_buffers * r.l1.step_n * r.l1.step_kb);
  t.iterate_order = static_cast<int32_t>(r.l1.iterate_order);
  t.is_bias = f.has_bias ? 1 : 0;
  t.share_l1_size = f.has_bias ? static_cast<int32_t>(r.l1.step_n * r.block.base_n *
                                                      static_cast<int64_t>(GeBytes(f.bias)))
                               : 0;
  t.share_l0c_size = 0;
  const uint8_t cube_m = static_cast<uint8_t>(r.m_dim);
  const uint8_t cube_n = static_cast<uint8_t>(r.n_dim);
  const Bub bub = BubTiling(f, r);
  const uint64_t n_bub = static_cast<uint64_t>(bub.n), k_bub = static_cast<uint64_t>(bub.k);
  // SetAdditionalParam: the two vector cores split one L1 load of the weight
  // along K when it is one buffer of exactly two slices of the full N.
  uint32_t vec_core_parallel = 0;
  const uint64_t k_bl1 = static_cast<uint64_t>(std::min(r.single_k, r.l1.step_kb * r.block.base_k));
  const uint64_t n_bl1 = static_cast<uint64_t>(std::min(r.single_n, r.l1.step_n * r.block.base_n));
  if (r.l1.b1_buffers == 1 && OpsCeilDiv(k_bl1, k_bub) == 2 && n_bub == n_bl1) {
    vec_core_parallel = 1;
  }

  using F = WqRegBaseField;
  WqPlan plan;
  plan.data = NewTilingData<F>();
  const TilingStructWriter<F> put(plan.data);
  put(F::kCubeNumBlocksN, cube_n);
  put(F::kCubeNumBlocksM, cube_m);
  put(F::kVecCoreParallel, vec_core_parallel);
  put(F::kAL1Pingpong, static_cast<uint16_t>(r.l1.a1_buffers));
  put(F::kBL1Pingpong, static_cast<uint16_t>(r.l1.b1_buffers));
  put(F::kKSize, f.k);
  put(F::kNSize, f.n);
  put(F::kGroupSize, f.group_size);
  put(F::kMSize, f.m);
  put(F::kNBubSize, n_bub);
  put(F::kKBubSize, k_bub);
  const std::array<uint32_t, kCubeTilingWords> words = CubeTilingWords(t);
  const size_t first = static_cast<size_t>(F::kMatmulTilingUsedCoreNum);
  for (int i = 0; i < kCubeTilingWords; ++i) put(static_cast<F>(first + i), words[i]);

  WqKey& key = plan.key;
  key.sub_algorithm = kSubAlgoAntiReg;
  key.template_custom = 0;
  key.trans_a = f.trans_a;
  key.trans_b = f.trans_b;
  key.antiquant_type = static_cast<uint64_t>(f.antiquant);
  key.quant_type = static_cast<uint64_t>(QuantType::kNone);
  key.has_antiquant_offset = f.has_antiquant_offset;
  // Set from the bias input's dtype alone: an absent bias reads as float16.
  key.is_bias_fp32 = f.bias == DataType::kFloat32;
  key.is_weight_nz = f.weight_nz;
  plan.block_dim = static_cast<uint32_t>(cube_m) * cube_n;
  plan.workspace_bytes = kWqSystemWorkspaceBytes + uint64_t{cube_n} * cube_m * sizeof(uint64_t);
  plan.detail = absl::StrCat(
      r.m_dim, " x ", r.n_dim, " cube cores (M x N), base ", r.block.base_m, " x ", r.block.base_n,
      " x ", r.block.base_k, ", stepKa ", r.l1.step_ka, " stepKb ", r.l1.step_kb, ", L1 buffers A ",
      r.l1.a1_buffers, " B ", r.l1.b1_buffers,
      bub.set ? absl::StrCat(", UB weight slice ", bub.n, " x ", bub.k)
              : std::string(", nBubSize / kBubSize 0: CANN leaves them unset for a float4 ND "
                            "weight (its words there are undefined)"));
  return plan;
}

}  // namespace npu::tiling::weight_quant
