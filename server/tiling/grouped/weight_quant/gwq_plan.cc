#include "server/tiling/grouped/weight_quant/gwq_plan.h"

#include <array>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling::grouped::weight_quant {
namespace {

constexpr uint32_t kStepK = 4;
constexpr uint32_t kStepKGroup192 = 3;  // A8W4, group size 192: 384 of K per UB load
constexpr uint32_t kDepth = 8;
constexpr uint32_t kDoubleBuffer = 2;
constexpr uint32_t kA8W4BaseKFactor = 2;  // the cube multiplies int8: twice the K per step
constexpr uint32_t kA8W4GroupSize192 = 192;
// mxTypePara: the MX scale factors of K (1 << 24, 1 << 16) and the minimal
// ones of the blocks (1 << 8, 1).
constexpr int32_t kMxTypePara = (1 << 24) + (1 << 16) + (1 << 8) + 1;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr uint64_t kUint8Max = std::numeric_limits<uint8_t>::max();

// SetMatMulTiling: the fixed block, with its A8W4, MX-A8W4 and bias forms.
CubeTiling MatMulTiling(const GwqFacts& f) {
  CubeTiling t;
  t.base_m = kGwqBaseM;
  t.single_core_m = kGwqBaseM;
  t.is_bias = f.has_bias ? 1 : 0;
  t.m = static_cast<int32_t>(f.m);
  t.n = static_cast<int32_t>(f.n);
  t.ka = static_cast<int32_t>(f.k);
  t.kb = static_cast<int32_t>(f.k);
  t.single_core_n = kGwqBaseN;
  t.single_core_k = static_cast<int32_t>(f.k);
  t.db_l0a = kDoubleBuffer;
  t.db_l0b = kDoubleBuffer;
  t.db_l0c = 1;
  t.share_l0c_size = static_cast<int32_t>(kGwqBaseM * kGwqBaseN * sizeof(float));
  t.base_n = kGwqBaseN;
  t.base_k = kGwqBaseK;
  t.step_ka = kStepK;
  t.step_kb = kStepK;
  t.depth_a1 = kDepth;
  t.depth_b1 = kDepth;
  t.step_m = 1;
  t.step_n = 1;
  t.used_core_num = static_cast<int32_t>(f.aic_num);
  if (f.A8W4()) {
    t.base_k = kGwqBaseK * kA8W4BaseKFactor;
    // A8W4 adds the bias in UB, so the cube's matmul has none.
    t.is_bias = 0;
    if (f.group_size == kA8W4GroupSize192) {
      t.step_ka = kStepKGroup192;
      t.step_kb = kStepKGroup192;
    }
  } else if (f.MxA8W4Kernel()) {
    t.mx_type_para = kMxTypePara;
  } else if (f.has_bias) {
    t.base_m = kGwqBaseMWithBias;
    t.single_core_m = kGwqBaseMWithBias;
  }
  return t;
}

// SetTilingKey.
GwqKey KeyOf(const GwqFacts& f) {
  GwqKey key;
  key.w_type = f.weight_nz ? 1 : 0;
  key.offset_or_bias = f.has_antiquant_offset ? 2 : 0;
  key.c_quant_type = static_cast<uint64_t>(GwqQuantType::kNone);
  GwqQuantType antiquant = GwqQuantType::kPerChannel;
  if (f.antiquant_scale == DataType::kFloat8E8M0) {
    antiquant = GwqQuantType::kMx;
  } else if (f.A16W4NdPerGroup()) {
    antiquant = GwqQuantType::kPerGroup;
  }
  key.w_quant_type = static_cast<uint64_t>(antiquant);
  key.b_trans = f.trans_b ? 1 : 0;
  key.a_trans = f.trans_a ? 1 : 0;
  GwqMte2Config config =
      f.A16W4NdPerGroup() ? GwqMte2Config::kInner256Buf2 : GwqMte2Config::kInner256Buf4;
  if (f.A8W4()) {
    config = f.group_size == kA8W4GroupSize192 ? GwqMte2Config::kInner384Buf3
                                               : GwqMte2Config::kInner512Default;
  } else if (f.MxA8W4Kernel()) {
    config = GwqMte2Config::kInnerDynamicBuf4;
    key.single_multi_single = f.single_multi_single ? 1 : 0;
  }
  key.template_custom = GwqMte2ConfigIndex(config);
  key.algorithm_sub_category = GwqTailResplitEnabled(f) ? kGwqSubTailResplit : kGwqSubBasicBlock;
  key.algorithm_category = 0;  // VECTOR_ANTIQUANT
  return key;
}

// The words CANN narrows without a check, which the engine refuses to
// answer wrapped.
absl::Status CheckNarrowedWords(const GwqFacts& f, const GwqResplit& r) {
  if (r.cube_blocks_n > kUint8Max) {
    return absl::InvalidArgumentError(
        absl::StrCat("cubeNumBlocksN=", r.cube_blocks_n, " (N=", f.n, " over aic_num=", f.aic_num,
                     ") exceeds 255, the limit of its uint8 word, which CANN's plan wraps"));
  }
  // m covers every group's m (the largest, a wrapped product read as
  // unsigned), n the unpacked N of the weights.
  if (f.m > static_cast<uint64_t>(kInt32Max) || f.n > static_cast<uint64_t>(kInt32Max)) {
    return absl::InvalidArgumentError(
        absl::StrCat("m=", f.m, ", n=", f.n,
                     ": above 2147483647, the limit of the int32 M / N of TCubeTiling "
                     "and gmmArray, which CANN's plan wraps"));
  }
  if (f.n_ori > static_cast<uint64_t>(kInt32Max)) {
    return absl::InvalidArgumentError(
        absl::StrCat("n=", f.n_ori,
                     " of y exceeds 2147483647, the limit of gmmArray's int32 nList, which "
                     "CANN's plan wraps"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view GwqQuantTypeName(GwqQuantType type) {
  switch (type) {
    case GwqQuantType::kNone:
      return "NONE";
    case GwqQuantType::kPerTensor:
      return "PER_TENSOR";
    case GwqQuantType::kPerChannel:
      return "PER_CHANNEL";
    case GwqQuantType::kPerGroup:
      return "PER_GROUP";
    case GwqQuantType::kMx:
      return "MX";
  }
  return "?";
}

std::string_view GwqMte2ConfigName(GwqMte2Config config) {
  switch (config) {
    case GwqMte2Config::kInner512Buf2:
      return "MTE2_INNER_SIZE_512_BUF_NUM_2";
    case GwqMte2Config::kInner512Buf4:
      return "MTE2_INNER_SIZE_512_BUF_NUM_4";
    case GwqMte2Config::kInner1024Buf2:
      return "MTE2_INNER_SIZE_1024_BUF_NUM_2";
    case GwqMte2Config::kInner256Buf4:
      return "MTE2_INNER_SIZE_256_BUF_NUM_4";
    case GwqMte2Config::kInner512Default:
      return "MTE2_INNER_SIZE_512_BUF_NUM_DEFAULT";
    case GwqMte2Config::kInner384Buf3:
      return "MTE2_INNER_SIZE_384_BUF_NUM_3";
    case GwqMte2Config::kInner256Buf2:
      return "MTE2_INNER_SIZE_256_BUF_NUM_2";
    case GwqMte2Config::kInnerDynamicBuf4:
      return "MTE2_INNER_SIZE_DYNAMIC_BUF_NUM_4";
  }
  return "?";
}

uint64_t GwqMte2ConfigIndex(GwqMte2Config config) {
  // The declared list is 0-6 then 15.
  return config == GwqMte2Config::kInnerDynamicBuf4 ? 7 : static_cast<uint64_t>(config);
}

absl::StatusOr<GwqPlan> GwqBuildPlan(const GwqFacts& f) {
  absl::StatusOr<GwqResplit> resplit = GwqCalcResplit(f);
  if (!resplit.ok()) return resplit.status();
  if (absl::Status s = CheckNarrowedWords(f, *resplit); !s.ok()) return s;
  GwqPlan plan;
  plan.resplit = *std::move(resplit);
  const GwqResplit& r = plan.resplit;
  using F = GmmWeightQuantField;
  plan.data = NewTilingData<F>();
  const TilingStructWriter<F> put(plan.data);
  put(F::kGroupNum, f.group_num);
  put(F::kCoreNum, f.aic_num);
  put(F::kKSize, f.k);
  put(F::kNSize, f.n_ori);
  put(F::kSingleX, f.single_x ? 1 : 0);
  put(F::kSingleWeight, f.single_weight ? 1 : 0);
  put(F::kSingleY, f.single_y ? 1 : 0);
  // Signed members as their two's complement in the member's width.
  put(F::kGroupType, static_cast<uint8_t>(static_cast<int8_t>(f.group_type)));
  put(F::kGroupListType, static_cast<uint8_t>(f.group_list_type));
  put(F::kHasBias, f.has_bias ? 1 : 0);
  put(F::kCubeNumBlocksN, static_cast<uint8_t>(r.cube_blocks_n));
  put(F::kGroupSize, f.group_size);
  put(F::kMainBlockSize, r.main_block_size);
  put(F::kMainBlockCount, r.main_block_count * f.aic_num);
  put(F::kFirstTailBlockSize, r.first_size);
  put(F::kSecondTailBlockSize, r.second_size);
  put(F::kFirstTailBlockCount, r.first_count);
  put(F::kSecondTailBlockCount, r.second_count);
  for (size_t i = 0; i < kGmmArrayEntries; ++i) {
    put(GmmWeightQuantArray(0, i), static_cast<uint32_t>(f.m_list[i]));
    put(GmmWeightQuantArray(1, i), static_cast<uint32_t>(f.k_list[i]));
    put(GmmWeightQuantArray(2, i), static_cast<uint32_t>(f.n_list[i]));
  }
  plan.mm = MatMulTiling(f);
  const std::array<uint32_t, kCubeTilingWords> mm = CubeTilingWords(plan.mm);
  for (size_t i = 0; i < kTCubeFieldCount; ++i) {
    put(GmmWeightQuantCube(static_cast<TCubeField>(i)), mm[i]);
  }
  plan.key = KeyOf(f);
  plan.block_dim = f.aic_num;
  plan.workspace_bytes = kGwqWorkspaceBytes;
  return plan;
}

}  // namespace npu::tiling::grouped::weight_quant
