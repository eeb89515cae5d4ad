#include "server/tiling/operator_table.h"

#include <iterator>

namespace npu::tiling {
namespace {

static_assert(std::size(kOperatorSpecs) == kMatmulOpCount);

constexpr bool InOpOrder() {
  for (size_t i = 0; i < std::size(kOperatorSpecs); ++i) {
    if (kOperatorSpecs[i].op != kAllMatmulOps[i]) return false;
  }
  return true;
}
static_assert(InOpOrder(), "kOperatorSpecs must be in MatmulOp order");

}  // namespace

absl::Span<const OperatorSpec> Operators() { return kOperatorSpecs; }

}  // namespace npu::tiling
