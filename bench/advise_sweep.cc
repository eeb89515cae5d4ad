// ADVISE over a sweep of problems: how often the advisor's best tiling
// differs from CANN's, what it is predicted to gain, which variant wins, how
// separate GM read / write bandwidth changes the ranking, and whether every
// recommended tiling passed the emulator's numerics check.
//
// Problems: the golden shapes (tests/data/cann950/cases.json, on their own
// platforms), the examples of the seeds documents, and a grid over M, N and
// K from 1 to 16383 with odd sizes in float16, bfloat16 and float32; and
// QuantBatchMatmulV3 problems (the operator page's examples and W8A8 /
// MXFP8 / MXFP4 layers of Llama-70B, DeepSeek-V3 and Qwen3 at decode and
// prefill row counts), reported in a section of their own. Each is
// advised with timing-only emulation and a per-problem budget; problems run
// in parallel on host threads, and the report lists them in a fixed order,
// so it is the same for any thread count unless a budget runs out (the
// report counts those).
//
//   advise_sweep [--out FILE.md] [--csv FILE.csv] [--threads N] [--budget_ms MS]
//                [--cases cases.json] [--grid 1,17,255,...] [--float 0|1] [--quant 0|1]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "server/advisor/advisor.h"
#include "tests/testing/golden_cases.h"
#include "tests/testing/kernel_schedules.h"

