// tiling_server: the npu.tiling.v1.TilingService gRPC server.
//
// Serves tiling decisions of the built-in strategy registry on --address:
// --port, Prometheus metrics on --address:--metrics_port/metrics, the standard
// health service and server reflection. Port 0 picks a free port; the bound
// ports are printed on stdout as "listening on HOST:PORT" and
// "metrics on HOST:PORT" so scripts can parse them. SIGTERM or SIGINT drains
// in-flight calls for up to --drain_seconds and exits 0. Bad flags or a busy
// port exit 1.
#include <grpc/support/log.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "emulator/emulator.h"
#include "google/protobuf/stubs/logging.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/logging.h"
#include "server/service/server.h"
#include "server/service/validate.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/status_macros.h"

ABSL_FLAG(std::string, address, "0.0.0.0", "Interface to bind for gRPC and /metrics.");
ABSL_FLAG(int, port, 50051, "gRPC port; 0 picks a free port and prints it.");
ABSL_FLAG(int, metrics_port, 9464,
          "Prometheus /metrics port; 0 picks a free port and prints it; -1 disables metrics.");
ABSL_FLAG(int64_t, cache_size, 65536, "Decisions kept in the LRU decision cache; 0 disables it.");
ABSL_FLAG(int, max_message_bytes, 4 * 1024 * 1024,
          "Largest request message accepted, bytes (larger: RESOURCE_EXHAUSTED).");
ABSL_FLAG(int, max_inflight, 1024,
          "RPCs (unary calls plus open batch streams) served at once; more are refused with "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_batch, 1000000, "Requests accepted on one GetTilingBatch stream.");
ABSL_FLAG(std::string, log_level, "info", "error, warning, info or debug (one line per request).");
ABSL_FLAG(int, execute_threads, 2,
          "Execute: emulation worker threads (emulations never run on the gRPC threads).");
ABSL_FLAG(int, max_execute_queue, 16,
          "Execute: emulations that may wait for a worker; one more is refused with "
          "RESOURCE_EXHAUSTED at once.");
ABSL_FLAG(uint64_t, max_execute_work, uint64_t{1} << 33,
          "Execute: largest m*n*k (MACs) of a run with numerics; larger ones are "
          "RESOURCE_EXHAUSTED (timing-only runs are not limited by it).");
ABSL_FLAG(uint64_t, max_execute_simulated_ops, 3000000,
          "Execute: largest number of simulated pipe operations of one run (~72 bytes each).");
ABSL_FLAG(uint64_t, max_execute_operand_elements, uint64_t{1} << 24,
          "Execute: largest element count of A, B or C in a run with numerics (2^24 = 4096^2 "
          "keeps a run's tensors under ~350 MB); larger is RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint64_t, max_execute_returned_c_bytes, uint64_t{60} << 20,
          "Execute: largest C returned in a response (return_c), bytes; larger is "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(int, max_advisory_ms, 2000,
          "ADVISE: most wall-clock milliseconds one advice may spend on emulations (the budget "
          "of a request that sets none; larger requests are lowered to it); 1..600000.");
ABSL_FLAG(int, max_advise_candidates, 16,
          "ADVISE: most candidates one answer may list (larger requests are lowered to it); "
          "1..64.");
ABSL_FLAG(int, max_graph_gears, 64,
          "GetGraphTiling: most gears (sets of symbolic dim values) one request may ask for; "
          "1..4096.");
ABSL_FLAG(double, drain_seconds, 5.0,
          "On SIGTERM/SIGINT, how long in-flight calls may run before they are cancelled.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain of the gRPC port; with --tls_key the port speaks TLS only "
          "(plaintext clients are refused).");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle for mutual TLS: clients must present a certificate one of these CAs "
          "signed. Needs --tls_cert and --tls_key.");

