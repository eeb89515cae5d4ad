// Cold decision time of the tiling engine: one full Decide() (validation,
// every strategy's capability check, the chosen strategy's tiling and the
// fit check) per iteration, with no cache in front of it. The benchmarks
// take an argument: 1 formats the trace and the plan's detail (a FULL
// answer, or one with the trace), 0 does not (what a COMPACT answer needs).
// MatMulV3 runs on the golden shapes and a grid; BatchMatMulV3 and
// FusedMatMul on problems that reach each of their batched strategies;
// QuantBatchMatmulV3 on the golden shapes CANN tiles (its parse and checks,
// the walk over its seven strategies and the chosen one's tiling);
// TransposeBatchMatMul and TransposeQuantBatchMatMul on theirs; GroupedMatmul
// on the golden cases CANN tiles, all paths together and each path alone.
//
//   build/bin/tiling_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/tiling/builtin_strategies.h"
#include "tests/testing/gmm_golden_cases.h"
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

MatmulProblem BatchedProblem(MatmulOp op, int64_t m, int64_t n, int64_t k,
                             std::vector<int64_t> batch_a, std::vector<int64_t> batch_b,
                             DataType dtype = DataType::kFloat16) {
  MatmulProblem p;
  p.op = op;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = p.dtype_c = p.dtype_bias = dtype;
  p.batch.a = std::move(batch_a);
  p.batch.b = std::move(batch_b);
  return p;
}

// BatchMatMulV3 problems that reach each of its batched strategies the
// engine can tile (vector outer products, Stream-K, merged and iterated
// batches, A / B resident, the swizzled fallback), and a grid of equal
// batches.
std::vector<Workload> BatchMatMulWorkloads() {
  const ChipSpec chip = *FindPlatform(kDefaultPlatform);
  constexpr MatmulOp kOp = MatmulOp::kBatchMatMulV3;
  std::vector<Workload> out = {
      {BatchedProblem(kOp, 20, 300, 1, {1000}, {1000}), chip},
      {BatchedProblem(kOp, 1536, 200, 16384, {2}, {2}), chip},
      {BatchedProblem(kOp, 4, 16, 64, {128}, {128}), chip},
      {BatchedProblem(kOp, 64, 64, 64, {40, 40}, {40, 40}), chip},
      {BatchedProblem(kOp, 64, 2000, 64, {1}, {300}), chip},
      {BatchedProblem(kOp, 3000, 100, 512, {4, 300}, {}), chip},
      {BatchedProblem(kOp, 100, 300, 4096, {3}, {3}, DataType::kFloat32), chip},
  };
  for (int64_t batch : {2, 48, 1200}) {
    for (int64_t mn : {16, 150, 1024}) {
      for (int64_t k : {32, 700, 8192}) {
        out.push_back({BatchedProblem(kOp, mn, mn + 32, k, {batch}, {batch}), chip});
      }
    }
  }
  return out;
}

// FusedMatMul problems on its batched strategies, with each epilogue.
std::vector<Workload> FusedMatMulWorkloads() {
  const ChipSpec chip = *FindPlatform(kDefaultPlatform);
  constexpr MatmulOp kOp = MatmulOp::kFusedMatMul;
  std::vector<Workload> out;
  const FusedOp ops[] = {FusedOp::kNone, FusedOp::kRelu, FusedOp::kAdd, FusedOp::kMul};
  for (FusedOp op : ops) {
    for (MatmulProblem p : {BatchedProblem(kOp, 1536, 200, 16384, {2}, {2}),
                            BatchedProblem(kOp, 8, 64, 64, {256}, {256}),
                            BatchedProblem(kOp, 32, 32, 32, {1200}, {1200}),
                            BatchedProblem(kOp, 16, 4096, 16, {1}, {1}),
                            BatchedProblem(kOp, 300, 500, 700, {3}, {3})}) {
      p.fused.op = op;
      out.push_back({p, chip});
    }
  }
  return out;
}

