#include "server/tiling/grouped/quant/gqmm_strategy.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "server/tiling/grouped/gmm_path.h"
#include "server/tiling/grouped/quant/gqmm_parse.h"
#include "server/tiling/grouped/quant/gqmm_tiling.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling::grouped {
namespace {

using quant::GeType;
using quant::GqmmBlock;
using quant::GqmmFacts;
using quant::GqmmKernelType;
using quant::GqmmKey;
using quant::GqmmPlatform;

quant::GqmmTensor TensorOf(const GroupedTensorList& list) {
  return {list.instances, quant::GeTypeOf(list.dtype), list.format == Format::kFractalNz};
}

// The scale dtype CANN's parse reads (a missing scale, or an INT32 y,
// leaves its default UINT64) and whether x is one the basic API takes:
// GroupedQmmBasicApiTiling::IsCapable on the raw inputs. Where the parse
// would fail, it fails in whichever strategy runs, so this needs no parse.
bool MxBasicApiCapable(const GroupedInputs& g) {
  const GroupedTensorList& y = g[GroupedTensor::kY];
  const GroupedTensorList& scale = g[GroupedTensor::kScale];
  const bool e8m0 = scale.present() && y.present() && y.dtype != DataType::kInt32 &&
                    scale.dtype == DataType::kFloat8E8M0;
  const DataType x = g[GroupedTensor::kX].dtype;
  return e8m0 && (x == DataType::kFloat8E4M3 || x == DataType::kFloat8E5M2 ||
                  x == DataType::kFloat4E2M1 || x == DataType::kFloat4E1M2);
}

GqmmPlatform PlatformOf(const ChipSpec& chip) {
  return {chip.aic_num, chip.l1_bytes, chip.l0c_bytes};
}

absl::StatusOr<GqmmFacts> Parse(const MatmulProblem& problem, const ChipSpec& chip) {
  // CheckCoreNum reads the compile info's core counts: the chip's.
  return quant::ParseGroupedQuant(quant::GqmmRequestOf(problem.grouped), chip.aic_num,
                                  chip.aiv_num);
}

// GMMQuantParams, the head of both structs.
template <typename Field>
void WriteParams(const GqmmFacts& f, TilingData& data) {
  const TilingStructWriter<Field> put(data);
  put(Field::kGroupNum, static_cast<uint32_t>(f.group_num));
  // activeType is a uint32 member set from CANN's int8 act_type.
  put(Field::kActiveType, static_cast<uint32_t>(static_cast<int32_t>(f.act_type)));
  put(Field::kAQuantMode, f.a_mode);
  put(Field::kBQuantMode, f.b_mode);
  put(Field::kSingleX, f.single_x ? 1 : 0);
  put(Field::kSingleW, f.single_w ? 1 : 0);
  put(Field::kSingleY, f.single_y ? 1 : 0);
  put(Field::kGroupType, static_cast<uint8_t>(f.group_type));
  put(Field::kGroupListType, static_cast<uint8_t>(f.group_list_type));
  put(Field::kHasBias, f.has_bias ? 1 : 0);
}

// The block sizes the plan states.
BlockTiling BlockOf(const GqmmBlock& b) {
  BlockTiling block;
  block.base_m = b.base_m;
  block.base_n = b.base_n;
  block.base_k = b.base_k;
  block.step_m = b.step_m;
  block.step_n = b.step_n;
  block.step_ka = b.step_ka;
  block.step_kb = b.step_kb;
  block.depth_a1 = b.depth_a1;
  block.depth_b1 = b.depth_b1;
  block.m_l1 = b.base_m * b.step_m;
  block.n_l1 = b.base_n * b.step_n;
  block.k_l1 = b.base_k * b.step_ka;
  block.single_core_m = b.single_core_m;
  block.single_core_n = b.single_core_n;
  block.single_core_k = b.single_core_k;
  block.l0c_db = b.db_l0c;
  return block;
}

// The plan around a struct: key, block dim (the platform's cube cores),
// workspace and the kernel type the key selects.
absl::StatusOr<TilingPlan> PlanOf(std::string_view strategy, const GqmmFacts& f,
                                  const GqmmBlock& b, TilingData data, const ProblemFacts& facts,
                                  const ChipSpec& chip) {
  TilingPlan plan;
  plan.strategy = std::string(strategy);
  ASSIGN_OR_RETURN(plan.key, TilingKey::Decode(GqmmKey{f.trans_b, f.trans_a, f.kernel_type}.Encode(),
                                               KeyLayout::kGroupedQuant));
  plan.block_dim = chip.aic_num;
  plan.workspace_bytes = quant::kGqmmWorkspaceBytes;
  plan.kernel_type = KernelRowOf(data.kernel).kernel_type(plan.key);
  plan.quant_mode = quant::QuantModeName(f.b_mode);
  plan.block = BlockOf(b);
  plan.data = std::move(data);
  plan.detail = Describe(
      facts, "x ", quant::GeTypeName(f.a), " (", quant::QuantModeName(f.a_mode), "), weight ",
      quant::GeTypeName(f.b), " (", quant::QuantModeName(f.b_mode), "), y ",
      quant::GeTypeName(f.c), ", ", f.group_num, " groups, group_type ",
      static_cast<int>(f.group_type), "; kernel ", quant::KernelTypeName(f.kernel_type),
      "; base ", b.base_m, "x", b.base_n, "x", b.base_k, ", depth A1 ", b.depth_a1, " B1 ",
      b.depth_b1, ", step Ka ", b.step_ka, " Kb ", b.step_kb, ", L0C double-buffered ",
      b.db_l0c == 2 ? "yes" : "no");
  if (f.mx()) {
    plan.detail = Describe(facts, std::move(plan.detail), "; MX scale factors A ",
                           b.scale_factor_a, " B ", b.scale_factor_b);
  }
  return plan;
}

}  // namespace

