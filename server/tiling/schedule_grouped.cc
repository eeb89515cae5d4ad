// GroupedMatmul's tile loops. Its kernels deal each group's base blocks to
// the cores, group after group, over the rows (split M) or K (split K) the
// runtime group_list gives each expert: a distribution the plan does not
// hold (CANN's tiling reads only group_list's length). Until Execute takes
// the token histogram, a grouped plan has no schedule of its own.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/tiling/schedule_internal.h"

namespace npu::tiling::schedule_internal {

absl::StatusOr<Schedule> ExpandGrouped(const TilingPlan& plan, const MatmulProblem& /*walked*/,
                                       const ChipSpec& /*chip*/, uint64_t /*batch*/) {
  return absl::UnimplementedError(
      absl::StrCat("the tile loops of ", std::string(plan.data.struct_name()),
                   " (GroupedMatmul) are not modelled: they depend on the runtime token "
                   "distribution"));
}

}  // namespace npu::tiling::schedule_internal
