#include "server/tiling/weight_quant/custom_deprecated.h"

#include <algorithm>
#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/cann_fault.h"
#include "server/tiling/cube_tiling_search.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/weight_quant/wq_math.h"

namespace npu::tiling::weight_quant {
namespace {

constexpr uint64_t kSupportedC0 = 32;
constexpr uint64_t kMaxShapeDim = 65535;
constexpr uint64_t kBlockCube = 16;
constexpr int32_t kOneBlock = 32;  // bytes of one block (ONE_BLK_SIZE)
// CANN divides 32 bytes by sizeof of a GE dtype enum, which is 4.
constexpr uint64_t kSizeofDtypeEnum = 4;

// CalcTailSize: the last piece of `total` cut in `piece`s (a whole piece
// when it divides).
template <typename T>
T TailSize(uint64_t total, T piece) {
  if (piece == 0) return 0;
  const uint64_t mod = total % static_cast<uint64_t>(piece);
  return mod != 0 ? static_cast<T>(mod) : piece;
}

// CalcTschBlockDim: vector slices on AIV cores, counted in AIC cores.
uint32_t TschBlockDim(uint32_t slices, uint32_t aic, uint32_t aiv) {
  if (aic == 0 || aiv == 0 || aic > aiv) return slices;
  const uint32_t ratio = aiv / aic;
  return (slices + (ratio - 1)) / ratio;
}

// WeightQuantBatchMatmulV2TilingData, the members this strategy sets.
struct CustomData {
  uint8_t vec_block_dim_n = 0, vec_block_dim_k = 0, cube_block_dim_n = 0, cube_block_dim_m = 0;
  uint8_t k_pad = 0, n_pad = 0;
  uint32_t vec_single_k = 0, vec_single_n = 0, cube_tail_m = 0, cube_tail_n = 0;
  uint32_t cube_single_n_loop = 0, cube_single_n_tail_loop = 0, repeat_axis_max = 0;
  uint64_t vec_single_k_loop = 0, vec_single_n_loop = 0, vec_single_n_tail_loop = 0;
  uint64_t k_align = 0, n_align = 0, k = 0, n = 0, group_size = 0, m = 0;
  uint64_t block_batch = 0, shape_batch = 0;
  CubeTiling mm;
};

// AdjustMatmulTiling and AdjustL1Size: an NZ weight not transposed loads N
// in whole 32-element blocks across the cores.
void AdjustForNz(const WqFacts& f, const ChipSpec& chip, CustomData& d) {
  if (!f.weight_nz || f.trans_b) return;
  CubeTiling& t = d.mm;
  const int32_t base_n = t.base_n;
  const int32_t min_base_n = kOneBlock;
  if ((base_n * d.cube_block_dim_n) % min_base_n == 0) return;
  t.base_n = std::max(OpsFloorAlign(base_n, min_base_n), min_base_n);
  const int32_t base_k = t.base_k;
  if (t.base_n > base_n) {
    t.base_k = std::max(OpsFloorAlign(t.base_k / 2, static_cast<int32_t>(kBlockCube)),
                        static_cast<int32_t>(kBlockCube));
  }
  if (base_k == t.base_k) {
    if (t.step_kb == 1) {
      t.step_n = std::max(t.step_n / 2, 1);
    } else {
      t.step_kb = std::max(t.step_kb / 2, 1);
    }
    t.depth_b1 = std::max(t.depth_b1 / 2, 1);
    const int32_t k = static_cast<int32_t>(d.k);
    if (t.step_kb > t.step_ka && t.step_ka != 0 && t.step_kb % t.step_ka != 0 &&
        t.step_kb * base_k < k) {
      t.step_kb = OpsFloorAlign(t.step_kb, t.step_ka);
    }
    if (t.step_ka > t.step_kb && t.step_kb != 0 && t.step_ka % t.step_kb != 0 &&
        t.step_ka * base_k < k) {
      t.step_ka = OpsFloorAlign(t.step_ka, t.step_kb);
    }
  } else {
    t.depth_b1 = t.step_n == 0 ? t.depth_b1 : t.depth_b1 / t.step_n;
    t.depth_a1 = t.step_m == 0 ? t.depth_a1 : t.depth_a1 / t.step_m;
    t.step_m = 1;
    t.step_n = 1;
  }
  // AdjustL1Size: x's dtype for both blocks, a bias row.
  const uint64_t x_bytes = GeBytes(f.x);
  const uint64_t a1 = static_cast<uint64_t>(static_cast<uint32_t>(t.base_m * t.base_k)) * x_bytes;
  const uint64_t b1 = static_cast<uint64_t>(static_cast<uint32_t>(t.base_n * t.base_k)) * x_bytes;
  const uint64_t a_l1 = a1 * static_cast<uint64_t>(static_cast<int64_t>(t.depth_a1));
  const uint64_t b_l1 = b1 * static_cast<uint64_t>(static_cast<int64_t>(t.depth_b1));
  const uint64_t bias_l1 =
      f.has_bias ? static_cast<uint64_t>(static_cast<uint32_t>(t.base_n)) * GeBytes(f.bias) : 0;
  if (a_l1 + b_l1 + bias_l1 > chip.l1_bytes) {
    t.step_m /= 2;
    t.depth_a1 /= 2;
  }
}

TilingData ToTilingData(const CustomData& d) {
  using F = WqCustomField;
  TilingData data = NewTilingData<F>();
  const TilingStructWriter<F> put(data);
  put(F::kVecBlockDimN, d.vec_block_dim_n);
  put(F::kVecBlockDimK, d.vec_block_dim_k);
  put(F::kCubeBlockDimN, d.cube_block_dim_n);
  put(F::kCubeBlockDimM, d.cube_block_dim_m);
  put(F::kKPadSize, d.k_pad);
  put(F::kNPadSize, d.n_pad);
  put(F::kVecSingleK, d.vec_single_k);
  put(F::kVecSingleN, d.vec_single_n);
  put(F::kCubeTailM, d.cube_tail_m);
  put(F::kCubeTailN, d.cube_tail_n);
  put(F::kCubeSingleNLoop, d.cube_single_n_loop);
  put(F::kCubeSingleNTailLoop, d.cube_single_n_tail_loop);
  put(F::kRepeatAxisMax, d.repeat_axis_max);
  put(F::kVecSingleKLoop, d.vec_single_k_loop);
  put(F::kVecSingleNLoop, d.vec_single_n_loop);
  put(F::kVecSingleNTailLoop, d.vec_single_n_tail_loop);
  put(F::kKAlign, d.k_align);
  put(F::kNAlign, d.n_align);
  put(F::kKSize, d.k);
  put(F::kNSize, d.n);
  put(F::kGroupSize, d.group_size);
  put(F::kMSize, d.m);
  put(F::kBlockBatch, d.block_batch);
  put(F::kShapeBatch, d.shape_batch);
  const std::array<uint32_t, kCubeTilingWords> words = CubeTilingWords(d.mm);
  const size_t first = static_cast<size_t>(F::kMatmulTilingUsedCoreNum);
  for (int i = 0; i < kCubeTilingWords; ++i) put(static_cast<F>(first + i), words[i]);
  return data;
}

}  // namespace

bool CustomDeprecatedStrategy::IsCapable(const WqFacts& f, const ChipSpec& /*chip*/,
                                         std::string* reason) const {
  auto no = [reason](std::string text) {
    if (reason != nullptr) *reason = std::move(text);
    return false;
  };
  if (!f.weight_nz || (f.x != DataType::kFloat16 && f.x != DataType::kBFloat16) ||
      f.weight != DataType::kInt8 || f.c0 != kSupportedC0) {
    return no(absl::StrCat("an int8 NZ weight with C0 ", kSupportedC0, " only (here ",
                           std::string(DataTypeName(f.weight)), f.weight_nz ? " NZ, C0 " : " ND",
                           f.weight_nz ? absl::StrCat(f.c0) : std::string(), ")"));
  }
  if (f.trans_a) return no("x cannot be transposed");
  if (f.k > kMaxShapeDim || f.n > kMaxShapeDim) return no("n and k must be below 65536");
  if (f.antiquant != QuantType::kPerChannel && f.antiquant != QuantType::kPerGroup) {
    return no(absl::StrCat("per-channel or per-group only; the scale is ",
                           std::string(QuantTypeName(f.antiquant))));
  }
  if (f.antiquant == QuantType::kPerGroup) {
    if (f.group_size != 64 && f.group_size != 128) {
      return no(absl::StrCat("per-group needs group 64 or 128, not ", f.group_size));
    }
    if (f.k % f.group_size != 0) return no("per-group needs k a multiple of the group");
    if (f.k % 64 != 0 || f.n % 64 != 0) return no("per-group needs k and n multiples of 64");
    if (f.trans_b) return no("per-group takes no transposed weight");
  }
  if (reason != nullptr) {
    *reason = absl::StrCat(std::string(QuantTypeName(f.antiquant)), " int8 NZ weight, C0 32");
  }
  return true;
}

absl::StatusOr<WqPlan> CustomDeprecatedStrategy::DoTiling(const WqFacts& f,
                                                          const ChipSpec& chip) const {
  CustomData d;
  // SetShapeSize.
  d.group_size = f.group_size;
  const uint64_t weight_align = 32;  // elements of a 32-byte int8 block
  if (f.trans_b) {
    d.k_align = OpsCeilAlign(f.k, weight_align);
    d.n_align = f.weight_nz ? OpsCeilAlign(f.n, kBlockCube) : f.n;
    d.k_pad = static_cast<uint8_t>(d.k_align - f.k);
  } else {
    d.k_align = f.weight_nz ? OpsCeilAlign(f.k, kBlockCube) : f.k;
    d.n_align = OpsCeilAlign(f.n, weight_align);
    d.n_pad = static_cast<uint8_t>(d.n_align - f.n);
  }
  d.m = f.m;
  d.n = f.n;
  d.k = f.k;
  d.shape_batch = 1;

  // GetMatMulTiling: the high-level API's search, x's dtype for A and B.
  CubeTilingSearchInput in;
  in.a_dtype = f.x;
  in.b_dtype = f.x;
  in.c_dtype = f.y;
  if (f.has_bias) in.bias_dtype = f.bias;
  in.b_format = f.weight_nz ? Format::kFractalNz : Format::kNd;
  in.trans_a = f.trans_a;
  in.trans_b = f.trans_b;
  in.m = static_cast<int64_t>(f.m);
  in.n = static_cast<int64_t>(f.n);
  in.k = static_cast<int64_t>(f.k);
  in.keep_default_ub = true;  // SetBufferSpace(l1Size, l0cSize)
  absl::StatusOr<CubeTiling> searched = SearchCubeTiling(in, chip);
  if (!searched.ok()) {
    if (IsCannFault(searched.status())) return searched.status();
    return absl::FailedPreconditionError(
        absl::StrCat("asc-devkit's matmul tiling fails (", searched.status().message(), ")"));
  }
  d.mm = *searched;
  uint64_t kb = !f.trans_b ? d.k_align : OpsCeilAlign(f.k, uint64_t{256});
  if (kb >= kMaxShapeDim) kb = f.k;
  d.mm.kb = static_cast<int32_t>(kb);
  const uint64_t m_dim =
      OpsCeilDiv(f.m, static_cast<uint64_t>(static_cast<int64_t>(d.mm.single_core_m)));
  const uint64_t n_dim =
      OpsCeilDiv(f.n, static_cast<uint64_t>(static_cast<int64_t>(d.mm.single_core_n)));
  if (m_dim * n_dim != static_cast<uint64_t>(static_cast<int64_t>(d.mm.used_core_num))) {
    return absl::FailedPreconditionError(absl::StrCat("mDim ", m_dim, " * nDim ", n_dim,
                                                      " != usedCoreNum ", d.mm.used_core_num,
                                                      " (CANN's GetMatMulTiling fails)"));
  }
  d.cube_block_dim_n = static_cast<uint8_t>(n_dim);
  d.cube_block_dim_m = static_cast<uint8_t>(m_dim);
  AdjustForNz(f, chip, d);
  const uint64_t single_n = OpsCeilDiv(f.n, static_cast<uint64_t>(d.cube_block_dim_n));
  d.mm.single_core_n = d.mm.base_n;
  const uint64_t cube_base_n = static_cast<uint64_t>(static_cast<int64_t>(d.mm.base_n));
  d.cube_block_dim_n = static_cast<uint8_t>(OpsCeilDiv(f.n, OpsCeilAlign(single_n, cube_base_n)));

  // The vector cores' slice of the weight (K x N per pass).
  uint64_t vec_n = 0, vec_k = 0;
  if (f.group_size > 0) {
    // ComputeGroupDefaultBlock, NZ: fixed slices.
    vec_k = 256;
    if (!f.trans_b && d.n > 32767) vec_k = f.group_size;
    vec_n = (f.x == DataType::kBFloat16 && f.trans_b) ? 32 : 64;
  } else {
    // ComputeDefaultBlock, then the int8 NZ slices.
    if (f.trans_b) {
      vec_n = 32;
      vec_k = 512;
    } else {
      vec_n = std::min<uint64_t>(
          512, OpsCeilAlign(cube_base_n * d.cube_block_dim_n, 32 / kSizeofDtypeEnum));
      vec_k = 32;
    }
    if (f.x == DataType::kBFloat16) {
      vec_n = f.trans_b ? 64 : 32;
      vec_k = f.trans_b ? 256 : 544;
    } else {
      vec_n = f.trans_b ? 64 : 32;
      vec_k = f.trans_b ? 384 : 864;
    }
  }
  vec_n = std::min(vec_n, d.n_align);
  vec_k = std::min(vec_k, d.k_align);
  d.vec_single_n = static_cast<uint32_t>(vec_n);
  d.vec_single_k = static_cast<uint32_t>(vec_k);
  const uint64_t total_cube_n = std::min(cube_base_n * d.cube_block_dim_n, d.n_align);
  d.vec_single_n_loop = OpsCeilDiv(total_cube_n, vec_n);
  d.vec_single_n_tail_loop =
      OpsCeilDiv(TailSize<uint64_t>(f.n, cube_base_n * d.cube_block_dim_n), vec_n);
  d.vec_single_k_loop = OpsCeilDiv(f.k, vec_k);
  d.vec_block_dim_k = 1;
  const uint64_t tasks = d.vec_single_n_loop * d.vec_single_k_loop;
  const uint64_t per_core = OpsCeilDiv(tasks, static_cast<uint64_t>(chip.aiv_num));
  d.vec_block_dim_n = static_cast<uint8_t>(OpsCeilDiv(tasks, per_core));

  // DoLibApiTiling.
  const uint64_t cube_n = d.cube_block_dim_n;
  const uint64_t each_core_n = OpsCeilAlign(OpsCeilDiv(f.n, cube_n), cube_base_n);
  d.cube_single_n_loop = static_cast<uint32_t>(OpsCeilDiv(each_core_n, cube_base_n));
  d.cube_single_n_tail_loop =
      static_cast<uint32_t>(OpsCeilDiv(f.n - each_core_n * (cube_n - 1), cube_base_n));
  d.cube_tail_m =
      TailSize<uint32_t>(f.m, static_cast<uint32_t>(static_cast<int64_t>(d.mm.single_core_m)));
  d.cube_tail_n = TailSize<uint32_t>(f.n, static_cast<uint32_t>(static_cast<int64_t>(d.mm.base_n)));

  // GetWorkspaceSize: up to three N loops of the dequantized weight.
  const uint64_t cache_count = std::min<uint64_t>(3, d.cube_single_n_loop);
  uint64_t cache_n = static_cast<uint64_t>(static_cast<int64_t>(d.mm.single_core_n) *
                                           static_cast<int64_t>(d.cube_block_dim_n));
  if (!f.trans_b && f.weight_nz) cache_n = OpsCeilAlign(cache_n, uint64_t{kOneBlock});
  uint64_t cache_size = d.k_align * cache_n;
  if (f.trans_b) {
    cache_size = OpsCeilAlign(f.k, uint64_t{256}) *
                 static_cast<uint64_t>(static_cast<int64_t>(d.mm.single_core_n)) *
                 d.cube_block_dim_n;
  }
  const uint64_t cache_aligned = OpsCeilDiv(cache_size, uint64_t{256}) * 256;
  WqPlan plan;
  plan.workspace_bytes = cache_aligned * cache_count * GeBytes(f.x) + kWqSystemWorkspaceBytes;
  const uint32_t used_aic = static_cast<uint32_t>(d.cube_block_dim_m) * d.cube_block_dim_n;
  const uint32_t used_aiv = static_cast<uint32_t>(d.vec_block_dim_k) * d.vec_block_dim_n;
  plan.block_dim = std::max(used_aic, TschBlockDim(used_aiv, chip.aic_num, chip.aiv_num));
  plan.data = ToTilingData(d);
  WqKey& key = plan.key;
  key.sub_algorithm = kSubAlgoCustom;
  key.trans_a = f.trans_a;
  key.trans_b = f.trans_b;
  key.antiquant_type = static_cast<uint64_t>(f.antiquant);
  key.quant_type = static_cast<uint64_t>(f.quant);
  key.has_antiquant_offset = f.has_antiquant_offset;
  key.is_weight_nz = f.weight_nz;
  plan.detail = absl::StrCat(
      "asc-devkit's matmul tiling (no legacy cache library): ",
      static_cast<int>(d.cube_block_dim_m), " x ", static_cast<int>(d.cube_block_dim_n),
      " cube cores, base ", d.mm.base_m, " x ", d.mm.base_n, " x ", d.mm.base_k, "; vector slices ",
      vec_k, " x ", vec_n, " on ", static_cast<int>(d.vec_block_dim_n), " AIVs");
  return plan;
}

}  // namespace npu::tiling::weight_quant
