// Weight-quant GroupedMatmul problems for the path's tests: one builder per
// family and form, as the unit tests of CANN's path build them (NZ weights
// in the path's (N1, K1, K0, N0) / (K1, N1, N0, K0) layouts).
#ifndef NPU_TESTS_TILING_GROUPED_WEIGHT_QUANT_GWQ_PROBLEMS_H_
#define NPU_TESTS_TILING_GROUPED_WEIGHT_QUANT_GWQ_PROBLEMS_H_

#include <cstdint>
#include <vector>

#include "server/tiling/types.h"

namespace npu::tiling::grouped::weight_quant::testing {

inline int64_t CeilDivI(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline constexpr GroupedTensor kX = GroupedTensor::kX;
inline constexpr GroupedTensor kWeight = GroupedTensor::kWeight;
inline constexpr GroupedTensor kBias = GroupedTensor::kBias;
inline constexpr GroupedTensor kAntiquantScale = GroupedTensor::kAntiquantScale;
inline constexpr GroupedTensor kAntiquantOffset = GroupedTensor::kAntiquantOffset;
inline constexpr GroupedTensor kGroupList = GroupedTensor::kGroupList;
inline constexpr GroupedTensor kPerTokenScale = GroupedTensor::kPerTokenScale;
inline constexpr GroupedTensor kY = GroupedTensor::kY;

// One instance whose origin is its storage.
inline void Add(GroupedTensorList& list, std::vector<int64_t> shape) {
  list.instances.push_back({shape, shape});
}
inline void Add(GroupedTensorList& list, std::vector<int64_t> origin,
                std::vector<int64_t> storage) {
  list.instances.push_back({std::move(origin), std::move(storage)});
}
// Instance i's origin and storage shape.
inline void SetShape(GroupedTensorList& list, size_t i, std::vector<int64_t> shape) {
  list.instances[i] = {shape, shape};
}

// Split M, one x [m, k], one weight of `e` experts, one y: A16W4 ND (an int4
// weight [E, K, N], [E, N, K] transposed) with a per-channel scale [E, N]
// (group_size 0) or a per-group one [E, K / group_size, N].
inline GroupedInputs SingleA16W4(int64_t e, int64_t m, int64_t k, int64_t n,
                                 int64_t group_size = 128, bool trans_w = false,
                                 DataType x = DataType::kFloat16) {
  GroupedInputs in;
  in.split_item = 3;
  in.group_type = kGroupSplitM;
  in.transpose_weight = trans_w;
  in[kX].dtype = x;
  Add(in[kX], {m, k});
  in[kWeight].dtype = DataType::kInt4;
  Add(in[kWeight], trans_w ? std::vector<int64_t>{e, n, k} : std::vector<int64_t>{e, k, n});
  in[kAntiquantScale].dtype = x;
  Add(in[kAntiquantScale],
      group_size > 0 ? std::vector<int64_t>{e, k / group_size, n} : std::vector<int64_t>{e, n});
  in[kGroupList].dtype = DataType::kInt64;
  Add(in[kGroupList], {e});
  in[kY].dtype = x;
  Add(in[kY], {m, n});
  return in;
}

// Split M, A8W4: int8 x [m, k], an int4 NZ weight (N1, K1, K0, N0) of `e`
// experts, uint64 scales [E, K / group_size, N].
inline GroupedInputs SingleA8W4(int64_t e, int64_t m, int64_t k, int64_t n,
                                int64_t group_size = 128) {
  GroupedInputs in;
  in.split_item = 3;
  in.group_type = kGroupSplitM;
  in[kX].dtype = DataType::kInt8;
  Add(in[kX], {m, k});
  in[kWeight].dtype = DataType::kInt4;
  in[kWeight].format = Format::kFractalNz;
  Add(in[kWeight], {e, k, n}, {e, CeilDivI(n, 16), CeilDivI(k, 32), 32, 16});
  in[kAntiquantScale].dtype = DataType::kUint64;
  Add(in[kAntiquantScale], {e, k / group_size, n});
  in[kGroupList].dtype = DataType::kInt64;
  Add(in[kGroupList], {e});
  in[kY].dtype = DataType::kBFloat16;
  Add(in[kY], {m, n});
  return in;
}

// MX-A8W4: float8_e4m3fn x [m, k] with x's MX scale [m, K / 64, 2], float4
// weights NZ transposed (K1, N1, N0, K0) with E8M0 scales. `per_expert`:
// single-multi-single (one weight [K1, N1, 16, 32] and scale [N, K / 64, 2]
// per expert); else one weight [E, K1, N1, 16, 32], scale [E, N, K / 64, 2].
inline GroupedInputs MxA8W4(int64_t e, int64_t m, int64_t k, int64_t n, bool per_expert) {
  GroupedInputs in;
  in.split_item = 3;
  in.group_type = kGroupSplitM;
  in.group_list_type = 1;
  in.transpose_weight = true;
  in[kX].dtype = DataType::kFloat8E4M3;
  Add(in[kX], {m, k});
  in[kWeight].dtype = DataType::kFloat4E2M1;
  in[kWeight].format = Format::kFractalNz;
  in[kAntiquantScale].dtype = DataType::kFloat8E8M0;
  const std::vector<int64_t> nz = {CeilDivI(k, 32), CeilDivI(n, 16), 16, 32};
  if (per_expert) {
    for (int64_t i = 0; i < e; ++i) {
      Add(in[kWeight], nz);
      Add(in[kAntiquantScale], {n, k / 64, 2});
    }
  } else {
    std::vector<int64_t> w = {e};
    w.insert(w.end(), nz.begin(), nz.end());
    Add(in[kWeight], w);
    Add(in[kAntiquantScale], {e, n, k / 64, 2});
  }
  in[kGroupList].dtype = DataType::kInt64;
  Add(in[kGroupList], {e});
  in[kPerTokenScale].dtype = DataType::kFloat8E8M0;
  Add(in[kPerTokenScale], {m, k / 64, 2});
  in[kY].dtype = DataType::kBFloat16;
  Add(in[kY], {m, n});
  return in;
}

// No split: a list of float16 x [m_i, k_i], int4 ND weights [k_i, n_i] and
// y, per-group scales [k_i / group_size, n_i] (per-channel [n_i] for 0).
inline GroupedInputs MultiA16W4(const std::vector<std::vector<int64_t>>& mkn, int64_t group_size) {
  GroupedInputs in;
  in.split_item = 0;
  in.group_type = kGroupNoSplit;
  in[kX].dtype = in[kAntiquantScale].dtype = in[kY].dtype = DataType::kFloat16;
  in[kWeight].dtype = DataType::kInt4;
  for (const std::vector<int64_t>& g : mkn) {
    Add(in[kX], {g[0], g[1]});
    Add(in[kWeight], {g[1], g[2]});
    Add(in[kY], {g[0], g[2]});
    Add(in[kAntiquantScale], group_size > 0 ? std::vector<int64_t>{g[1] / group_size, g[2]}
                                            : std::vector<int64_t>{g[2]});
  }
  return in;
}

}  // namespace npu::tiling::grouped::weight_quant::testing

#endif  // NPU_TESTS_TILING_GROUPED_WEIGHT_QUANT_GWQ_PROBLEMS_H_
