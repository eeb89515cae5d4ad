// What every tilingctl subcommand shares: exit codes, the two ways to fail
// (bad usage, a failed request) and reading a file named on the command line.
#ifndef NPU_CLIENT_TILINGCTL_CLI_H_
#define NPU_CLIENT_TILINGCTL_CLI_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::client {

// Exit status: 0 success, 1 the request or a case failed, 2 bad usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
// Sent as TilingRequest.client_id; the server logs it at debug level.
inline constexpr char kClientId[] = "tilingctl";

// Prints `message` and the usage line to stderr; returns kExitUsage.
int Usage(absl::string_view message);

// Prints `status` to stderr; returns kExitFailed.
int Failed(const absl::Status& status);

// Returns the bytes of the file at `path` (NotFound when it cannot be read).
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_CLI_H_
