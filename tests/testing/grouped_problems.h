// GroupedMatmul test builders: a problem in one of CANN's forms (split M
// s-s-s, split K s-s-s, no split m-m-m) with its tensor lists, and plans
// built by hand for each kernel family, their struct words written as CANN's
// tilings write them (group count and type, the forms, the base block, the
// core counts). The hand-built plans let the schedule and the emulator be
// tested on every kernel whatever strategies are registered.
#ifndef NPU_TESTS_TESTING_GROUPED_PROBLEMS_H_
#define NPU_TESTS_TESTING_GROUPED_PROBLEMS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/kernel_table.h"
#include "server/tiling/schedule.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/types.h"

namespace npu::testing {

struct GroupedSpec {
  tiling::DataType x = tiling::DataType::kFloat16;
  tiling::DataType w = tiling::DataType::kFloat16;
  tiling::DataType y = tiling::DataType::kFloat16;
  int64_t group_type = tiling::kGroupTypeSplitM;
  int64_t groups = 4;
  // Split M: x [m, k], weight [groups, k, n] (or [groups, n, k]), y [m, n].
  // Split K: x [k, m] (transpose_x), weight [k, n], y [groups, m, n].
  // No split: per group x [rows[g], k], weight [k, n], y [rows[g], n].
  int64_t m = 256, n = 128, k = 64;
  bool trans_w = false;
  bool weight_nz = false;
  bool bias = false;
  tiling::DataType bias_dtype = tiling::DataType::kFloat16;
  std::vector<int64_t> histogram;  // empty: spread evenly
  std::vector<int64_t> rows;       // no split: each group's rows
};

inline tiling::GroupedShape Shape(std::vector<int64_t> dims) { return {dims, dims}; }

// `total` tokens routed over `groups` experts by a Zipf law of `exponent`
// (expert of rank r drawn with weight r^-exponent, the ranks a seeded
// permutation of the experts), each token drawn on its own: an uneven,
// reproducible histogram summing to `total`.
inline std::vector<int64_t> SkewedHistogram(int64_t total, int64_t groups, double exponent,
                                            uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<int64_t> rank(static_cast<size_t>(groups));
  for (int64_t i = 0; i < groups; ++i) rank[i] = i;
  std::shuffle(rank.begin(), rank.end(), engine);
  std::vector<double> cdf(static_cast<size_t>(groups));
  double sum = 0;
  for (int64_t i = 0; i < groups; ++i) {
    sum += std::pow(static_cast<double>(rank[i] + 1), -exponent);
    cdf[i] = sum;
  }
  std::vector<int64_t> histogram(static_cast<size_t>(groups), 0);
  std::uniform_real_distribution<double> uniform(0.0, sum);
  for (int64_t t = 0; t < total; ++t) {
    const double u = uniform(engine);
    const size_t e = static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    ++histogram[std::min(e, histogram.size() - 1)];
  }
  return histogram;
}

inline tiling::MatmulProblem GroupedProblem(const GroupedSpec& s) {
  using tiling::GroupedTensor;
  tiling::MatmulProblem p;
  p.op = tiling::MatmulOp::kGroupedMatmul;
  tiling::GroupedInputs& g = p.grouped;
  g.transpose_weight = s.trans_w;
  g.group_type = s.group_type;
  g.group_list_type = tiling::kGroupListCounts;
  g[GroupedTensor::kX].dtype = s.x;
  g[GroupedTensor::kWeight].dtype = s.w;
  g[GroupedTensor::kWeight].format = s.weight_nz ? tiling::Format::kFractalNz : tiling::Format::kNd;
  g[GroupedTensor::kY].dtype = s.y;
  g[GroupedTensor::kBias].dtype = s.bias_dtype;
  g[GroupedTensor::kGroupList].dtype = tiling::DataType::kInt64;
  const int64_t e = s.groups;
  auto weight = [&](int64_t k, int64_t n) {
    return s.trans_w ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  };
  if (s.group_type == tiling::kGroupTypeNone) {
    g.split_item = 0;
    for (int64_t i = 0; i < e; ++i) {
      const int64_t rows = s.rows.empty() ? s.m : s.rows[i];
      g[GroupedTensor::kX].instances.push_back(Shape({rows, s.k}));
      g[GroupedTensor::kWeight].instances.push_back(Shape(weight(s.k, s.n)));
      g[GroupedTensor::kY].instances.push_back(Shape({rows, s.n}));
      if (s.bias) g[GroupedTensor::kBias].instances.push_back(Shape({s.n}));
    }
    return p;
  }
  g.split_item = 3;
  g.token_histogram = s.histogram;
  g[GroupedTensor::kGroupList].instances.push_back(Shape({e}));
  if (s.group_type == tiling::kGroupTypeSplitM) {
    g[GroupedTensor::kX].instances.push_back(Shape({s.m, s.k}));
    std::vector<int64_t> w = weight(s.k, s.n);
    w.insert(w.begin(), e);
    g[GroupedTensor::kWeight].instances.push_back(Shape(w));
    g[GroupedTensor::kY].instances.push_back(Shape({s.m, s.n}));
  } else {
    g.transpose_x = true;
    g[GroupedTensor::kX].instances.push_back(Shape({s.k, s.m}));
    g[GroupedTensor::kWeight].instances.push_back(Shape(weight(s.k, s.n)));
    g[GroupedTensor::kY].instances.push_back(Shape({e, s.m, s.n}));
  }
  if (s.bias) g[GroupedTensor::kBias].instances.push_back(Shape({e, s.n}));
  return p;
}

// The fields every grouped struct's head shares, from the problem's reading.
struct GroupedHead {
  uint64_t group_num = 0;
  uint64_t group_type = 0;  // two's complement in `bits`
  bool single_x = true, single_w = true, single_y = true, has_bias = false;
  uint64_t m = 0, n = 0, k = 0;  // the largest of the groups
};

inline GroupedHead HeadOf(const tiling::MatmulProblem& p, int type_bits) {
  const tiling::grouped::GmmGroups groups = *tiling::grouped::GroupsOf(p.grouped);
  GroupedHead h;
  h.group_num = groups.groups.size();
  h.group_type = static_cast<uint64_t>(groups.group_type) & ((uint64_t{1} << type_bits) - 1);
  h.single_x = groups.single_x;
  h.single_w = groups.single_w;
  h.single_y = groups.single_y;
  h.has_bias = groups.has_bias;
  for (const tiling::grouped::GmmGroup& g : groups.groups) {
    h.m = std::max(h.m, g.m);
    h.n = std::max(h.n, g.n);
    h.k = std::max(h.k, g.k);
  }
  if (groups.group_type == tiling::kGroupTypeSplitM) h.m = groups.split_total;
  if (groups.group_type == tiling::kGroupTypeSplitK) h.k = groups.split_total;
  return h;
}

inline uint64_t GroupedKeyBits(const tiling::MatmulProblem& p) {
  return uint64_t{p.grouped.transpose_weight} | uint64_t{p.grouped.transpose_x} << 2;
}

inline tiling::TilingPlan FinishPlan(tiling::TilingPlan plan, uint64_t key_bits,
                                     tiling::KeyLayout layout) {
  plan.key = *tiling::TilingKey::Decode(key_bits, layout);
  // The typed block the struct's words describe (what CheckPlanFits() reads).
  plan.block = tiling::KernelBlock(plan, tiling::MatmulProblem{});
  plan.block.m_l1 = plan.block.base_m;
  plan.block.n_l1 = plan.block.base_n;
  plan.kernel_type = tiling::KernelTypeOf(plan.data.kernel, plan.key);
  plan.strategy = "hand-built";
  return plan;
}

// The no-quant basic kernel's plan (GMMNoQuantTilingData).
inline tiling::TilingPlan NoQuantPlan(const tiling::MatmulProblem& p, uint32_t cores,
                                      uint64_t base_m = 128, uint64_t base_n = 256,
                                      uint64_t base_k = 64, uint64_t m_tail = 1,
                                      uint64_t n_tail = 1) {
  using tiling::GmmNoQuantCube;
  using tiling::GmmNoQuantField;
  using tiling::TCubeField;
  const GroupedHead h = HeadOf(p, 32);
  tiling::TilingPlan plan;
  plan.data = tiling::NewTilingData<GmmNoQuantField>();
  auto set = [&](GmmNoQuantField f, uint64_t v) { tiling::Set(plan.data, f, v); };
  set(GmmNoQuantField::kGroupNum, h.group_num);
  set(GmmNoQuantField::kCoreNum, cores);
  set(GmmNoQuantField::kSingleWeight, h.single_w);
  set(GmmNoQuantField::kSingleX, h.single_x);
  set(GmmNoQuantField::kSingleY, h.single_y);
  set(GmmNoQuantField::kGroupType, h.group_type);
  set(GmmNoQuantField::kGroupListType, static_cast<uint64_t>(p.grouped.group_list_type));
  set(GmmNoQuantField::kHasBias, h.has_bias);
  set(GmmNoQuantField::kMTailCnt, m_tail);
  set(GmmNoQuantField::kNTailCnt, n_tail);
  set(GmmNoQuantCube(TCubeField::kUsedCoreNum), cores);
  set(GmmNoQuantCube(TCubeField::kM), h.m);
  set(GmmNoQuantCube(TCubeField::kN), h.n);
  set(GmmNoQuantCube(TCubeField::kKa), h.k);
  set(GmmNoQuantCube(TCubeField::kKb), h.k);
  set(GmmNoQuantCube(TCubeField::kBaseM), base_m);
  set(GmmNoQuantCube(TCubeField::kBaseN), base_n);
  set(GmmNoQuantCube(TCubeField::kBaseK), base_k);
  set(GmmNoQuantCube(TCubeField::kStepKa), 4);
  set(GmmNoQuantCube(TCubeField::kStepKb), 4);
  set(GmmNoQuantCube(TCubeField::kDepthA1), 8);
  set(GmmNoQuantCube(TCubeField::kDepthB1), 8);
  set(GmmNoQuantCube(TCubeField::kDbL0c), 1);
  set(GmmNoQuantCube(TCubeField::kIsBias), h.has_bias);
  plan.block_dim = cores;
  plan.workspace_bytes = 32;
  return FinishPlan(std::move(plan), GroupedKeyBits(p), tiling::KeyLayout::kGroupedNoQuant);
}

// The general quant kernels' plan (GMMQuantTilingData): `kernel_type` 0
// (fixpipe dequant), 1 (vector dequant) or 2 (per-group / per-block), the
// quant modes as the struct's aQuantMode / bQuantMode words.
inline tiling::TilingPlan QuantPlan(const tiling::MatmulProblem& p, uint32_t cores,
                                    uint64_t kernel_type, uint64_t a_mode, uint64_t b_mode,
                                    uint64_t base_m = 128, uint64_t base_n = 256,
                                    uint64_t base_k = 128) {
  using tiling::GmmQuantCube;
  using tiling::GmmQuantField;
  using tiling::TCubeField;
  const GroupedHead h = HeadOf(p, 8);
  tiling::TilingPlan plan;
  plan.data = tiling::NewTilingData<GmmQuantField>();
  auto set = [&](GmmQuantField f, uint64_t v) { tiling::Set(plan.data, f, v); };
  set(GmmQuantField::kGroupNum, h.group_num);
  set(GmmQuantField::kAQuantMode, a_mode);
  set(GmmQuantField::kBQuantMode, b_mode);
  set(GmmQuantField::kSingleX, h.single_x);
  set(GmmQuantField::kSingleW, h.single_w);
  set(GmmQuantField::kSingleY, h.single_y);
  set(GmmQuantField::kGroupType, h.group_type);
  set(GmmQuantField::kGroupListType, static_cast<uint64_t>(p.grouped.group_list_type));
  set(GmmQuantField::kHasBias, h.has_bias);
  set(GmmQuantCube(TCubeField::kUsedCoreNum), cores);
  set(GmmQuantCube(TCubeField::kM), h.m);
  set(GmmQuantCube(TCubeField::kN), h.n);
  set(GmmQuantCube(TCubeField::kKa), h.k);
  set(GmmQuantCube(TCubeField::kKb), h.k);
  set(GmmQuantCube(TCubeField::kBaseM), base_m);
  set(GmmQuantCube(TCubeField::kBaseN), base_n);
  set(GmmQuantCube(TCubeField::kBaseK), base_k);
  set(GmmQuantCube(TCubeField::kStepKa), 2);
  set(GmmQuantCube(TCubeField::kStepKb), 2);
  set(GmmQuantCube(TCubeField::kDepthA1), 4);
  set(GmmQuantCube(TCubeField::kDepthB1), 4);
  set(GmmQuantCube(TCubeField::kDbL0c), 1);
  plan.block_dim = cores;
  plan.workspace_bytes = 16ull * 1024 * 1024;
  return FinishPlan(std::move(plan), GroupedKeyBits(p) | kernel_type << 4,
                    tiling::KeyLayout::kGroupedQuant);
}

// The MX basic-API kernel's plan (GMMQuantBasicApiTilingData).
inline tiling::TilingPlan MxPlan(const tiling::MatmulProblem& p, uint32_t cores,
                                 uint64_t base_m = 256, uint64_t base_n = 256,
                                 uint64_t base_k = 128) {
  using F = tiling::GmmQuantBasicApiField;
  const GroupedHead h = HeadOf(p, 8);
  tiling::TilingPlan plan;
  plan.data = tiling::NewTilingData<F>();
  auto set = [&](F f, uint64_t v) { tiling::Set(plan.data, f, v); };
  set(F::kGroupNum, h.group_num);
  set(F::kAQuantMode, 8);
  set(F::kBQuantMode, 8);
  set(F::kSingleX, h.single_x);
  set(F::kSingleW, h.single_w);
  set(F::kSingleY, h.single_y);
  set(F::kGroupType, h.group_type);
  set(F::kGroupListType, static_cast<uint64_t>(p.grouped.group_list_type));
  set(F::kHasBias, h.has_bias);
  set(F::kM, h.m);
  set(F::kN, h.n);
  set(F::kK, h.k);
  set(F::kBaseM, base_m);
  set(F::kBaseN, base_n);
  set(F::kBaseK, base_k);
  set(F::kKAL1, 2 * base_k);
  set(F::kKBL1, 2 * base_k);
  set(F::kScaleKAL1, 2 * base_k);
  set(F::kScaleKBL1, 2 * base_k);
  set(F::kIsBias, h.has_bias);
  set(F::kDbL0C, 1);
  plan.block_dim = cores;
  plan.workspace_bytes = 16ull * 1024 * 1024;
  return FinishPlan(std::move(plan), GroupedKeyBits(p), tiling::KeyLayout::kGroupedQuant);
}

// The weight-quant kernels' plan (GMMWeightQuantTilingData): the N tail
// re-split controller (`resplit`) or the basic-block one, with the weight's
// antiquant mode (2 per-channel, 3 per-group, 4 MX) and group size.
inline tiling::TilingPlan WeightQuantPlan(const tiling::MatmulProblem& p, uint32_t cores,
                                          bool resplit, uint64_t quant_type,
                                          uint64_t group_size = 0, uint64_t base_m = 64,
                                          uint64_t base_n = 128, uint64_t base_k = 128) {
  using tiling::GmmWeightQuantCube;
  using F = tiling::GmmWeightQuantField;
  using tiling::TCubeField;
  const GroupedHead h = HeadOf(p, 8);
  tiling::TilingPlan plan;
  plan.data = tiling::NewTilingData<F>();
  auto set = [&](F f, uint64_t v) { tiling::Set(plan.data, f, v); };
  set(F::kGroupNum, h.group_num);
  set(F::kCoreNum, cores);
  set(F::kKSize, h.k);
  set(F::kNSize, h.n);
  set(F::kSingleX, h.single_x);
  set(F::kSingleWeight, h.single_w);
  set(F::kSingleY, h.single_y);
  set(F::kGroupType, h.group_type);
  set(F::kGroupListType, static_cast<uint64_t>(p.grouped.group_list_type));
  set(F::kHasBias, h.has_bias);
  set(F::kCubeNumBlocksN, cores);
  set(F::kGroupSize, group_size);
  // The N blocks: main blocks of base_n, one tail block with the rest.
  set(F::kMainBlockSize, base_n);
  set(F::kMainBlockCount, h.n / base_n);
  set(F::kFirstTailBlockSize, h.n % base_n);
  set(F::kFirstTailBlockCount, h.n % base_n != 0 ? 1 : 0);
  set(GmmWeightQuantCube(TCubeField::kUsedCoreNum), cores);
  set(GmmWeightQuantCube(TCubeField::kM), h.m);
  set(GmmWeightQuantCube(TCubeField::kN), h.n);
  set(GmmWeightQuantCube(TCubeField::kKa), h.k);
  set(GmmWeightQuantCube(TCubeField::kKb), h.k);
  set(GmmWeightQuantCube(TCubeField::kBaseM), base_m);
  set(GmmWeightQuantCube(TCubeField::kBaseN), base_n);
  set(GmmWeightQuantCube(TCubeField::kBaseK), base_k);
  set(GmmWeightQuantCube(TCubeField::kStepKa), 1);
  set(GmmWeightQuantCube(TCubeField::kStepKb), 1);
  set(GmmWeightQuantCube(TCubeField::kDepthA1), 2);
  set(GmmWeightQuantCube(TCubeField::kDepthB1), 2);
  set(GmmWeightQuantCube(TCubeField::kDbL0c), 1);
  plan.block_dim = cores;
  plan.workspace_bytes = 16ull * 1024 * 1024;
  // w_type [3:0] ND, w_quant_type [15:12], trans_b [17:16]... as the key
  // layout's fields; ALGORITHM_SUB_CATEGORY in [28:25].
  const uint64_t sub_category = resplit ? 2 : 3;
  const uint64_t bits = quant_type << 12 | uint64_t{p.grouped.transpose_weight} << 16 |
                        sub_category << 25;
  return FinishPlan(std::move(plan), bits, tiling::KeyLayout::kGroupedWeightQuant);
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_GROUPED_PROBLEMS_H_