// A GE dtype name of the quant goldens ("DT_INT8", "DT_BF16"...).
DataType QuantDtype(const nlohmann::json& dtype) {
  const std::string name = dtype.at("ge").get<std::string>();
  static const std::pair<const char*, DataType> kNames[] = {
      {"DT_FLOAT16", DataType::kFloat16},
      {"DT_BF16", DataType::kBFloat16},
      {"DT_FLOAT", DataType::kFloat32},
      {"DT_INT8", DataType::kInt8},
      {"DT_INT4", DataType::kInt4},
      {"DT_FLOAT8_E4M3FN", DataType::kFloat8E4M3},
      {"DT_FLOAT8_E5M2", DataType::kFloat8E5M2},
      {"DT_HIFLOAT8", DataType::kHiFloat8},
      {"DT_FLOAT4_E2M1", DataType::kFloat4E2M1},
      {"DT_FLOAT8_E8M0", DataType::kFloat8E8M0},
      {"DT_INT32", DataType::kInt32},
      {"DT_INT64", DataType::kInt64},
      {"DT_UINT64", DataType::kUint64}};
  for (const auto& [ge, dtype_value] : kNames) {
    if (name == ge) return dtype_value;
  }
  return DataType::kFloat16;
}

std::vector<int64_t> LeadingDims(const nlohmann::json& shape) {
  std::vector<int64_t> dims = shape.get<std::vector<int64_t>>();
  dims.resize(dims.size() >= 2 ? dims.size() - 2 : 0);
  return dims;
}

// QuantBatchMatmulV3's golden cases CANN tiles (tests/data/cann950_quant).
std::vector<Workload> QuantWorkloads() {
  std::ifstream in(NPU_CONFORMANCE_QUANT_CASES);
  const nlohmann::json root = nlohmann::json::parse(in);
  std::vector<Workload> out;
  for (const nlohmann::json& c : root.at("cases")) {
    if (c.at("expected").at("status") != "GRAPH_SUCCESS") continue;
    const nlohmann::json& in_ = c.at("inputs");
    const nlohmann::json& shapes = in_.at("shapes");
    MatmulProblem p;
    p.op = MatmulOp::kQuantBatchMatmulV3;
    p.m = in_.at("m");
    p.n = in_.at("n");
    p.k = in_.at("k");
    p.trans_a = in_.at("trans_a");
    p.trans_b = in_.at("trans_b");
    p.dtype_a = QuantDtype(in_.at("dtype_x1"));
    p.dtype_b = QuantDtype(in_.at("dtype_x2"));
    p.dtype_c = QuantDtype(in_.at("dtype_y"));
    p.batch.a = LeadingDims(shapes.at("x1").at("origin"));
    p.batch.b = LeadingDims(shapes.at("x2").at("origin"));
    p.batch.c = LeadingDims(shapes.at("y"));
    if (in_.at("format_x2") == "FRACTAL_NZ") {
      p.format_b = Format::kFractalNz;
      p.storage_shape_b = shapes.at("x2").at("storage").get<std::vector<int64_t>>();
    }
    const auto tensor = [&](const char* shape, const char* dtype, QuantTensorSpec& out_spec) {
      out_spec.present = true;
      out_spec.dtype = QuantDtype(in_.at(dtype));
      out_spec.shape = shapes.at(shape).get<std::vector<int64_t>>();
    };
    tensor("scale", "dtype_scale", p.quant.scale);
    if (in_.at("has_pertoken_scale"))
      tensor("pertoken_scale", "dtype_pertoken_scale", p.quant.pertoken);
    if (in_.at("has_offset")) tensor("offset", "dtype_offset", p.quant.offset);
    if (in_.at("has_bias")) {
      p.has_bias = true;
      p.dtype_bias = QuantDtype(in_.at("dtype_bias"));
      p.quant.bias_shape = shapes.at("bias").get<std::vector<int64_t>>();
    }
    const int64_t group = in_.at("attrs").at("group_size");
    p.quant.group_size_k = group & 0xFFFF;
    p.quant.group_size_n = (group >> 16) & 0xFFFF;
    p.quant.group_size_m = (group >> 32) & 0xFFFF;
    p.deterministic_level = in_.at("deterministic_level");
    ChipSpec chip = *FindPlatform(kDefaultPlatform);
    const nlohmann::json& platform = in_.at("platform");
    chip.aic_num = platform.at("aic_num");
    chip.aiv_num = platform.at("aiv_num");
    chip.ub_bytes = platform.at("ub");
    out.push_back({p, chip});
  }
  return out;
}

