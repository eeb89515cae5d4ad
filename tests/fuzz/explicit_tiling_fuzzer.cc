// Fuzz target: Execute requests, above all their explicit tilings, through
// PrepareExecute (the request checks, PlanFromExplicitTiling, the work
// limits) and then RunExecute (the emulator on that plan, numerics against
// the fp64 reference).
//
// An explicit tiling is a TilingResponse the caller may have edited by hand,
// so the server must refuse every inconsistent one with INVALID_ARGUMENT
// naming the field, or have the emulator find the fault ("tiling: ...")
// before any numerics run. The target aborts, besides on crashes and
// sanitizer reports, when:
//   * either step returns INTERNAL (a plan got past the checks and broke the
//     emulator, or the engine's own plan failed);
//   * an error message does not start with the field it is about;
//   * a run that was accepted produces a C outside the error bound: a tiling
//     that computes the wrong answer must be refused, not executed.
// Operands come from the request's seed (inline operands are dropped, so raw
// bytes cannot smuggle NaNs into the accuracy check), on one thread, under
// work limits small enough that a run takes milliseconds.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/logging.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/service/execute.h"
#include "server/tiling/builtin_strategies.h"
#include "server/tiling/registry.h"
#include "tests/fuzz/fuzz_checks.h"

namespace {

namespace pb = ::npu::tiling::v1;

struct Env {
  npu::tiling::StrategyRegistry registry = npu::tiling::MakeBuiltinRegistry();
  npu::server::ExecuteOptions options = Options();

  static npu::server::ExecuteOptions Options() {
    npu::server::ExecuteOptions options;
    options.max_numeric_macs = uint64_t{1} << 18;  // 64^3
    options.max_operand_elements = uint64_t{1} << 14;
    options.max_simulated_ops = 20000;
    options.max_returned_c_bytes = uint64_t{1} << 20;
    options.max_threads_per_run = 1;
    return options;
  }
};

Env& TheEnv() {
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(
        [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
    return true;
  }();
  static_cast<void>(quiet);
  static Env* env = new Env();
  return *env;
}

[[noreturn]] void Fail(const char* what, const pb::ExecuteRequest& request,
                       const absl::Status& status) {
  std::fprintf(stderr, "explicit_tiling_fuzzer: %s\nstatus: %s\nrequest: %s\n", what,
               status.ToString().c_str(), request.ShortDebugString().c_str());
  std::abort();
}

// NPU_FUZZ_VERBOSE=1 prints each input's outcome (to see what a corpus reaches).
void Report(const char* step, const absl::Status& status) {
  static const bool verbose = std::getenv("NPU_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "  %s: %s\n", step, status.ToString().c_str());
}

void CheckError(const pb::ExecuteRequest& request, const absl::Status& status) {
  if (status.code() == absl::StatusCode::kInternal) Fail("INTERNAL status", request, status);
  if (!npu::fuzz::NamesAField(status.message())) Fail("error names no field", request, status);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Env& env = TheEnv();
  pb::ExecuteRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  request.clear_inputs();
  request.set_threads(1);

  absl::StatusOr<npu::server::PreparedExecute> prepared =
      npu::server::PrepareExecute(request, env.registry, env.options);
  Report("prepare", prepared.status());
  if (!prepared.ok()) {
    CheckError(request, prepared.status());
    return 0;
  }
  pb::ExecuteResponse response;
  const absl::Status status = npu::server::RunExecute(*prepared, env.options, nullptr, &response);
  Report("run", status);
  if (!status.ok()) {
    CheckError(request, status);
    return 0;
  }
  if (!prepared->timing_only && !response.accuracy().passed()) {
    Fail("an accepted tiling computed C outside the error bound", request, status);
  }
  return 0;
}
