// Test support for the integration tests: the real tiling_server binary as a
// child process on free ports.
//
// The gtest integration tests (bad input, shutdown under load, TLS) exercise
// the server as deployed: flags parsed by main(), signals, the exit code.
// ServerProcess starts the binary with --address=127.0.0.1 --port=0 (and
// --metrics_port=0 unless the caller passes its own), collects its stdout and
// stderr in a temp file, and parses the ports it prints ("listening on
// HOST:PORT", "metrics on HOST:PORT"). Waits are bounded only as a guard
// against hangs; nothing measures elapsed time.
#ifndef NPU_TESTS_INTEGRATION_SERVER_PROCESS_H_
#define NPU_TESTS_INTEGRATION_SERVER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace npu::server::testing {

// How long a test waits for a process before declaring it hung.
inline constexpr absl::Duration kHangGuard = absl::Seconds(120);

class ServerProcess {
 public:
  // Starts `binary` with the loopback/port-0 flags followed by `args`, and
  // waits until it prints the port it bound. kInternal when it cannot be
  // spawned, exits first (the message holds its log) or never prints a port.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(const std::string& binary,
                                                              const std::vector<std::string>& args);

  // SIGKILLs the process if it is still running and removes the log.
  ~ServerProcess();

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  // -1 when started with --metrics_port=-1.
  int metrics_port() const { return metrics_port_; }
  // "127.0.0.1:PORT", for grpc::CreateChannel.
  std::string target() const;

  // Sends `signal_number` (e.g. SIGTERM) to the process.
  void Signal(int signal_number);

  // Waits for the process to exit (SIGKILL after kHangGuard) and returns its
  // exit code, or 128 + the signal number when a signal ended it.
  int Wait();

  // Everything the process wrote to stdout and stderr so far.
  std::string Log() const;

 private:
  ServerProcess() = default;

  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
  int port_ = 0;
  int metrics_port_ = -1;
  std::string log_path_;
};

// A fresh empty directory under $TMPDIR (or /tmp); the caller removes it.
std::string MakeTempDir(const std::string& prefix);

// The body of `GET path` from 127.0.0.1:`port` (HTTP/1.0, for /metrics).
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

// The value of the Prometheus sample whose name and labels are exactly
// `series`, e.g. `grpc_server_handled_total{grpc_code="OK",...}`, in the text
// exposition `metrics`; -1 when absent.
double MetricValue(const std::string& metrics, const std::string& series);

}  // namespace npu::server::testing

#endif  // NPU_TESTS_INTEGRATION_SERVER_PROCESS_H_