namespace {

using npu::advisor::Advice;
using npu::advisor::AdviseOptions;
using npu::advisor::Candidate;
using npu::advisor::NumericsCheck;
using npu::advisor::VariantKind;
using npu::tiling::ChipSpec;
using npu::tiling::DataType;
using npu::tiling::MatmulProblem;

struct SweepProblem {
  std::string name;
  std::string source;  // "golden", "seeds", "grid" or "quant"
  std::string family;  // quant: "examples", "W8A8 int8", "MXFP8", "MXFP4"
  MatmulProblem problem;
  ChipSpec chip;
};

struct Outcome {
  bool ok = false;
  std::string error;
  std::string cann_name;
  std::string best_name;
  VariantKind best_kind = VariantKind::kCannStrategy;
  bool best_is_cann = true;
  double gain = 1;  // CANN's predicted cycles / the best's
  double cann_us = 0, best_us = 0;
  std::string best_bound, cann_bound;
  uint32_t candidates = 0;
  std::map<VariantKind, bool> offered;  // variant kinds among the candidates
  bool split_timed = false;
  bool split_changes_best = false;
  uint32_t split_rank_changes = 0;
  double split_cann_slowdown = 0;  // CANN's cycles under the split / default model; 0: not re-timed
  NumericsCheck numerics = NumericsCheck::kNotChecked;
  NumericsCheck cann_numerics = NumericsCheck::kNotChecked;
  bool shrunk = false;
  std::string verified;
  bool budget_exhausted = false;
  uint32_t rejected_variants = 0;
  uint32_t emulations = 0;
  double ms = 0;
};

MatmulProblem Problem(int64_t m, int64_t n, int64_t k, DataType dtype) {
  MatmulProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype_a = p.dtype_b = p.dtype_c = p.dtype_bias = dtype;
  return p;
}

ChipSpec Chip(uint32_t aic) {
  ChipSpec chip = npu::tiling::BuiltinPlatforms().front();
  if (aic != chip.aic_num) {
    chip.name = absl::StrCat(chip.name, "-", aic, "c");
    chip.aic_num = aic;
    chip.aiv_num = 2 * aic;
  }
  return chip;
}

std::string Shape(const MatmulProblem& p) {
  return absl::StrCat(p.m, "x", p.n, "x", p.k, " ",
                      std::string(npu::tiling::DataTypeName(p.dtype_a)), p.trans_a ? " tA" : "",
                      p.trans_b ? " tB" : "", p.has_bias ? " bias" : "",
                      p.format_b == npu::tiling::Format::kFractalNz ? " nzB" : "");
}

// The examples the seeds documents reason about, each with the weakness it
// illustrates.
std::vector<SweepProblem> SeedProblems() {
  std::vector<SweepProblem> out;
  auto add = [&](std::string name, MatmulProblem p, uint32_t aic) {
    out.push_back({std::move(name), "seeds", "", std::move(p), Chip(aic)});
  };
  // seeds/000 section 1: 4 tiles keep 4 of 24 cores busy without Stream-K.
  add("seeds/000 s1 Stream-K headline", Problem(512, 512, 16384, DataType::kFloat16), 24);
  add("seeds/000 s1 Stream-K headline bf16", Problem(512, 512, 16384, DataType::kBFloat16), 24);
  // seeds/001 2.4.0: [256, 8192] x [8192, 256], one tile on 32 cores.
  add("seeds/001 2.4.0 one tile, long K", Problem(256, 256, 8192, DataType::kFloat16), 32);
  // seeds/001 2.2 / 6 item 6: fp16 / bf16 M == 1 or N == 1 stays on the cube.
  add("seeds/001 6.6 fp16 GEMV", Problem(1, 4096, 4096, DataType::kFloat16), 32);
  add("seeds/001 6.6 bf16 GEMV", Problem(1, 4096, 4096, DataType::kBFloat16), 32);
  add("seeds/001 6.6 fp16 column", Problem(4096, 1, 4096, DataType::kFloat16), 32);
  add("seeds/001 6.6 bf16 short GEMV", Problem(1, 1000, 64, DataType::kBFloat16), 32);
  // seeds/001 6 item 3: A a little larger than 3/4 of L1.
  add("seeds/001 6.3 A just over 3/4 L1", Problem(128, 9000, 2048, DataType::kFloat16), 32);
  add("seeds/001 6.3 B just over 3/4 L1", Problem(9000, 200, 1200, DataType::kFloat16), 32);
  // seeds/001 6 item 2: operands beyond L2, fixed window of 4.
  add("seeds/001 6.2 operands beyond L2", Problem(16384, 8192, 1024, DataType::kFloat16), 32);
  add("seeds/001 6.2 operands beyond L2 (2)", Problem(16384, 16384, 2048, DataType::kFloat16), 32);
  // seeds/001 6 item 5: output-heavy, writes compete with reads.
  add("seeds/001 6.5 write-heavy", Problem(4096, 4096, 32, DataType::kFloat16), 32);
  // seeds/001 3.2 / 6 item 1: the block heuristic on a multi-round shape.
  add("seeds/001 6.1 block heuristic", Problem(4097, 777, 1999, DataType::kFloat16), 32);
  // issue 4: a large square fp16 problem is cube bound near peak.
  add("issue 4 large square", Problem(8192, 8192, 8192, DataType::kFloat16), 32);
  return out;
}

// QuantBatchMatmulV3 W8A8: int8 x1 and x2 (x2 stored [n, k]), a float32
// scale per channel and per token, bfloat16 y.
MatmulProblem W8A8(int64_t m, int64_t n, int64_t k) {
  MatmulProblem p = npu::testing::W8A8Problem(m, n, k);
  p.trans_b = true;
  p.dtype_c = DataType::kBFloat16;
  return p;
}

// QuantBatchMatmulV3 MX: `dtype` x1 and x2 (x2 stored [n, k]), e8m0 scales
// per 32 K values, bfloat16 y.
MatmulProblem Mx(int64_t m, int64_t n, int64_t k, DataType dtype) {
  MatmulProblem p = npu::testing::MxFp4Problem(m, n, k);
  p.dtype_a = p.dtype_b = dtype;
  return p;
}

std::string QuantShape(const MatmulProblem& p, const std::string& family) {
  return absl::StrCat(family, " ", p.m, "x", p.n, "x", p.k);
}

// The operator page's examples, then W8A8, MXFP8 and MXFP4 layers (N, K)
// of Llama-70B (8192 x 8192, 28672 x 8192, 8192 x 28672), DeepSeek-V3
// (18432 x 7168, 7168 x 18432, 7168 x 2048) and Qwen3-32B (25600 x 5120,
// 5120 x 25600) at decode (M 1 to 128) and prefill (M 2048, 8192) rows.
std::vector<SweepProblem> QuantProblems() {
  std::vector<SweepProblem> out;
  auto add = [&](const std::string& family, MatmulProblem p) {
    out.push_back({QuantShape(p, family), "quant", family, std::move(p), Chip(32)});
  };
  // server/tiling/operators/quant_batch_matmul_v3.md.
  MatmulProblem per_token = npu::testing::W8A8Problem(256, 512, 1024);
  per_token.dtype_c = DataType::kBFloat16;
  add("examples", per_token);
  add("examples", Mx(4096, 7168, 8192, DataType::kFloat8E4M3));
  const std::vector<std::pair<int64_t, int64_t>> layers = {
      {8192, 8192},  {28672, 8192}, {8192, 28672}, {18432, 7168},
      {7168, 18432}, {7168, 2048},  {25600, 5120}, {5120, 25600}};
  for (int64_t m : {1, 16, 128, 2048, 8192}) {
    for (const auto& [n, k] : layers) {
      add("W8A8 int8", W8A8(m, n, k));
      add("MXFP8", Mx(m, n, k, DataType::kFloat8E4M3));
      add("MXFP4", Mx(m, n, k, DataType::kFloat4E2M1));
    }
  }
  return out;
}

std::vector<SweepProblem> GridProblems(const std::vector<int64_t>& sizes) {
  std::vector<SweepProblem> out;
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}) {
    for (int64_t m : sizes) {
      for (int64_t n : sizes) {
        for (int64_t k : sizes) {
          MatmulProblem p = Problem(m, n, k, dtype);
          out.push_back({Shape(p), "grid", "", p, Chip(32)});
        }
      }
    }
  }
  return out;
}

