// Cold decision time of the tiling engine: one full Decide() (validation,
// every strategy's capability check, the chosen strategy's tiling and the
// fit check) per iteration, with no cache in front of it. The benchmarks
// take an argument: 1 formats the trace and the plan's detail (a FULL
// answer, or one with the trace), 0 does not (what a COMPACT answer needs).
//
//   build/bin/tiling_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/golden_cases.h"

namespace npu::tiling {
namespace {

struct Workload {
  MatmulProblem problem;
  ChipSpec chip;
};

std::vector<Workload> GoldenWorkloads() {
  std::vector<Workload> out;
  for (const auto& golden : npu::testing::LoadGoldenCases(NPU_CONFORMANCE_CASES)) {
    out.push_back({golden.problem, golden.chip});
  }
  return out;
}

// A grid of odd and round sizes in every dtype and layout.
std::vector<Workload> SweepWorkloads() {
  std::vector<Workload> out;
  const ChipSpec chip = *FindPlatform(kDefaultPlatform);
  const int64_t dims[] = {1, 17, 96, 255, 1024, 1537, 4096, 16384};
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    for (int64_t m : dims) {
      for (int64_t n : dims) {
        for (int64_t k : dims) {
          MatmulProblem p;
          p.m = m;
          p.n = n;
          p.k = k;
          p.dtype_a = p.dtype_b = p.dtype_c = dtype;
          p.trans_b = (m + n) % 2 == 0;
          out.push_back({p, chip});
        }
      }
    }
  }
  return out;
}

DecideOptions OptionsOf(const benchmark::State& state) {
  DecideOptions options;
  options.explain = state.range(0) != 0;  // the trace and the plan's detail
  options.describe = options.explain;
  return options;
}

void RunDecisions(benchmark::State& state, const std::vector<Workload>& workloads) {
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const DecideOptions options = OptionsOf(state);
  size_t i = 0;
  for (auto _ : state) {
    const Workload& w = workloads[i];
    absl::StatusOr<TilingDecision> decision = registry.Decide(w.problem, w.chip, options);
    benchmark::DoNotOptimize(decision);
    if (!decision.ok()) state.SkipWithError(std::string(decision.status().message()).c_str());
    i = (i + 1) % workloads.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["shapes"] = static_cast<double>(workloads.size());
}

void BM_DecideGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = GoldenWorkloads();
  RunDecisions(state, workloads);
}
BENCHMARK(BM_DecideGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0);

void BM_DecideSweep(benchmark::State& state) {
  static const std::vector<Workload> workloads = SweepWorkloads();
  RunDecisions(state, workloads);
}
BENCHMARK(BM_DecideSweep)->ArgName("explain")->Arg(1)->Arg(0);

// Median over shapes of the per-shape decision time: every iteration times
// each shape of the set separately (kRepeats decisions, averaged) and reports
// the median and the 90th percentile across shapes as counters.
void MedianOverShapes(benchmark::State& state, const std::vector<Workload>& workloads) {
  constexpr int kRepeats = 20;
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const DecideOptions options = OptionsOf(state);
  std::vector<double> per_shape_ns(workloads.size());
  for (auto _ : state) {
    for (size_t i = 0; i < workloads.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < kRepeats; ++r) {
        absl::StatusOr<TilingDecision> decision =
            registry.Decide(workloads[i].problem, workloads[i].chip, options);
        benchmark::DoNotOptimize(decision);
      }
      const auto stop = std::chrono::steady_clock::now();
      per_shape_ns[i] = std::chrono::duration<double, std::nano>(stop - start).count() / kRepeats;
    }
  }
  std::sort(per_shape_ns.begin(), per_shape_ns.end());
  state.counters["median_ns"] = per_shape_ns[per_shape_ns.size() / 2];
  state.counters["p90_ns"] = per_shape_ns[per_shape_ns.size() * 9 / 10];
  state.counters["max_ns"] = per_shape_ns.back();
}

void BM_MedianOverGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = GoldenWorkloads();
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(20);

void BM_MedianOverSweepShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = SweepWorkloads();
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverSweepShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(3);

}  // namespace
}  // namespace npu::tiling

BENCHMARK_MAIN();