Capability GroupedQuantBasicApiStrategy::IsCapable(const MatmulProblem& problem,
                                                   const ProblemFacts& facts,
                                                   const ChipSpec& /*chip*/) const {
  if (!OnPath(problem, GmmPath::kQuant)) {
    return Capability::No(Explain(facts, "not GroupedMatmul's quant path (int8, hifloat8, fp8 "
                                         "or fp4 x and weight)"));
  }
  if (!MxBasicApiCapable(problem.grouped)) {
    return Capability::No(Explain(facts, "not MX: the basic API takes E8M0 scales with "
                                         "float8_e4m3fn, float8_e5m2 or float4 x"));
  }
  return Capability::Yes(Explain(facts, "MX: E8M0 scales, x ",
                                 DataTypeName(problem.grouped[GroupedTensor::kX].dtype)));
}

absl::StatusOr<TilingPlan> GroupedQuantBasicApiStrategy::DoTiling(const MatmulProblem& problem,
                                                                  const ProblemFacts& facts,
                                                                  const ChipSpec& chip) const {
  ASSIGN_OR_RETURN(const GqmmFacts f, Parse(problem, chip));
  ASSIGN_OR_RETURN(const GqmmBlock b, quant::MxBasicApiTiling(f, PlatformOf(chip)));
  using Field = GmmQuantBasicApiField;
  TilingData data = NewTilingData<Field>();
  WriteParams<Field>(f, data);
  const TilingStructWriter<Field> put(data);
  put(Field::kM, static_cast<uint32_t>(f.m));
  put(Field::kN, static_cast<uint32_t>(f.n));
  put(Field::kK, static_cast<uint32_t>(f.k));
  put(Field::kBaseM, static_cast<uint32_t>(b.base_m));
  put(Field::kBaseN, static_cast<uint32_t>(b.base_n));
  put(Field::kBaseK, static_cast<uint32_t>(b.base_k));
  put(Field::kKAL1, static_cast<uint32_t>(b.step_ka * b.base_k));
  put(Field::kKBL1, static_cast<uint32_t>(b.step_kb * b.base_k));
  if (f.mx()) {
    const uint32_t scale_k = static_cast<uint32_t>(quant::MxScaleKL1(f, b));
    put(Field::kScaleKAL1, scale_k);
    put(Field::kScaleKBL1, scale_k);
  }
  put(Field::kIsBias, f.has_bias ? 1 : 0);
  put(Field::kDbL0C, static_cast<uint8_t>(b.db_l0c));
  return PlanOf(name(), f, b, std::move(data), facts, chip);
}

Capability GroupedQuantStrategy::IsCapable(const MatmulProblem& problem,
                                           const ProblemFacts& facts,
                                           const ChipSpec& /*chip*/) const {
  if (!OnPath(problem, GmmPath::kQuant)) {
    return Capability::No(Explain(facts, "not GroupedMatmul's quant path (int8, hifloat8, fp8 "
                                         "or fp4 x and weight)"));
  }
  return Capability::Yes(Explain(facts, "quant path: x ",
                                 DataTypeName(problem.grouped[GroupedTensor::kX].dtype),
                                 ", weight ",
                                 DataTypeName(problem.grouped[GroupedTensor::kWeight].dtype)));
}

