// `tilingctl graph MODEL.onnx`: the request GetGraphTiling takes, built from
// a model file and the dims, and the answer as a table.
#ifndef NPU_CLIENT_TILINGCTL_GRAPH_H_
#define NPU_CLIENT_TILINGCTL_GRAPH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

// What `ReadModel()` found in a model file.
struct ModelFile {
  // The model, serialized (binary), initializers over 64 elements without
  // their data: they become graph inputs of the same dtype and dims, which is
  // all the service reads. Small ones (Reshape's shapes, GELU's constants)
  // keep theirs for shape inference.
  std::string bytes;
  int nodes = 0;
  int stripped_initializers = 0;
  size_t file_bytes = 0;
};

// Reads an ONNX model (binary .onnx, or text format) from `path`.
absl::StatusOr<ModelFile> ReadModel(const std::string& path);

// Parses dim specs "name=v1,v2,..." (several per argument, separated by
// spaces or ';') into `request`'s dims. kInvalidArgument naming the spec.
absl::Status AddDimSpecs(const std::vector<std::string>& specs,
                         npu::tiling::v1::GraphTilingRequest* request);

// The answer for people: a header (model, chip, engine), then per gear one
// row per matmul node (name, ONNX op, CANN op, batch and M x K x N, dtype,
// strategy, tiling key, block dim, emulated time, derivation) and the
// per-operator and gear totals, and the distinct problems' count.
std::string FormatGraph(const npu::tiling::v1::GraphTilingResponse& response,
                        absl::string_view model_name);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_GRAPH_H_