Outcome Run(const SweepProblem& sweep, const AdviseOptions& options) {
  Outcome out;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Advice> advice = npu::advisor::Advise(sweep.problem, sweep.chip, options);
  out.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!advice.ok()) {
    out.error = std::string(advice.status().ToString());
    return out;
  }
  out.ok = true;
  const Candidate& best = advice->candidates.front();
  const Candidate* cann = nullptr;
  for (const Candidate& c : advice->candidates) {
    if (c.is_cann_choice) cann = &c;
    out.offered[c.kind] = true;
  }
  out.cann_name = cann->name;
  out.cann_bound = cann->bound;
  out.best_name = best.name;
  out.best_kind = best.kind;
  out.best_is_cann = best.is_cann_choice;
  out.best_bound = best.bound;
  out.gain = best.speedup_vs_cann;
  out.cann_us = cann->predicted_us;
  out.best_us = best.predicted_us;
  out.candidates = static_cast<uint32_t>(advice->candidates.size());
  out.split_timed = advice->split_rw_timed;
  out.split_changes_best = advice->split_rw_changes_best;
  out.split_rank_changes = advice->split_rw_rank_changes;
  // CANN's choice is only re-timed when it is among the best candidates.
  if (advice->split_rw_timed && cann->split_rw_cycles > 0 && cann->predicted_cycles > 0) {
    out.split_cann_slowdown =
        static_cast<double>(cann->split_rw_cycles) / static_cast<double>(cann->predicted_cycles);
  }
  out.numerics = best.numerics;
  out.cann_numerics = cann->numerics;
  out.shrunk = advice->recommendation_check.shrunk;
  out.verified = absl::StrCat(advice->recommendation_check.m, "x", advice->recommendation_check.n,
                              "x", advice->recommendation_check.k);
  if (best.numerics != NumericsCheck::kPassed) out.verified = best.numerics_detail;
  out.budget_exhausted = advice->budget_exhausted;
  out.rejected_variants = advice->rejected_variants;
  out.emulations = advice->emulations;
  return out;
}

double GeoMean(const std::vector<double>& values) {
  if (values.empty()) return 1;
  double sum = 0;
  for (double v : values) sum += std::log(v);
  return std::exp(sum / static_cast<double>(values.size()));
}

std::string Pct(size_t part, size_t whole) {
  return whole == 0 ? "-" : absl::StrFormat("%.1f%%", 100.0 * part / whole);
}

std::string X(double v) { return absl::StrFormat("%.3fx", v); }

// Problems whose CANN plan is predicted to take at least this long: kernel
// launch and scalar set-up (microseconds on the device, outside the timing
// model) cannot hide their gains.
constexpr double kLongUs = 10;
constexpr const char* kLongKey = "CANN's choice >= 10 us";
constexpr const char* kQuantAll = "quant: all";

const char* kKindNames[] = {"another CANN strategy", "(1) block search", "(2) SWAT window",
                            "(3) L1 partial residency", "(4) AIV dot product"};

struct SweepFlags {
  std::string out_path = "bench/ADVISE_SWEEP.md";
  std::string csv_path;
  std::string cases_path = NPU_CONFORMANCE_CASES;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Generous: the slowest problem takes a few seconds on one core, and a
  // budget that runs out would make the report depend on the host.
  double budget_ms = 60000;
  std::vector<int64_t> sizes = {1, 17, 255, 1001, 4097, 16383};
  bool quant = true;      // the QuantBatchMatmulV3 problems
  bool float_ops = true;  // the golden, seeds and grid problems
};