// WeightQuantBatchMatmulV2's golden cases CANN tiles (tests/data/cann950_wqbmm)
// on their harness platform.
std::vector<Workload> WeightQuantWorkloads() {
  std::ifstream in(NPU_CONFORMANCE_WQBMM_CASES);
  const nlohmann::json root = nlohmann::json::parse(in);
  std::vector<Workload> out;
  for (const nlohmann::json& c : root.at("cases")) {
    if (c.at("expected").at("status") != "GRAPH_SUCCESS") continue;
    const nlohmann::json& in_ = c.at("inputs");
    const nlohmann::json& shapes = in_.at("shapes");
    MatmulProblem p;
    p.op = MatmulOp::kWeightQuantBatchMatmulV2;
    p.m = in_.at("m");
    p.n = in_.at("n");
    p.k = in_.at("k");
    p.trans_a = in_.at("trans_a");
    p.trans_b = in_.at("trans_b");
    p.dtype_a = QuantDtype(in_.at("dtype_x"));
    p.dtype_b = QuantDtype(in_.at("dtype_weight"));
    p.dtype_c = QuantDtype(in_.at("dtype_y"));
    if (in_.at("format_weight") == "FRACTAL_NZ") {
      p.format_b = Format::kFractalNz;
      p.storage_shape_b = shapes.at("weight").at("storage").get<std::vector<int64_t>>();
    }
    const auto tensor = [&](const char* shape, const char* dtype, QuantTensorSpec& out_spec) {
      out_spec.present = true;
      out_spec.dtype = QuantDtype(in_.at(dtype));
      out_spec.shape = shapes.at(shape).get<std::vector<int64_t>>();
    };
    tensor("antiquant_scale", "dtype_antiquant_scale", p.quant.antiquant_scale);
    if (in_.at("has_antiquant_offset")) {
      tensor("antiquant_offset", "dtype_antiquant_offset", p.quant.antiquant_offset);
    }
    if (in_.at("has_bias")) {
      p.has_bias = true;
      p.dtype_bias = QuantDtype(in_.at("dtype_bias"));
      p.quant.bias_shape = shapes.at("bias").get<std::vector<int64_t>>();
    }
    p.quant.group_size = in_.at("attrs").at("group_size");
    ChipSpec chip = *FindPlatform(kDefaultPlatform);
    const nlohmann::json& platform = in_.at("platform");
    chip.aic_num = platform.at("aic_num");
    chip.aiv_num = platform.at("aiv_num");
    chip.l1_bytes = platform.at("l1");
    chip.l0c_bytes = platform.at("l0c");
    chip.ub_bytes = platform.at("ub");
    out.push_back({p, chip});
  }
  return out;
}

// TransposeBatchMatMul's and TransposeQuantBatchMatMul's golden cases CANN
// tiles (tests/data/cann950_tbmm).
std::vector<Workload> TransposeWorkloads() {
  std::vector<Workload> out;
  for (const auto& golden : npu::testing::LoadDecodedCases(NPU_CONFORMANCE_TBMM_CASES)) {
    if (golden.expect_refusal || !golden.inexpressible.empty()) continue;
    out.push_back({golden.problem, golden.chip});
  }
  return out;
}

