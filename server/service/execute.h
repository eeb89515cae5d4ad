// The Execute pipeline without the transport: request in, response out.
//
// An Execute runs in two halves. `PrepareExecute()` runs on the RPC thread and
// is cheap: it validates the request, resolves the chip, obtains the tiling
// (the engine's decision, or the request's explicit tiling through
// explicit_tiling.h) or the request's kernel schedule (kernel_convert.h, then
// the emulator's ValidateKernelSchedule()) and checks every work limit, so
// that a request the server would refuse is refused before it waits in the
// emulation queue. `RunExecute()` runs on an emulation worker
// (execute_queue.h): it builds or generates the operands, runs the emulator,
// checks C against the fp64 reference and fills the response. Both are plain
// functions of their inputs, so they are tested without a server;
// tiling_service.h adds the queue, the deadline and the metrics.
//
// Status codes follow the proto: kInvalidArgument naming the field, kNotFound
// / kFailedPrecondition as in GetTiling (a chip CANN's tiling does not cover
// is kFailedPrecondition unless the request gives a kernel schedule),
// kUnimplemented for layouts the emulator does not model, kResourceExhausted
// past a work limit, kCancelled when the cancellation flag stops a run,
// kInternal for an engine plan the emulator rejects (our bug).
#ifndef NPU_SERVER_SERVICE_EXECUTE_H_
#define NPU_SERVER_SERVICE_EXECUTE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "emulator/emulator.h"
#include "emulator/kernel_schedule.h"
#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/registry.h"
#include "server/tiling/types.h"

namespace npu::server {

// Server-side limits and the emulation pool. Defaults are the tiling_server
// flag defaults.
struct ExecuteOptions {
  // Emulation worker threads (--execute_threads). Emulations never run on
  // the gRPC threads, so GetTiling stays responsive while they run.
  int workers = 2;
  // Emulations allowed to wait for a worker (--max_execute_queue); one more
  // is refused with RESOURCE_EXHAUSTED at once.
  int max_queued = 16;
  // m * n * k of a run with numerics (--max_execute_work). The numerics and
  // the fp64 reference each cost about this many multiply-adds: 2^33 (a
  // 2048^3 problem) takes a few seconds on two cores.
  uint64_t max_numeric_macs = uint64_t{1} << 33;
  // Simulated pipe operations (--max_execute_simulated_ops). Each costs
  // about 72 bytes while the timing model runs: 3M is ~220 MB, and holds a
  // 16384^3 float16 problem on the engine's tiling (2.6M operations).
  uint64_t max_simulated_ops = 3'000'000;
  // Elements of each of A, B and C when the numerics run. The operands, C
  // and the reference's fp32 copies of A and B are all in memory at once:
  // 2^24 (4096^2) keeps that under ~350 MB for float32.
  uint64_t max_operand_elements = uint64_t{1} << 24;
  // Bytes of C returned in a response: the client's default receive limit
  // (64 MiB) less room for the rest of the response (the per-core table).
  uint64_t max_returned_c_bytes = uint64_t{60} << 20;
  // Host threads one run may use for its numerics; 0 means the machine's
  // CPU count.
  int max_threads_per_run = 0;
  // Timing figures per architecture to use instead of the calibrated ones
  // (emulator/chip.h): refitting the model (bench/calibration_fit.cc). The
  // server never sets it.
  std::map<npu::tiling::NpuArch, npu::emu::ArchTiming> arch_timing;
};

// Fixed wire limits of ExecuteRequest.
inline constexpr uint32_t kMaxExecuteThreads = 256;

// Everything a run needs, checked. `inputs` points into the request, which
// the RPC keeps alive until the call finishes.
struct PreparedExecute {
  npu::tiling::MatmulProblem problem;
  npu::tiling::ChipSpec chip;
  // What runs: a hand-written kernel's schedule when set, `plan` otherwise.
  std::optional<npu::emu::KernelSchedule> kernel;
  npu::tiling::TilingPlan plan;
  // The response's `tiling` (the plan in GetTiling's form), or its
  // `kernel_schedule` (the schedule with its defaults filled in).
  npu::tiling::v1::TilingResponse tiling;
  npu::tiling::v1::KernelSchedule kernel_schedule;
  bool explicit_tiling = false;
  npu::tiling::v1::InputSource input_source = npu::tiling::v1::INPUT_SOURCE_UNSPECIFIED;
  uint64_t seed = 0;
  const npu::tiling::v1::ExecuteInputs* inputs = nullptr;
  bool timing_only = false;
  bool return_c = false;
  int threads = 1;
  std::string id;
};

// Validates `request` and prepares its run; see the file comment.
absl::StatusOr<PreparedExecute> PrepareExecute(const npu::tiling::v1::ExecuteRequest& request,
                                               const npu::tiling::StrategyRegistry& registry,
                                               const ExecuteOptions& options);

// Rejects with kResourceExhausted a plan whose emulation would need more
// than `max_simulated_ops` pipe operations, estimated from the plan alone
// (a lower bound: base blocks times K steps, work units, Stream-K slices)
// before anything is expanded, so that a tiny block on a huge problem
// cannot exhaust memory.
absl::Status CheckEmulationWork(const npu::tiling::TilingPlan& plan,
                                const npu::tiling::MatmulProblem& problem,
                                uint64_t max_simulated_ops);

// Runs `prepared` and fills `response`. Stops with kCancelled soon after
// `cancelled` turns true.
absl::Status RunExecute(const PreparedExecute& prepared, const ExecuteOptions& options,
                        const std::atomic<bool>* cancelled,
                        npu::tiling::v1::ExecuteResponse* response);

// The operands of `inputs` as the emulator's host tensors (bytes copied).
// Assumes PrepareExecute() checked them against the problem.
npu::emu::Tensors TensorsFromProto(const npu::tiling::v1::ExecuteInputs& inputs);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_EXECUTE_H_
