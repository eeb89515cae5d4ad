// Emulator speed: the numerics beside OpenBLAS sgemm on the same problem, and
// the timing-only prediction of a large problem.
//
// The emulator's block products go through OpenBLAS too (emulator/gemm_kernel.h),
// one host thread per call, with the emulator's workers in parallel; the
// yardstick runs OpenBLAS on the same two threads. Run on an otherwise idle
// machine:
//   build/bin/emulator_bench
// (OPENBLAS_CORETYPE=... overrides the kernel Debian's DYNAMIC_ARCH build picks
// for both; the labels name it.)
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>
#include <vector>

#include "emulator/emulator.h"
#include "emulator/gemm_kernel.h"
#include "server/tiling/builtin_strategies.h"

namespace {

using npu::tiling::DataType;

// The machine the benchmarks were written for has two cores.
constexpr int kThreads = 2;
constexpr float kOne = 1.0f;
float scratch_ = 0.0f;

npu::tiling::MatmulProblem Square(int64_t size, DataType dtype) {
  npu::tiling::MatmulProblem problem;
  problem.m = problem.n = problem.k = size;
  problem.dtype_a = problem.dtype_b = problem.dtype_c = dtype;
  return problem;
}

npu::tiling::TilingPlan Plan(const npu::tiling::MatmulProblem& problem) {
  const npu::tiling::StrategyRegistry registry = npu::tiling::MakeBuiltinRegistry();
  return registry.Decide(problem, npu::tiling::BuiltinPlatforms().front()).value().plan;
}

void SetFlops(benchmark::State& state, double flops) {
  state.counters["GFLOPS"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Full emulation (schedule, simulated time and numerics) of an n^3 problem,
// on the process's GEMM back end (the label; NPU_EMULATOR_GEMM=openblas
// measures the OpenBLAS one on an AVX-512 host).
void BM_EmulateNumerics(benchmark::State& state, DataType dtype) {
  const int64_t n = state.range(0);
  const auto problem = Square(n, dtype);
  const auto plan = Plan(problem);
  const npu::emu::Tensors inputs = npu::emu::RandomInputs(problem, 1);
  npu::emu::EmulatorOptions options;
  options.threads = kThreads;
  for (auto _ : state) {
    auto result = npu::emu::Emulate(plan, problem, npu::tiling::BuiltinPlatforms().front(),
                                    inputs, options);
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
    benchmark::DoNotOptimize(result);
  }
  state.SetLabel(npu::emu::GemmBackendName());
  SetFlops(state, 2.0 * n * n * n);
}
BENCHMARK_CAPTURE(BM_EmulateNumerics, fp16, DataType::kFloat16)
    ->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_EmulateNumerics, fp32, DataType::kFloat32)
    ->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// The fp32 block product alone, one host thread (as each emulator worker
// runs it), on each back end.
void BM_GemmKernel(benchmark::State& state, npu::emu::GemmBackend backend) {
  const uint64_t n = state.range(0);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  for (auto _ : state) {
    npu::emu::GemmAccumulateWith(backend, n, n, n, a.data(), n, b.data(), n, c.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetLabel(npu::emu::GemmBackendName(backend));
  SetFlops(state, 2.0 * n * n * n);
}
BENCHMARK_CAPTURE(BM_GemmKernel, avx512, npu::emu::GemmBackend::kAvx512)
    ->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_GemmKernel, openblas, npu::emu::GemmBackend::kOpenBlas)
    ->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// The yardstick: OpenBLAS sgemm, row-major, on the same host threads.
void BM_OpenBlasSgemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  // Warm the emulator's one-thread setting first, then take both threads
  // for this run and give them back after it.
  npu::emu::GemmAccumulate(1, 1, 1, &kOne, 1, &kOne, 1, &scratch_, 1);
  openblas_set_num_threads(kThreads);
  std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n, 0.0f);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                n, 0.0f, c.data(), n);
    benchmark::ClobberMemory();
  }
  openblas_set_num_threads(1);
  state.SetLabel(npu::emu::GemmBackendName(npu::emu::GemmBackend::kOpenBlas));
  SetFlops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_OpenBlasSgemm)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// Timing-only prediction: simulated time without the numerics.
void BM_EmulateTimingOnly(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto problem = Square(n, DataType::kFloat16);
  const auto plan = Plan(problem);
  npu::emu::EmulatorOptions options;
  options.timing_only = true;
  uint64_t cycles = 0;
  for (auto _ : state) {
    auto result = npu::emu::Emulate(plan, problem, npu::tiling::BuiltinPlatforms().front(), {},
                                    options);
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
    cycles = result->stats.total_cycles;
  }
  state.counters["predicted_cycles"] = static_cast<double>(cycles);
}
BENCHMARK(BM_EmulateTimingOnly)->Arg(2048)->Arg(8192)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
