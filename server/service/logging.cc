#include "server/service/logging.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace npu::server {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
absl::Mutex g_write_mutex(absl::kConstInit);

absl::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "ERROR";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kDebug:
      return "DEBUG";
  }
  return "?";
}

}  // namespace

absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name) {
  for (LogLevel level : {LogLevel::kError, LogLevel::kWarning, LogLevel::kInfo, LogLevel::kDebug}) {
    std::string lower(LevelName(level));
    for (char& c : lower) c = static_cast<char>(c - 'A' + 'a');
    if (name == lower) return level;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown log level \"", name, "\"; expected error, warning, info or debug"));
}

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(); }

void Log(LogLevel level, absl::string_view message) {
  if (!LogEnabled(level)) return;
  const std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " ",
                   LevelName(level), " ", message, "\n");
  absl::MutexLock lock(&g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void LogOutcome(absl::string_view method, absl::string_view client_id, absl::string_view id,
                const absl::Status& status) {
  const LogLevel level =
      status.code() == absl::StatusCode::kInternal ? LogLevel::kError : LogLevel::kDebug;
  if (!LogEnabled(level)) return;
  Log(level,
      absl::StrCat(method, " client=\"", client_id, "\" id=\"", id, "\" ", status.ToString()));
}

}  // namespace npu::server