namespace npu::server {
namespace {

std::string HostPort(const std::string& host, int port) {
  if (absl::StrContains(host, ':') && !absl::StartsWith(host, "[")) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

// Protobuf writes an ERROR line to stderr for every request whose string
// fields are not UTF-8 (the service answers it INVALID_ARGUMENT), so any
// client could flood the log. Its lines go to the debug level instead; a
// FATAL one is still an error.
void ProtobufLogHandler(google::protobuf::LogLevel level, const char* filename, int line,
                        const std::string& message) {
  Log(level == google::protobuf::LOGLEVEL_FATAL ? LogLevel::kError : LogLevel::kDebug,
      absl::StrCat("protobuf ", filename, ":", line, ": ", message));
}

// The contents of the file at `path`.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int Fail(absl::string_view message) {
  Log(LogLevel::kError, message);
  return 1;
}

// Logging of the server, gRPC and protobuf at --log_level.
absl::Status SetUpLogging() {
  // Debian builds Abseil without NDEBUG, which leaves absl::Mutex's deadlock
  // detector on: every lock and every Mutex destruction, including gRPC's own
  // (grpc_core::Mutex is an absl::Mutex), updates a global lock graph. It
  // showed up as ~3% of server CPU under load. It is a debugging aid; the
  // service's locking is covered by the tests (run with the detector on).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  google::protobuf::SetLogHandler(&ProtobufLogHandler);
  absl::StatusOr<LogLevel> level = ParseLogLevel(absl::GetFlag(FLAGS_log_level));
  if (!level.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--log_level: ", level.status().message()));
  }
  SetLogLevel(*level);
  gpr_set_log_verbosity(*level == LogLevel::kDebug ? GPR_LOG_SEVERITY_INFO
                                                   : GPR_LOG_SEVERITY_ERROR);
  return absl::OkStatus();
}

// The flags checked before anything starts.
struct StartupFlags {
  int metrics_port = 0;
  int64_t cache_size = 0;
  double drain_seconds = 0;
};

absl::StatusOr<StartupFlags> ReadStartupFlags() {
  StartupFlags flags;
  flags.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  if (flags.metrics_port < -1 || flags.metrics_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_port must be in [-1, 65535], got ", flags.metrics_port));
  }
  flags.cache_size = absl::GetFlag(FLAGS_cache_size);
  if (flags.cache_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cache_size must be >= 0, got ", flags.cache_size));
  }
  flags.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  if (!(flags.drain_seconds >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--drain_seconds must be >= 0, got ", flags.drain_seconds));
  }
  return flags;
}

// Blocks SIGTERM and SIGINT in the calling thread and returns them. Called
// before any thread exists, so that every thread inherits the mask and only
// WaitForShutdownSignal() receives them.
sigset_t BlockShutdownSignals() {
  sigset_t shutdown_signals;
  sigemptyset(&shutdown_signals);
  sigaddset(&shutdown_signals, SIGTERM);
  sigaddset(&shutdown_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr);
  return shutdown_signals;
}

// Serves `collectable` on `address`:`metrics_port`/metrics and prints the
// bound address; nullptr when `metrics_port` is -1.
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetrics(
    const std::string& address, int metrics_port,
    const std::shared_ptr<prometheus::Collectable>& collectable) {
  if (metrics_port < 0) return nullptr;
  std::unique_ptr<prometheus::Exposer> exposer;
  // prometheus-cpp reports a busy port by throwing CivetException; this is
  // the one place a dependency throws, and it is a startup error.
  try {
    exposer = std::make_unique<prometheus::Exposer>(HostPort(address, metrics_port), 1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", HostPort(address, metrics_port), ": ", e.what()));
  }
  exposer->RegisterCollectable(collectable);
  const std::vector<int> ports = exposer->GetListeningPorts();
  std::printf("metrics on %s\n",
              HostPort(address, ports.empty() ? metrics_port : ports.front()).c_str());
  std::fflush(stdout);
  return exposer;
}

// The PEM files of --tls_cert, --tls_key and --tls_client_ca into `options`.
absl::Status ReadTlsFiles(ServerOptions* options) {
  struct TlsFile {
    const char* flag;
    std::string path;
    std::string* pem;
  };
  for (const TlsFile& file :
       {TlsFile{"--tls_cert", absl::GetFlag(FLAGS_tls_cert), &options->tls_cert_chain_pem},
        TlsFile{"--tls_key", absl::GetFlag(FLAGS_tls_key), &options->tls_private_key_pem},
        TlsFile{"--tls_client_ca", absl::GetFlag(FLAGS_tls_client_ca),
                &options->tls_client_ca_pem}}) {
    if (file.path.empty()) continue;
    absl::StatusOr<std::string> pem = ReadFile(file.path);
    if (!pem.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(file.flag, ": ", pem.status().message()));
    }
    if (pem->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(file.flag, ": ", file.path, " is empty"));
    }
    *file.pem = *std::move(pem);
  }
  return absl::OkStatus();
}

// The Execute flags into `execute`, checked: each limit bounds memory or
// time, so none may be 0 ("unlimited" would let one request exhaust the
// host).
absl::Status ReadExecuteFlags(ExecuteOptions* execute) {
  execute->workers = absl::GetFlag(FLAGS_execute_threads);
  execute->max_queued = absl::GetFlag(FLAGS_max_execute_queue);
  execute->max_numeric_macs = absl::GetFlag(FLAGS_max_execute_work);
  execute->max_simulated_ops = absl::GetFlag(FLAGS_max_execute_simulated_ops);
  execute->max_operand_elements = absl::GetFlag(FLAGS_max_execute_operand_elements);
  execute->max_returned_c_bytes = absl::GetFlag(FLAGS_max_execute_returned_c_bytes);
  if (execute->max_operand_elements == 0 || execute->max_returned_c_bytes == 0) {
    return absl::InvalidArgumentError(
        "--max_execute_operand_elements and --max_execute_returned_c_bytes must be "
        "positive");
  }
  if (execute->workers < 1 || execute->workers > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--execute_threads must be in [1, 1024], got ", execute->workers));
  }
  if (execute->max_queued < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_execute_queue must be >= 0, got ", execute->max_queued));
  }
  // 2^32 operations is ~300 GB, past any host.
  if (execute->max_numeric_macs == 0) {
    return absl::InvalidArgumentError("--max_execute_work must be positive");
  }
  if (execute->max_simulated_ops == 0 || execute->max_simulated_ops > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_execute_simulated_ops must be in [1, 4294967296], got ",
                     execute->max_simulated_ops));
  }
  return absl::OkStatus();
}

