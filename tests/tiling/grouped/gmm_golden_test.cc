// GroupedMatmul's golden cases (tests/data/cann950_gmm): every case of
// CANN's six unit-test sources the file decodes, decided by the engine's
// registry on the chip its path reads, and compared with everything the
// case's `expected` names (status, key, block dim, data size, words, named
// fields, bounds, a key that must or must not be). Each case is named
// "<Path>_<name>", so one path runs alone:
//   tiling_test --gtest_filter='Cann950Gmm/GmmGoldenTest.MatchesCann/NoQuant_*'
// (Quant_, WeightQuant_, NoInput_ for the others).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/tiling/builtin_strategies.h"
#include "tests/testing/gmm_golden_cases.h"

namespace npu::tiling {
namespace {

using npu::testing::GmmGoldenCase;

const std::vector<GmmGoldenCase>& Cases() {
  static const std::vector<GmmGoldenCase>* const kCases =
      new std::vector<GmmGoldenCase>(npu::testing::LoadGmmGoldenCases(NPU_CONFORMANCE_GMM_CASES));
  return *kCases;
}

class GmmGoldenTest : public ::testing::TestWithParam<GmmGoldenCase> {};

TEST_P(GmmGoldenTest, MatchesCann) {
  const GmmGoldenCase& golden = GetParam();
  const StrategyRegistry registry = MakeBuiltinRegistry();
  const absl::StatusOr<TilingDecision> decision = registry.Decide(golden.problem, golden.chip);
  std::optional<absl::StatusOr<TilingDecision>> companion;
  if (golden.expected.contains("tiling_key_differs_from")) {
    const std::string other = golden.expected["tiling_key_differs_from"].get<std::string>();
    for (const GmmGoldenCase& c : Cases()) {
      if (c.name == other) {
        companion = registry.Decide(c.problem, c.chip);
        break;
      }
    }
  }
  for (const std::string& diff : npu::testing::GmmGoldenDifferences(
           golden, decision, companion.has_value() ? &*companion : nullptr)) {
    ADD_FAILURE() << golden.name << ": " << diff
                  << (decision.ok() ? "" : " (" + decision.status().ToString() + ")");
  }
}

INSTANTIATE_TEST_SUITE_P(Cann950Gmm, GmmGoldenTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<GmmGoldenCase>& info) {
                           return info.param.test_name;
                         });

}  // namespace
}  // namespace npu::tiling
