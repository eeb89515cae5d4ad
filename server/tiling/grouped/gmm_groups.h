// GroupedMatmul's experts as its kernels walk them: one matmul per group,
// C_g [m_g, n_g] = A_g [m_g, k_g] x B_g [k_g, n_g] (+ bias_g), with the
// sizes the runtime gives each group (the token histogram) and the place of
// every group's operands in the tensor lists.
//
// The kernels (gmm/grouped_matmul/op_kernel/arch35/ and gmm/common/cgmct/)
// read each group's shape from the last two dims of its x and weight tensors
// (x[g] and weight[g] of a list, x[0] and weight[0] of a single tensor), then
// replace m by group_list's value (split M) or k (split K). A single tensor
// is consumed group after group as consecutive blocks: group g's x is the
// next m_g * k_g elements ([m_g, k_g], or [k_g, m_g] with transpose_x), its
// weight the next k_g * n_g ([k_g, n_g], or [n_g, k_g] with
// transpose_weight), its y the next m_g * n_g and its bias the next n_g. So
// split M reads the rows of x [M, K] and of y [M, N] and the experts of a
// weight [E, K, N]; split K (x stored [K, M]) the K rows of x and of a
// weight [K, N], and writes y [E, M, N].
//
// As CANN's tilings do, a list of x (several instances) means no split:
// every form with more than one x, and split K with a list of weights,
// takes its sizes from the lists' shapes (the struct's groupType is -1).
// Single y is CANN's split_item 2 or 3.
//
// The histogram (GroupedInputs::token_histogram) is the rows of each expert
// for split M and the K of each group for split K; the tiling never reads
// it. Without one, the split is spread evenly over the groups (the first
// total % E groups one larger), or, for split M with a list of y, taken
// from the rows of each y. Part of `npu_tiling_types`: the schedule
// expansion and the emulator read it.
#ifndef NPU_SERVER_TILING_GROUPED_GMM_GROUPS_H_
#define NPU_SERVER_TILING_GROUPED_GMM_GROUPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::tiling::grouped {

// Where the group's histogram came from.
enum class HistogramSource : uint8_t {
  kNone,      // no split: every size is a list shape
  kGiven,     // GroupedInputs::token_histogram
  kEven,      // spread evenly (none given)
  kYShapes,   // split M with a list of y: the rows of each y
};
// "none", "given", "even", "y_shapes".
std::string_view HistogramSourceName(HistogramSource source);

// One expert's matmul and where its operands are.
struct GmmGroup {
  uint64_t m = 0, n = 0, k = 0;
  // The instance of each list the group reads (0 for a single tensor), and
  // its first element there (0 in a list).
  uint32_t x_index = 0, w_index = 0, y_index = 0, bias_index = 0;
  uint64_t x_offset = 0, w_offset = 0, y_offset = 0, bias_offset = 0;
  // The group's first row in the stacked C the schedules walk: the groups'
  // C one under the other, [sum m_g, max n_g].
  uint64_t c_row = 0;
  // Split-K groups: the first K of the group in x's and the weight's K.
  uint64_t k_offset = 0;
  // Whether the kernels compute anything (CANN's kernels skip a group with
  // m, n or k of 0; a split-K group of k 0 still writes its zero y).
  bool computed() const { return m > 0 && n > 0 && k > 0; }
};

struct GmmGroups {
  // After CANN's reading of the forms: -1 (no split), 0 (split M), 2 (split K).
  int64_t group_type = kGroupTypeNone;
  bool trans_x = false, trans_w = false;
  bool single_x = true, single_w = true, single_y = true, single_bias = true;
  bool has_bias = false;
  std::vector<GmmGroup> groups;
  // The split each group got (split M: rows; split K: K), as the run used
  // it, and where it came from.
  std::vector<int64_t> histogram;
  HistogramSource source = HistogramSource::kNone;
  // M of x (split M) or K of x (split K) that the histogram splits.
  uint64_t split_total = 0;
  // Rows of the stacked C and its widest group.
  uint64_t stacked_rows = 0;
  uint64_t max_n = 0;
  // Elements of y, all groups' blocks in order.
  uint64_t y_elements = 0;

  // "x single, weight list, y single" style form name: "s-m-s".
  std::string FormName() const;
  // One line for an answer: the split, the histogram and its source, e.g.
  // "split M over 8 experts, rows 128,0,... (spread evenly: no token_histogram given)".
  std::string Describe() const;
  // The group whose stacked C rows hold `row`.
  size_t GroupOfRow(uint64_t row) const;
};

// The groups of `grouped` (a problem CheckGroupedProblem() accepted), with
// its histogram or the even spread. kInvalidArgument names the field and
// the rule: grouped.token_histogram of another length than the group count
// ("has 3 entries, the problem has 4 groups (group_list's length)"), whose
// sum is not the split dim ("sums to 900, x has M = 1024 rows"), or given
// to a problem with no split; grouped.group_list missing for a split;
// tensors of rank below 2; a single x, weight or y whose elements are not
// the groups' blocks; a list of weights shorter than the groups.
// kUnimplemented for what the emulator does not model: a sparse group list
// (group_list_type 2).
absl::StatusOr<GmmGroups> GroupsOf(const GroupedInputs& grouped);

// `total` spread over `groups` (the first total % groups one larger).
std::vector<int64_t> EvenHistogram(uint64_t total, uint64_t groups);

}  // namespace npu::tiling::grouped

#endif  // NPU_SERVER_TILING_GROUPED_GMM_GROUPS_H_
