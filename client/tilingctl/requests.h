// tilingctl's requests, built from its command-line flags (flags.h).
//
// `tile` and `advise` send a TilingRequest, `batch` a list of them read from
// a file, `execute` an ExecuteRequest. Errors are usage errors: the caller
// prints them with Usage() (cli.h).
#ifndef NPU_CLIENT_TILINGCTL_REQUESTS_H_
#define NPU_CLIENT_TILINGCTL_REQUESTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

// Returns the request the `tile` flags describe (--m, --n and --k required).
absl::StatusOr<npu::tiling::v1::TilingRequest> RequestFromFlags();

// The request of `tile --op grouped_matmul`: the GroupedInputs of --grouped
// (the proto JSON mapping, or @FILE), or else the lists the shape flags
// describe (--m, --n, --k per the unit tests' forms: --groups, --form,
// --group-type, --group-list-type, --split-item, --dtype / --dtype-b /
// --dtype-c, --trans-a (transpose_x), --trans-b (transpose_weight),
// --format-b, --bias / --bias-dtype), the token histogram (--histogram, or
// --skew zipf:S with --seed: ZipfHistogram(), execute.h), with the platform and
// decision flags.
absl::StatusOr<npu::tiling::v1::TilingRequest> GroupedRequestFromFlags();

// Puts `request` in ADVISE mode with the advise flags. --strategy is refused
// here (the server would refuse it too): the advice ranks every strategy.
absl::Status ApplyAdviseFlags(npu::tiling::v1::TilingRequest* request);

// Returns the requests of a batch file: a JSON list whose items are
// TilingRequests ({"problem": {...}, ...}) or bare MatmulProblems
// ({"m": ..., ...}), both in the proto JSON mapping. Bare problems take the
// platform, strategy and trace flags. Items without an id get their index.
absl::StatusOr<std::vector<npu::tiling::v1::TilingRequest>> ParseBatchFile(const std::string& text);

// Returns the Execute request of the `execute` flags: the `tile` flags plus
// the operand files (--a, --b, --bias and, for QuantBatchMatmulV3 only,
// --scale_npy, --pertoken_npy, --offset_npy; converted by InputsFromNpy()),
// seed, options and an explicit tiling or a kernel schedule
// (--kernel-schedule, read by KernelScheduleFromJson()). Without --m / --n /
// --k the sizes come from the shapes of --a and --b (SizesFromOperands()).
absl::StatusOr<npu::tiling::v1::ExecuteRequest> ExecuteRequestFromFlags();

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_REQUESTS_H_