// Reads the flags; false (after saying why) on an unknown one.
bool ParseFlags(int argc, char** argv, SweepFlags& flags) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--out") {
      flags.out_path = value;
    } else if (flag == "--csv") {
      flags.csv_path = value;
    } else if (flag == "--threads") {
      flags.threads = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--budget_ms") {
      flags.budget_ms = std::atof(value.c_str());
    } else if (flag == "--cases") {
      flags.cases_path = value;
    } else if (flag == "--float") {
      flags.float_ops = value != "0";
    } else if (flag == "--quant") {
      flags.quant = value != "0";
    } else if (flag == "--grid") {
      flags.sizes.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        flags.sizes.push_back(std::atoll(std::string(part).c_str()));
      }
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return false;
    }
  }
  return true;
}

// The golden shapes, the seeds examples and the grid, in report order.
std::vector<SweepProblem> CollectProblems(const SweepFlags& flags) {
  std::vector<SweepProblem> problems;
  if (flags.float_ops) {
    for (const npu::testing::GoldenCase& golden : npu::testing::LoadGoldenCases(flags.cases_path)) {
      problems.push_back({golden.name, "golden", "", golden.problem, golden.chip});
    }
    for (SweepProblem& p : SeedProblems()) problems.push_back(std::move(p));
    for (SweepProblem& p : GridProblems(flags.sizes)) problems.push_back(std::move(p));
  }
  if (flags.quant) {
    for (SweepProblem& p : QuantProblems()) problems.push_back(std::move(p));
  }
  return problems;
}