absl::StatusOr<TilingPlan> GroupedQuantStrategy::DoTiling(const MatmulProblem& problem,
                                                          const ProblemFacts& facts,
                                                          const ChipSpec& chip) const {
  ASSIGN_OR_RETURN(const GqmmFacts f, Parse(problem, chip));
  ASSIGN_OR_RETURN(const GqmmBlock b, quant::GeneralTiling(f, PlatformOf(chip)));
  using Field = GmmQuantField;
  TilingData data = NewTilingData<Field>();
  WriteParams<Field>(f, data);
  const TilingStructWriter<Field> put(data);
  // GMMArray: split M leaves m to the group list (-1) and states k and n,
  // per weight tensor for a weight-NZ list; split K leaves k to it.
  constexpr uint64_t kFromGroupList = 0xFFFFFFFF;  // int32 -1
  constexpr size_t kM = 0, kK = 1, kN = 2;
  if (f.group_type == quant::kGroupSplitM) {
    put(GmmQuantArray(kM, 0), kFromGroupList);
    if (f.nz_weight_list) {
      for (size_t i = 0; i < f.weight_n.size(); ++i) {
        put(GmmQuantArray(kK, i), static_cast<uint32_t>(f.k));
        put(GmmQuantArray(kN, i), static_cast<uint32_t>(f.weight_n[i]));
      }
    } else {
      put(GmmQuantArray(kK, 0), static_cast<uint32_t>(f.k));
      put(GmmQuantArray(kN, 0), static_cast<uint32_t>(f.n));
    }
  } else {
    put(GmmQuantArray(kM, 0), static_cast<uint32_t>(f.m));
    put(GmmQuantArray(kK, 0), kFromGroupList);
    put(GmmQuantArray(kN, 0), static_cast<uint32_t>(f.n));
  }
  auto cube = [&](TCubeField field, uint64_t value) {
    put(GmmQuantCube(field), static_cast<uint32_t>(value));
  };
  cube(TCubeField::kUsedCoreNum, chip.aic_num);
  cube(TCubeField::kM, f.m);
  cube(TCubeField::kN, f.n);
  cube(TCubeField::kKa, f.k);
  cube(TCubeField::kKb, f.k);
  cube(TCubeField::kSingleCoreM, b.single_core_m);
  cube(TCubeField::kSingleCoreN, b.single_core_n);
  cube(TCubeField::kSingleCoreK, b.single_core_k);
  cube(TCubeField::kBaseM, b.base_m);
  cube(TCubeField::kBaseN, b.base_n);
  cube(TCubeField::kBaseK, b.base_k);
  cube(TCubeField::kDepthA1, b.depth_a1);
  cube(TCubeField::kDepthB1, b.depth_b1);
  cube(TCubeField::kStepM, b.step_m);
  cube(TCubeField::kStepN, b.step_n);
  cube(TCubeField::kStepKa, b.step_ka);
  cube(TCubeField::kStepKb, b.step_kb);
  cube(TCubeField::kIsBias, f.has_bias ? 1 : 0);
  cube(TCubeField::kIterateOrder, b.iterate_order);
  cube(TCubeField::kDbL0a, 2);  // L0A and L0B always double-buffered
  cube(TCubeField::kDbL0b, 2);
  cube(TCubeField::kDbL0c, b.db_l0c);
  if (f.mx()) cube(TCubeField::kMxTypePara, quant::MxTypePara(b));
  return PlanOf(name(), f, b, std::move(data), facts, chip);
}

namespace quant {

GeType GeTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return GeType::kFloat16;
    case DataType::kBFloat16:
      return GeType::kBFloat16;
    case DataType::kFloat32:
      return GeType::kFloat;
    case DataType::kInt8:
      return GeType::kInt8;
    case DataType::kInt4:
      return GeType::kInt4;
    case DataType::kFloat8E4M3:
      return GeType::kFloat8E4M3;
    case DataType::kFloat8E5M2:
      return GeType::kFloat8E5M2;
    case DataType::kHiFloat8:
      return GeType::kHiFloat8;
    case DataType::kFloat4E2M1:
      return GeType::kFloat4E2M1;
    case DataType::kFloat8E8M0:
      return GeType::kFloat8E8M0;
    case DataType::kInt32:
      return GeType::kInt32;
    case DataType::kInt64:
      return GeType::kInt64;
    case DataType::kUint64:
      return GeType::kUint64;
    case DataType::kFloat4E1M2:
      return GeType::kFloat4E1M2;
  }
  return GeType::kFloat;
}

GqmmRequest GqmmRequestOf(const GroupedInputs& g) {
  GqmmRequest r;
  r.x = TensorOf(g[GroupedTensor::kX]);
  r.weight = TensorOf(g[GroupedTensor::kWeight]);
  r.bias = TensorOf(g[GroupedTensor::kBias]);
  r.scale = TensorOf(g[GroupedTensor::kScale]);
  r.offset = TensorOf(g[GroupedTensor::kOffset]);
  r.group_list = TensorOf(g[GroupedTensor::kGroupList]);
  r.per_token_scale = TensorOf(g[GroupedTensor::kPerTokenScale]);
  r.y = TensorOf(g[GroupedTensor::kY]);
  r.split_item = g.split_item;
  r.transpose_weight = g.transpose_weight;
  r.transpose_x = g.transpose_x;
  r.group_type = g.group_type;
  r.group_list_type = g.group_list_type;
  r.act_type = g.act_type;
  return r;
}

}  // namespace quant
}  // namespace npu::tiling::grouped
