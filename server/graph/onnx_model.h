// ONNX models as the graph lowering reads them: parsing (binary or text
// protobuf), ONNX's own checker, the symbolic dims of the inputs, and the
// gears (one value per symbolic dim) a request asks for.
//
// The library is Debian's libonnx (ONNX 1.12, opsets up to 17). It links the
// same libprotobuf as the service's gRPC, so a model is an onnx::ModelProto
// of the process's one protobuf runtime.
#ifndef NPU_SERVER_GRAPH_ONNX_MODEL_H_
#define NPU_SERVER_GRAPH_ONNX_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace npu::graph {

// The highest opset of the default domain ONNX 1.12 defines.
inline constexpr int64_t kMaxOpset = 17;
// Values one symbolic dim may list, and the bound of a gear's dim.
inline constexpr size_t kMaxDimValues = 64;
inline constexpr int64_t kMaxDimValue = 2147483647;

enum class ModelEncoding { kDetect, kBinary, kText };

// Parses `bytes` as an onnx.ModelProto. kDetect tries the binary form, then
// the text form. kInvalidArgument naming "model" when neither parses.
absl::StatusOr<onnx::ModelProto> ParseModel(absl::string_view bytes, ModelEncoding encoding);

// A zero point (of QuantizeLinear, DequantizeLinear, MatMulInteger or
// QLinearMatMul) keeps its data up to this many elements: the lowering reads
// its values (a non-zero one is refused), and one per channel is a few KiB.
inline constexpr int64_t kMaxKeptZeroPointElements = int64_t{1} << 20;

// Moves the data of every initializer with more than `max_elements`
// elements out of the model, but for zero points (above): the initializer
// becomes a graph input of the same dtype and dims, which is all the
// lowering reads (shape inference still sees the small ones, such as
// Reshape's target shapes). Returns how many were stripped.
int StripInitializerData(onnx::ModelProto& model, int64_t max_elements = 64);

// The elements of an integer tensor stored in the model (INT8, UINT8,
// INT32 or INT64; raw_data or the typed field), when its data is there and
// it has at most `max_elements`; nullopt otherwise.
std::optional<std::vector<int64_t>> StoredIntegers(const onnx::TensorProto& tensor,
                                                   int64_t max_elements);

// ONNX's checker, and the opset of the default domain (1..kMaxOpset).
// kInvalidArgument naming "model" and what the checker said.
absl::Status CheckModel(const onnx::ModelProto& model);

// The opset of the default domain ("" or "ai.onnx"); 0 when absent.
int64_t DefaultOpset(const onnx::ModelProto& model);

// The symbolic dims (dim_param) of the graph's inputs that are not
// initializers, in order of first appearance.
std::vector<std::string> SymbolicDims(const onnx::GraphProto& graph);

// One gear: a value for each symbolic dim that has one, in SymbolicDims()
// order.
using Gear = std::vector<std::pair<std::string, int64_t>>;

enum class GearPolicy { kZip, kProduct };

// The gears of `values` (dim name -> its values) over `dims`
// (SymbolicDims()). kZip: gear i takes every dim's i-th value (a dim with
// one value takes it in every gear; the others list equally many). kProduct:
// every combination, the first dim outermost. Errors (kInvalidArgument,
// naming "dims"): a name not in `dims`, an empty list or more than
// kMaxDimValues values, a value outside 1..kMaxDimValue, unequal ZIP
// lengths, more than `max_gears` gears. No values at all is one empty gear.
absl::StatusOr<std::vector<Gear>> BuildGears(
    const std::vector<std::string>& dims, const std::map<std::string, std::vector<int64_t>>& values,
    GearPolicy policy, size_t max_gears);

}  // namespace npu::graph

#endif  // NPU_SERVER_GRAPH_ONNX_MODEL_H_