// The ADVISE flags into `advise`, checked against the wire limits.
absl::Status ReadAdviseFlags(AdviseLimits* advise) {
  const int max_advisory_ms = absl::GetFlag(FLAGS_max_advisory_ms);
  if (max_advisory_ms < 1 || max_advisory_ms > static_cast<int>(kMaxAdvisoryMs)) {
    return absl::InvalidArgumentError(absl::StrCat("--max_advisory_ms must be in [1, ",
                                                   kMaxAdvisoryMs, "], got ", max_advisory_ms));
  }
  const int max_advise_candidates = absl::GetFlag(FLAGS_max_advise_candidates);
  if (max_advise_candidates < 1 || max_advise_candidates > static_cast<int>(kMaxAdviseCandidates)) {
    return absl::InvalidArgumentError(absl::StrCat("--max_advise_candidates must be in [1, ",
                                                   kMaxAdviseCandidates, "], got ",
                                                   max_advise_candidates));
  }
  advise->max_advisory_ms = static_cast<uint32_t>(max_advisory_ms);
  advise->max_candidates = static_cast<uint32_t>(max_advise_candidates);
  advise->default_candidates = std::min(advise->default_candidates, advise->max_candidates);
  return absl::OkStatus();
}

// The server's options from the flags; errors name the flag.
absl::StatusOr<ServerOptions> ReadServerFlags(const std::string& address, int64_t cache_size) {
  ServerOptions options;
  options.address = address;
  options.port = absl::GetFlag(FLAGS_port);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  RETURN_IF_ERROR(ReadTlsFiles(&options));
  options.service.cache_capacity = static_cast<size_t>(cache_size);
  options.service.max_inflight = absl::GetFlag(FLAGS_max_inflight);
  options.service.max_batch = absl::GetFlag(FLAGS_max_batch);
  RETURN_IF_ERROR(ReadExecuteFlags(&options.service.execute));
  RETURN_IF_ERROR(ReadAdviseFlags(&options.service.advise));
  const int max_graph_gears = absl::GetFlag(FLAGS_max_graph_gears);
  if (max_graph_gears < 1 || max_graph_gears > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_graph_gears must be in [1, 4096], got ", max_graph_gears));
  }
  options.service.graph.max_gears = static_cast<size_t>(max_graph_gears);
  // The receive limit bounds a request before the service sees it; a model
  // is the bulk of its request.
  options.service.graph.max_model_bytes = static_cast<size_t>(options.max_message_bytes);
  options.service.graph.threads = options.service.execute.max_threads_per_run;
  return options;
}