// GroupedMatmul's golden cases CANN tiles (tests/data/cann950_gmm), on the
// chip each case's path reads; `path` "" takes every path.
std::vector<Workload> GroupedWorkloads(const std::string& path) {
  std::vector<Workload> out;
  for (const auto& golden : npu::testing::LoadGmmGoldenCases(NPU_CONFORMANCE_GMM_CASES)) {
    if (!path.empty() && golden.path != path) continue;
    if (golden.expected.value("status", "") != "GRAPH_SUCCESS") continue;
    out.push_back({golden.problem, golden.chip});
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

void BM_DecideBatchMatMul(benchmark::State& state) {
  static const std::vector<Workload> workloads = BatchMatMulWorkloads();
  RunDecisions(state, workloads);
}
BENCHMARK(BM_DecideBatchMatMul)->ArgName("explain")->Arg(1)->Arg(0);

void BM_DecideFusedMatMul(benchmark::State& state) {
  static const std::vector<Workload> workloads = FusedMatMulWorkloads();
  RunDecisions(state, workloads);
}
BENCHMARK(BM_DecideFusedMatMul)->ArgName("explain")->Arg(1)->Arg(0);

// Median over shapes of the per-shape decision time. Each iteration times
// each shape of the set separately (kRepeats decisions, averaged); a shape's
// time is the median of its iterations (robust to a preempted iteration on
// a shared host), and the counters report the median, the 90th percentile
// and the maximum across shapes.
void MedianOverShapes(benchmark::State& state, const std::vector<Workload>& workloads) {
  constexpr int kRepeats = 20;
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const DecideOptions options = OptionsOf(state);
  std::vector<std::vector<double>> samples(workloads.size());
  for (auto _ : state) {
    for (size_t i = 0; i < workloads.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < kRepeats; ++r) {
        absl::StatusOr<TilingDecision> decision =
            registry.Decide(workloads[i].problem, workloads[i].chip, options);
        benchmark::DoNotOptimize(decision);
      }
      const auto stop = std::chrono::steady_clock::now();
      samples[i].push_back(std::chrono::duration<double, std::nano>(stop - start).count() /
                           kRepeats);
    }
  }
  std::vector<double> per_shape_ns;
  for (std::vector<double>& times : samples) {
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    per_shape_ns.push_back(times[times.size() / 2]);
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

void BM_MedianOverBatchMatMulShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = BatchMatMulWorkloads();
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverBatchMatMulShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(20);

void BM_MedianOverFusedMatMulShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = FusedMatMulWorkloads();
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverFusedMatMulShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(20);

void BM_MedianOverQuantGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = QuantWorkloads();
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverQuantGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(20);

void BM_MedianOverWeightQuantGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = WeightQuantWorkloads();
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverWeightQuantGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(20);
void BM_DecideTransposeGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = TransposeWorkloads();
  RunDecisions(state, workloads);
}
BENCHMARK(BM_DecideTransposeGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0);

void BM_MedianOverTransposeGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = TransposeWorkloads();
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverTransposeGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(20);

void BM_DecideGroupedGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = GroupedWorkloads("");
  RunDecisions(state, workloads);
}
BENCHMARK(BM_DecideGroupedGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0);

void BM_MedianOverGroupedGoldenShapes(benchmark::State& state) {
  static const std::vector<Workload> workloads = GroupedWorkloads("");
  MedianOverShapes(state, workloads);
}
BENCHMARK(BM_MedianOverGroupedGoldenShapes)->ArgName("explain")->Arg(1)->Arg(0)->Iterations(20);

// Each of the three paths alone: their decisions differ in cost (the quant
// and weight-quant paths fill 440- and 448-word structs).
void BM_MedianOverGroupedPath(benchmark::State& state, const char* path) {
  const std::vector<Workload> workloads = GroupedWorkloads(path);
  MedianOverShapes(state, workloads);
}
BENCHMARK_CAPTURE(BM_MedianOverGroupedPath, no_quant, "no_quant")
    ->ArgName("explain")->Arg(0)->Iterations(20);
BENCHMARK_CAPTURE(BM_MedianOverGroupedPath, quant, "quant")
    ->ArgName("explain")->Arg(0)->Iterations(20);
BENCHMARK_CAPTURE(BM_MedianOverGroupedPath, weight_quant, "weight_quant")
    ->ArgName("explain")->Arg(0)->Iterations(20);

}  // namespace
}  // namespace npu::tiling

BENCHMARK_MAIN();
