// Minimal leveled logging to stderr for the server.
//
// Debian's Abseil (20220623) has no absl/log, and the server logs little:
// startup, shutdown and INTERNAL errors, plus one line per request at debug
// level. Lines are written whole under a lock so that concurrent RPC threads
// do not interleave.
#ifndef NPU_SERVER_SERVICE_LOGGING_H_
#define NPU_SERVER_SERVICE_LOGGING_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::server {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// Parses "error", "warning", "info" or "debug".
absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name);

// Sets the most verbose level that is written (default kInfo).
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// Writes "<time> <LEVEL> <message>" when `level` is enabled.
void Log(LogLevel level, absl::string_view message);

// Logs how a call of `method` from `client_id` with request `id` ended: an
// INTERNAL status (a service or engine bug) always at error level, anything
// else at debug level.
void LogOutcome(absl::string_view method, absl::string_view client_id, absl::string_view id,
                const absl::Status& status);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_LOGGING_H_