// The startup lines of a server that is listening.
void LogServing(const TilingServer& server, const ServerOptions& options, int64_t cache_size) {
  if (!options.tls_cert_chain_pem.empty()) {
    Log(LogLevel::kInfo,
        options.tls_client_ca_pem.empty()
            ? "TLS on; plaintext clients are refused"
            : "mutual TLS on; clients must present a certificate of --tls_client_ca");
  }
  Log(LogLevel::kInfo,
      absl::StrCat("serving npu.tiling.v1.TilingService on ", server.address(), "; cache ",
                   cache_size, " decisions; max in-flight ", options.service.max_inflight, "; ",
                   options.service.execute.workers, " emulation workers, queue ",
                   options.service.execute.max_queued, "; numerics on ",
                   ::npu::emu::NumericsBackendName()));
}

// Waits for SIGTERM or SIGINT, then drains `server` for up to
// `drain_seconds` and stops it and the metrics exposer.
void ServeUntilSignal(const sigset_t& shutdown_signals, double drain_seconds,
                      std::unique_ptr<TilingServer>& server,
                      std::unique_ptr<prometheus::Exposer>& exposer) {
  int signal_number = 0;
  sigwait(&shutdown_signals, &signal_number);
  Log(LogLevel::kInfo, absl::StrCat("received ", strsignal(signal_number), "; draining for up to ",
                                    drain_seconds, " s"));
  server->Shutdown(absl::Seconds(drain_seconds));
  server.reset();
  Log(LogLevel::kDebug, "gRPC server stopped");
  exposer.reset();
  Log(LogLevel::kDebug, "metrics exposer stopped");
}

int Run() {
  if (absl::Status logging = SetUpLogging(); !logging.ok()) return Fail(logging.message());
  absl::StatusOr<StartupFlags> flags = ReadStartupFlags();
  if (!flags.ok()) return Fail(flags.status().message());
  const sigset_t shutdown_signals = BlockShutdownSignals();

  const std::string address = absl::GetFlag(FLAGS_address);
  auto prometheus_registry = std::make_shared<prometheus::Registry>();
  ServiceMetrics metrics(*prometheus_registry);
  // The exposer keeps only a weak pointer: this one keeps the collectable.
  const std::shared_ptr<prometheus::Collectable> metrics_collectable = metrics.Collectable();
  absl::StatusOr<std::unique_ptr<prometheus::Exposer>> exposer =
      StartMetrics(address, flags->metrics_port, metrics_collectable);
  if (!exposer.ok()) return Fail(exposer.status().message());

  const npu::tiling::StrategyRegistry registry = npu::tiling::MakeBuiltinRegistry();
  absl::StatusOr<ServerOptions> options = ReadServerFlags(address, flags->cache_size);
  if (!options.ok()) return Fail(options.status().message());
  absl::StatusOr<std::unique_ptr<TilingServer>> server =
      TilingServer::Start(*options, registry, metrics);
  if (!server.ok()) return Fail(server.status().ToString());
  std::printf("listening on %s\n", (*server)->address().c_str());
  std::fflush(stdout);
  LogServing(**server, *options, flags->cache_size);

  ServeUntilSignal(shutdown_signals, flags->drain_seconds, *server, *exposer);
  Log(LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace
}  // namespace npu::server

int main(int argc, char** argv) {
  // --help lists the flags of this file. Abseil's default looks for a file
  // named after the binary (tiling_server.cc), which this one is not.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "Serves matmul tiling decisions for the Ascend 950PR over gRPC.\n"
      "Usage: tiling_server [--address 0.0.0.0] [--port 50051] [--metrics_port 9464] ...");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() > 1) {
    std::fprintf(stderr, "tiling_server: unexpected argument \"%s\"\n", positional[1]);
    return 1;
  }
  return npu::server::Run();
}
