// GroupedMatmul's op-level rules: what every one of its problems must be
// before a path is chosen, and the path CANN's dispatch chooses.
//
// On DAV_3510 CANN's TilingGMM (gmm/grouped_matmul/op_host/op_tiling/
// grouped_matmul_tiling.cpp) reads the descriptions of x[0] and weight[0]
// (either missing fails the tiling) and picks one of three paths from their
// dtypes, in this order:
//   quant        x is a 4-bit type (int4, float4_e2m1, float4_e1m2), or x
//                and weight are both 1-byte types (int8, float8_e4m3fn,
//                float8_e5m2, hifloat8, float8_e8m0);
//   weight-quant x and weight differ;
//   no-quant     x = weight, float16, bfloat16 or float32.
// A problem of none of them (x = weight of another type) falls through in
// CANN to its pre-arch35 GMMTiling, whose plans are another chip's; the
// engine refuses it. Each path has its own strategies (registered in
// builtin_strategies.cc in CANN's order, each IsCapable() beginning with its
// path test) and its own checks. Part of `npu_tiling_types` (the emulator
// reads the path too).
#ifndef NPU_SERVER_TILING_GROUPED_GMM_PATH_H_
#define NPU_SERVER_TILING_GROUPED_GMM_PATH_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "server/tiling/types.h"

namespace npu::tiling::grouped {

// The engine's bounds on a grouped problem, kept by validation before any
// path reads it (the wire keeps the same, server/service/validate.h): at
// most 1024 instances per tensor list (CANN's largest group count is 1024
// for split M / K and 128 for a list), at most 8 dims per shape (CANN's
// tensors have rank <= 8), dims in [0, 2147483647], and a histogram of at
// most 1024 non-negative entries.
inline constexpr size_t kMaxGroupedInstances = 1024;
inline constexpr size_t kMaxGroupedRank = 8;
inline constexpr size_t kMaxHistogramEntries = 1024;

enum class GmmPath : uint8_t {
  kNoQuant,      // x = weight, float16 / bfloat16 / float32: one strategy, 62 words
  kQuant,        // 8- / 4-bit x and weight: the MX basic API (18 words), then GroupedQmm (440)
  kWeightQuant,  // x != weight: one strategy, 448 words
  kPreArch35,    // none of the above: CANN's pre-arch35 GMMTiling, refused here
};
// "NO_QUANT", "QUANT", "WEIGHT_QUANT", "PRE_ARCH35".
std::string_view GmmPathName(GmmPath path);

// The path CANN's DAV_3510 dispatch takes for x[0]'s and weight[0]'s
// dtypes. Meaningful once CheckGroupedProblem() passed (x and weight
// present).
GmmPath PathOf(const GroupedInputs& grouped);

// Whether `problem` is a GroupedMatmul problem on `path`: the first test of
// every grouped strategy's IsCapable().
inline bool OnPath(const MatmulProblem& problem, GmmPath path) {
  return problem.op == MatmulOp::kGroupedMatmul && PathOf(problem.grouped) == path;
}

// The op-level checks, in CANN's order, before any path: the problem's
// fields outside `grouped` stay at their defaults; the lists, shapes and
// histogram keep the bounds above; x and weight each have an instance
// (CANN fails on a missing x[0] or weight[0] description); the dtypes pick
// one of the three paths. kInvalidArgument names the field and the rule.
absl::Status CheckGroupedProblem(const MatmulProblem& problem);

}  // namespace npu::tiling::grouped

#endif  // NPU_SERVER_TILING_GROUPED_GMM_PATH_H_
