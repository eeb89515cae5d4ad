// Einsum equations as the graph layer reads them: parsed once into one label
// string per operand and for the output, so that shape propagation (the
// output dims follow from the letters) and the lowering (which labels are
// batch, m, n and k) share one reading.
//
// Vocabulary: a *label* is one letter of the equation, standing for one dim.
// An ellipsis ("...") stands for the dims no letter names; it is expanded
// into placeholder labels '0', '1', ... (never letters), right-aligned as
// NumPy broadcasts them, so that every later step sees letters only.
#ifndef NPU_SERVER_GRAPH_EINSUM_H_
#define NPU_SERVER_GRAPH_EINSUM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::graph {

struct EinsumEquation {
  std::vector<std::string> inputs;  // one label per dim of each operand
  std::string output;               // one label per dim of the output
};

// Parses `equation` (spaces ignored; explicit "->" or implicit output) for
// operands of `ranks`. kInvalidArgument saying what does not fit: a
// character that is not a letter, a label count that differs from the
// operand's rank, an output label no input has, more than one ellipsis.
absl::StatusOr<EinsumEquation> ParseEinsum(absl::string_view equation,
                                           const std::vector<size_t>& ranks);

// The output dims of `equation` for operands of `dims`: each label's size,
// a size of 1 broadcasting against another. nullopt when two sizes of one
// label disagree.
std::optional<std::vector<int64_t>> EinsumOutputDims(const EinsumEquation& equation,
                                                     const std::vector<std::vector<int64_t>>& dims);

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_EINSUM_H_