// Advises every problem on `threads` host threads; outcomes in problem order.
std::vector<Outcome> RunAll(const std::vector<SweepProblem>& problems, const AdviseOptions& options,
                            int threads) {
  std::vector<Outcome> outcomes(problems.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < problems.size(); i = next++) {
        outcomes[i] = Run(problems[i], options);
        const size_t finished = ++done;
        if (finished % 50 == 0) {
          std::fprintf(stderr, "%zu / %zu problems\n", finished, problems.size());
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return outcomes;
}

// Aggregates of one group of problems (overall, per source, per dtype).
struct Group {
  size_t problems = 0, differs = 0, passed = 0, shrunk = 0;
  std::vector<double> gains;
};

// Aggregates of the whole sweep.
struct Totals {
  std::map<std::string, Group> groups;
  size_t errors = 0, budget_hits = 0, rejected_variants = 0, numerics_failed = 0, split_timed = 0,
         split_changes = 0, split_rank_changed = 0;
  uint64_t emulations = 0;
  double slowest_ms = 0;
  std::string slowest;
  std::vector<double> split_slowdowns;
  std::map<VariantKind, size_t> wins, offered;
  std::map<VariantKind, std::vector<double>> win_gains;
  std::vector<size_t> order;  // problems advised without error
  // "Another CANN strategy" is offered wherever a second strategy is capable.
  size_t other_strategy_offered = 0;
  std::vector<size_t> float_order;  // the problems of the float tables
  // QuantBatchMatmulV3: the problems, CANN's choice's numerics, the
  // variants among the candidates and the best's kinds.
  std::vector<size_t> quant_order;
  size_t cann_checked = 0, cann_failed = 0;
  std::map<VariantKind, size_t> quant_offered, quant_wins;
};

Totals Aggregate(const std::vector<SweepProblem>& problems, const std::vector<Outcome>& outcomes) {
  Totals t;
  for (size_t i = 0; i < problems.size(); ++i) {
    const Outcome& o = outcomes[i];
    if (!o.ok) {
      ++t.errors;
      continue;
    }
    t.order.push_back(i);
    const bool quant = problems[i].source == "quant";
    const std::string dtype(npu::tiling::DataTypeName(problems[i].problem.dtype_a));
    // The quantized problems are summed on their own (QuantSection()).
    std::vector<std::string> group_keys = {"all", absl::StrCat("source: ", problems[i].source),
                                           absl::StrCat("dtype: ", dtype)};
    if (o.cann_us >= kLongUs) group_keys.push_back(kLongKey);
    if (quant) {
      group_keys = {kQuantAll, absl::StrCat("quant: ", problems[i].family)};
      if (problems[i].family != "examples") {
        group_keys.push_back(problems[i].problem.m <= 128 ? "quant: decode (M <= 128)"
                                                          : "quant: prefill (M >= 2048)");
      }
      t.cann_checked += o.cann_numerics == NumericsCheck::kPassed ? 1 : 0;
      t.cann_failed += o.cann_numerics == NumericsCheck::kFailed ? 1 : 0;
    }
    for (const std::string& key : group_keys) {
      Group& g = t.groups[key];
      ++g.problems;
      g.differs += o.best_is_cann ? 0 : 1;
      g.passed += o.numerics == NumericsCheck::kPassed ? 1 : 0;
      g.shrunk += o.shrunk ? 1 : 0;
      g.gains.push_back(o.gain);
    }
    t.budget_hits += o.budget_exhausted ? 1 : 0;
    t.rejected_variants += o.rejected_variants;
    t.numerics_failed += o.numerics == NumericsCheck::kPassed ? 0 : 1;
    t.emulations += o.emulations;
    if (o.ms > t.slowest_ms) {
      t.slowest_ms = o.ms;
      t.slowest = problems[i].name;
    }
    if (o.split_timed) {
      ++t.split_timed;
      t.split_changes += o.split_changes_best ? 1 : 0;
      t.split_rank_changed += o.split_rank_changes > 0 ? 1 : 0;
      if (o.split_cann_slowdown > 0) t.split_slowdowns.push_back(o.split_cann_slowdown);
    }
    if (quant) {
      t.quant_order.push_back(i);
      for (const auto& [kind, present] : o.offered) {
        if (present && kind != VariantKind::kCannStrategy) ++t.quant_offered[kind];
      }
      if (!o.best_is_cann) ++t.quant_wins[o.best_kind];
      continue;
    }
    for (const auto& [kind, present] : o.offered) {
      if (present && kind != VariantKind::kCannStrategy) ++t.offered[kind];
    }
    if (!o.best_is_cann) {
      ++t.wins[o.best_kind];
      t.win_gains[o.best_kind].push_back(o.gain);
    }
    t.float_order.push_back(i);
  }
  for (size_t i : t.float_order) {
    t.other_strategy_offered += outcomes[i].candidates > 1 ? 1 : 0;
  }
  return t;
}

// The summary columns, one row per group.
constexpr const char* kSummaryHeader =
    "| Problems | Best differs from CANN | ... by 2% or more | Geo-mean gain | Geo-mean gain "
    "where it differs | Worst-case gain (smallest where it differs) | Best gain | "
    "Recommendation passed numerics |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- |\n";

void WriteSummaryRow(std::ostringstream& md, const std::string& key, const Group& g) {
  if (g.problems == 0) return;
  std::vector<double> differing;
  size_t clear = 0;  // predicted 2% or more faster: beyond the model's tail-round noise
  for (double v : g.gains) {
    if (v > 1) differing.push_back(v);
    clear += v >= 1.02 ? 1 : 0;
  }
  md << "| " << key << " (" << g.problems << ") | " << g.differs << " ("
     << Pct(g.differs, g.problems) << ") | " << clear << " (" << Pct(clear, g.problems) << ") | "
     << X(GeoMean(g.gains)) << " | " << X(GeoMean(differing)) << " | "
     << X(*std::min_element(g.gains.begin(), g.gains.end())) << " ("
     << (differing.empty() ? "-" : X(*std::min_element(differing.begin(), differing.end())))
     << ") | " << X(*std::max_element(g.gains.begin(), g.gains.end())) << " | " << g.passed << " / "
     << g.problems << " (" << g.shrunk << " on a shrunken copy) |\n";
}

void WriteSummary(std::ostringstream& md, Totals& t) {
  md << "## Summary\n\n" << kSummaryHeader;
  std::vector<std::string> keys = {"all",
                                   "source: golden",
                                   "source: seeds",
                                   "source: grid",
                                   "dtype: float16",
                                   "dtype: bfloat16",
                                   "dtype: float32",
                                   kLongKey};
  for (const std::string& key : keys) WriteSummaryRow(md, key, t.groups[key]);
  md << "\n";
}

const char* NumericsWord(NumericsCheck check) {
  switch (check) {
    case NumericsCheck::kPassed:
      return "passed";
    case NumericsCheck::kFailed:
      return "FAILED";
    case NumericsCheck::kNotChecked:
      break;
  }
  return "not checked";
}

// The QuantBatchMatmulV3 problems: the summary per family and phase, the
// variants, and every problem's predicted times.
void WriteQuant(std::ostringstream& md, const std::vector<SweepProblem>& problems,
                const std::vector<Outcome>& outcomes, Totals& t) {
  if (t.quant_order.empty()) return;
  const size_t total = t.quant_order.size();
  md << "## QuantBatchMatmulV3\n\n"
     << "The block search re-blocks CANN's own plan on its own kernel and struct (baseM x baseN x "
        "baseK and the L1 loads; the sliding window re-derived by CANN's rules), and the SWAT "
        "window is sized on CANN's sliding-window plans (server/advisor/README.md). The "
        "recommendation and CANN's choice are both checked through the quant numerics "
        "(emulator/quant_emulation.h) against the exact reference, on a shrunken copy of the "
        "same blocks above 2^24 MACs. Problems: the operator page's examples, then W8A8 (int8, "
        "per-channel x per-token float32 scales), MXFP8 (float8_e4m3fn) and MXFP4 (float4_e2m1) "
        "layers N x K of Llama-70B (8192 x 8192, 28672 x 8192, 8192 x 28672), DeepSeek-V3 "
        "(18432 x 7168, 7168 x 18432, 7168 x 2048) and Qwen3-32B (25600 x 5120, 5120 x 25600) at "
        "M 1, 16, 128 (decode) and 2048, 8192 (prefill); x2 stored [n, k], bfloat16 y.\n\n"
     << kSummaryHeader;
  for (const std::string key :
       {kQuantAll, "quant: examples", "quant: W8A8 int8", "quant: MXFP8", "quant: MXFP4",
        "quant: decode (M <= 128)", "quant: prefill (M >= 2048)"}) {
    WriteSummaryRow(md, key, t.groups[key]);
  }
  md << "\nCANN's choice passed numerics in " << t.cann_checked << " of " << total << " ("
     << t.cann_failed << " failed). Block search among the candidates in "
     << t.quant_offered[VariantKind::kBlockSearch] << " (best in "
     << t.quant_wins[VariantKind::kBlockSearch] << "), SWAT window in "
     << t.quant_offered[VariantKind::kSwatWindow] << " (best in "
     << t.quant_wins[VariantKind::kSwatWindow] << "), another CANN strategy best in "
     << t.quant_wins[VariantKind::kCannStrategy]
     << "; elsewhere CANN's choice is within 10% of the roofline bound and no cube variant is "
        "timed.\n\n"
     << "| Problem | CANN's choice | Predicted us | ADVISE's best | Predicted us | Gain | "
        "Numerics (CANN / best) |\n"
     << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (size_t i : t.quant_order) {
    const Outcome& o = outcomes[i];
    md << "| " << problems[i].name << " | " << o.cann_name << " | "
       << absl::StrFormat("%.2f", o.cann_us) << " | " << (o.best_is_cann ? "=" : o.best_name)
       << " | " << absl::StrFormat("%.2f", o.best_us) << " | " << X(o.gain) << " | "
       << NumericsWord(o.cann_numerics) << " / " << NumericsWord(o.numerics) << " |\n";
  }
  md << "\n";
}

void WritePerVariant(std::ostringstream& md, Totals& t) {
  md << "## Per variant\n\n"
     << "Offered: the variant was among the candidates (it is only offered where it is valid, "
        "and the cube variants only when CANN's choice is more than 10% above the roofline "
        "bound). Wins: it was the best candidate.\n\n"
     << "| Variant | Offered | Wins | Wins / offered | Geo-mean gain when it wins | Best gain |\n"
     << "| --- | --- | --- | --- | --- | --- |\n";
  const size_t total = t.float_order.size();
  for (int k = 0; k < 5; ++k) {
    const VariantKind kind = static_cast<VariantKind>(k);
    const size_t off =
        kind == VariantKind::kCannStrategy ? t.other_strategy_offered : t.offered[kind];
    const std::vector<double>& g = t.win_gains[kind];
    md << "| " << kKindNames[k] << " | " << off << " (" << Pct(off, total) << ") | " << t.wins[kind]
       << " (" << Pct(t.wins[kind], total) << ") | " << Pct(t.wins[kind], off) << " | "
       << (g.empty() ? "-" : X(GeoMean(g))) << " | "
       << (g.empty() ? "-" : X(*std::max_element(g.begin(), g.end()))) << " |\n";
  }
  md << "\n(5) Separate GM read / write bandwidth (every GM write also written back to DDR "
        "through its own port and the shared DDR total; rates = the chip's DDR rate):\n\n"
     << "| Problems re-ranked | Best candidate changes | Some candidate moves | Geo-mean slowdown "
        "of CANN's choice (where re-timed) | Worst slowdown of CANN's choice |\n"
     << "| --- | --- | --- | --- | --- |\n"
     << "| " << t.split_timed << " (those with 2+ candidates; the best 4 re-timed) | "
     << t.split_changes << " (" << Pct(t.split_changes, t.split_timed) << ") | "
     << t.split_rank_changed << " (" << Pct(t.split_rank_changed, t.split_timed) << ") | "
     << X(GeoMean(t.split_slowdowns)) << " | "
     << X(t.split_slowdowns.empty()
              ? 1.0
              : *std::max_element(t.split_slowdowns.begin(), t.split_slowdowns.end()))
     << " |\n\n";
}

void WriteNumerics(std::ostringstream& md, Totals& t) {
  md << "## Numerics\n\n"
     << (t.numerics_failed == 0 ? "Every" : "NOT every")
     << " recommended tiling passed the emulator's numerics check (C against the fp64 reference "
        "within the bound the dtypes imply, emulator/accuracy.h): "
     << t.groups["all"].passed << " of " << t.groups["all"].problems << ". "
     << t.groups["all"].shrunk
     << " were large enough to be checked on a shrunken copy with the same plan structure (same "
        "blocks, K stages, split-K chunks, window, residency and model; fewer tiles with the "
        "tails kept, 2-4 cores, shorter K; see server/advisor/verify.h); the full-size plan's "
        "schedule is checked by the timing emulation itself (exact coverage, buffers, no "
        "deadlock).\n\n";
}

// The problems with the largest predicted gains (CANN's choice taking at
// least `min_cann_us`).
void WriteGainsTable(std::ostringstream& md, const std::string& title, double min_cann_us,
                     const std::vector<SweepProblem>& problems,
                     const std::vector<Outcome>& outcomes, const std::vector<size_t>& by_gain) {
  md << "## " << title << "\n\n"
     << "| Problem | Source | CANN's choice (bound) | ADVISE's best (bound) | Predicted us "
        "(CANN -> best) | Gain | Verified on |\n"
     << "| --- | --- | --- | --- | --- | --- | --- |\n";
  size_t rows = 0;
  for (size_t i : by_gain) {
    const Outcome& o = outcomes[i];
    if (rows == 15 || o.gain <= 1) break;
    if (o.cann_us < min_cann_us) continue;
    ++rows;
    md << "| " << Shape(problems[i].problem)
       << (problems[i].chip.aic_num != 32 ? absl::StrCat(" (", problems[i].chip.aic_num, " AIC)")
                                          : "")
       << " | " << problems[i].source << " | " << o.cann_name << " (" << o.cann_bound << ") | "
       << o.best_name << " (" << o.best_bound << ") | "
       << absl::StrFormat("%.2f -> %.2f", o.cann_us, o.best_us) << " | " << X(o.gain) << " | "
       << o.verified << " |\n";
  }
  md << "\n";
}

void WriteSeedsAndErrors(std::ostringstream& md, const std::vector<SweepProblem>& problems,
                         const std::vector<Outcome>& outcomes, const Totals& t) {
  md << "## Seeds examples\n\n"
     << "| Example | Problem | CANN's choice | ADVISE's best | Gain | Split model changes best |\n"
     << "| --- | --- | --- | --- | --- | --- |\n";
  for (size_t i : t.order) {
    if (problems[i].source != "seeds") continue;
    const Outcome& o = outcomes[i];
    md << "| " << problems[i].name << " | " << Shape(problems[i].problem)
       << (problems[i].chip.aic_num != 32 ? absl::StrCat(" (", problems[i].chip.aic_num, " AIC)")
                                          : "")
       << " | " << o.cann_name << " | " << o.best_name << " | " << X(o.gain) << " | "
       << (o.split_timed ? (o.split_changes_best ? "yes" : "no") : "-") << " |\n";
  }
  if (t.errors > 0) {
    md << "\n## Errors\n\n";
    for (size_t i = 0; i < problems.size(); ++i) {
      if (!outcomes[i].ok) md << "- " << problems[i].name << ": " << outcomes[i].error << "\n";
    }
  }
}

bool WriteCsv(const std::string& path, const std::vector<SweepProblem>& problems,
              const std::vector<Outcome>& outcomes) {
  std::ofstream csv(path);
  csv << "name,source,m,n,k,dtype,aic,cann,best,best_kind,gain,split_changes_best,numerics,"
         "verified,shrunk,emulations,budget_exhausted,ms,error\n";
  for (size_t i = 0; i < problems.size(); ++i) {
    const Outcome& o = outcomes[i];
    const MatmulProblem& p = problems[i].problem;
    csv << '"' << problems[i].name << "\"," << problems[i].source << ',' << p.m << ',' << p.n << ','
        << p.k << ',' << npu::tiling::DataTypeName(p.dtype_a) << ',' << problems[i].chip.aic_num
        << ',' << o.cann_name << ',' << o.best_name << ','
        << npu::advisor::VariantKindName(o.best_kind) << ',' << o.gain << ','
        << o.split_changes_best << ',' << npu::advisor::NumericsCheckName(o.numerics) << ','
        << o.verified << ',' << o.shrunk << ',' << o.emulations << ',' << o.budget_exhausted << ','
        << o.ms << ",\"" << o.error << "\"\n";
  }
  return static_cast<bool>(csv);
}

void WriteHeader(std::ostringstream& md, const SweepFlags& flags, size_t problem_count,
                 double total_s, Totals& t) {
  const size_t problems_size = problem_count;
  md << "# ADVISE sweep\n\n"
     << "Generated by `bench/advise_sweep.sh` (`build/bin/advise_sweep`); do not edit by hand.\n"
     << "Each problem is advised by `npu::advisor::Advise()` with timing-only emulation, a "
     << flags.budget_ms
     << " ms budget per problem and the default options; gains are the emulator's\n"
     << "predicted cycles of CANN's choice over those of the advisor's best candidate (CANN's "
     << "choice is always a candidate, so no gain is below 1).\n\n";
  md << absl::StrFormat(
      "%zu problems (%zu golden, %zu seeds, %zu grid: M, N, K in {%s}, float16 / bfloat16 / "
      "float32; %zu QuantBatchMatmulV3, in a section of their own) in %.0f s on %d host threads, "
      "%llu emulations; slowest problem %.0f ms (%s). Errors: %zu. Budget exhausted: %zu. "
      "Variant plans the emulator rejected: %zu.\n\n",
      problems_size, t.groups["source: golden"].problems, t.groups["source: seeds"].problems,
      t.groups["source: grid"].problems,
      [&] {
        std::string s;
        for (int64_t v : flags.sizes) absl::StrAppend(&s, s.empty() ? "" : ", ", v);
        return s;
      }(),
      t.groups[kQuantAll].problems, total_s, flags.threads,
      static_cast<unsigned long long>(t.emulations), t.slowest_ms, t.slowest, t.errors,
      t.budget_hits, t.rejected_variants);
}

}  // namespace

int main(int argc, char** argv) {
  SweepFlags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  const std::vector<SweepProblem> problems = CollectProblems(flags);
  AdviseOptions options;
  options.max_advisory_ms = flags.budget_ms;
  options.emulator_threads = 1;  // the sweep is parallel over problems
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Outcome> outcomes = RunAll(problems, options, flags.threads);
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Totals t = Aggregate(problems, outcomes);

  std::ostringstream md;
  WriteHeader(md, flags, problems.size(), total_s, t);
  WriteSummary(md, t);
  WritePerVariant(md, t);
  WriteNumerics(md, t);
  std::vector<size_t> by_gain = t.float_order;
  std::stable_sort(by_gain.begin(), by_gain.end(),
                   [&](size_t a, size_t b) { return outcomes[a].gain > outcomes[b].gain; });
  WriteGainsTable(md, "Largest predicted gains", 0, problems, outcomes, by_gain);
  WriteGainsTable(
      md,
      absl::StrCat("Largest predicted gains where CANN's choice takes ", kLongUs, " us or more"),
      kLongUs, problems, outcomes, by_gain);
  WriteQuant(md, problems, outcomes, t);
  WriteSeedsAndErrors(md, problems, outcomes, t);

  std::ofstream out(flags.out_path);
  out << md.str();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", flags.out_path.c_str());
    return 1;
  }
  if (!flags.csv_path.empty()) WriteCsv(flags.csv_path, problems, outcomes);
  std::printf("%s", md.str().c_str());
  return t.errors == 0 && t.numerics_failed == 0 && t.rejected_variants == 0 ? 0 : 1;
}
