// Tests of server/tiling/cube_tiling_search.h: the high-level API's TCubeTiling
// search and the BatchMatMulV3TilingData built around it. The expected words
// are asc-devkit's MultiCoreMatmulTiling::GetTiling output for the same
// calls InitTCubeTilingData makes (checked against the compiled library).
#include "server/tiling/cube_tiling_search.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"

namespace npu::tiling {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Words = std::array<uint32_t, kCubeTilingWords>;

ChipSpec Chip(uint32_t aic, uint64_t l1, uint64_t l0c, uint64_t ub) {
  ChipSpec chip;
  chip.aic_num = aic;
  chip.l1_bytes = l1;
  chip.l0c_bytes = l0c;
  chip.ub_bytes = ub;
  return chip;
}

// The Ascend 950PR figures CANN's compile info reports (L1 512 KiB, L0C
// 256 KiB, UB 248 KiB).
ChipSpec Ascend950(uint32_t aic = 32) { return Chip(aic, 524288, 262144, 253952); }

CubeTilingSearchInput Input(DataType in, DataType out, int64_t m, int64_t n, int64_t k) {
  CubeTilingSearchInput input;
  input.a_dtype = in;
  input.b_dtype = in;
  input.c_dtype = out;
  input.m = m;
  input.n = n;
  input.k = k;
  return input;
}

Words Search(const CubeTilingSearchInput& input, const ChipSpec& chip) {
  absl::StatusOr<CubeTiling> tiling = SearchCubeTiling(input, chip);
  EXPECT_TRUE(tiling.ok()) << tiling.status();
  return tiling.ok() ? CubeTilingWords(*tiling) : Words{};
}

// The words after the 33rd are layout and batch words the callers never set:
// zero in every answer.
Words WithZeroTail(std::array<uint32_t, 33> head) {
  Words words{};
  for (size_t i = 0; i < head.size(); ++i) words[i] = head[i];
  return words;
}

TEST(CubeTilingSearchTest, Fp16SplitsCoresAndFillsL1) {
  const Words expected =
      WithZeroTail({24, 1024, 768,    512,    512, 128, 256, 512, 128, 256, 64, 8, 8, 1, 1, 0, 0,
                    0,  0,    393216, 131072, 0,   1,   1,   1,   1,   8,   8,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(Input(DataType::kFloat16, DataType::kFloat16, 1024, 768, 512), Ascend950()),
              ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, BiasLimitsTheNBlockAndTakesL1) {
  CubeTilingSearchInput input = Input(DataType::kBFloat16, DataType::kBFloat16, 96, 4000, 200);
  input.bias_dtype = DataType::kFloat32;
  input.trans_a = true;
  const Words expected =
      WithZeroTail({32, 96, 4000,   200,   200, 96, 125, 200, 96, 128, 128, 2, 2, 1, 1, 1, 0,
                    0,  0,  115200, 49152, 0,   1,  1,   1,   1,  2,   2,   0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950()), ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, Fp32NzBAlignsPerCoreNAndEvenK) {
  CubeTilingSearchInput input = Input(DataType::kFloat32, DataType::kFloat32, 300, 500, 700);
  input.b_format = Format::kFractalNz;
  const Words expected =
      WithZeroTail({20, 300, 500,    700,   700, 31, 256, 700, 32, 256, 32, 22, 4, 1, 1, 0, 0,
                    1,  0,   221184, 32768, 0,   1,  1,   1,   1,  22,  2,  0,  0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950()), ElementsAreArray(expected));
}

// An 8-element fp32 K block: B's depth follows its N steps (AdjustFloatL1Factor).
TEST(CubeTilingSearchTest, Fp32EightElementKLoadsBOneStepAtATime) {
  const Words expected =
      WithZeroTail({32, 4000, 4000,  8,      8, 500, 1000, 8, 128, 256, 8, 4, 4, 4, 4, 0, 0,
                    0,  0,    49152, 131072, 0, 1,   1,    1, 1,   1,   1, 0, 0, 2, 2, 1});
  EXPECT_THAT(Search(Input(DataType::kFloat32, DataType::kFloat32, 4000, 4000, 8), Ascend950()),
              ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, Fp32BiasWithTransposedBAndEightElementK) {
  CubeTilingSearchInput input = Input(DataType::kFloat32, DataType::kFloat32, 2048, 2048, 8);
  input.bias_dtype = DataType::kFloat32;
  input.trans_a = true;
  input.trans_b = true;
  const Words expected =
      WithZeroTail({32, 2048, 2048,  8,      8, 256, 512, 8, 128, 256, 8, 2, 2, 2, 2, 1, 0,
                    0,  0,    25600, 131072, 0, 1,   1,   1, 1,   1,   1, 0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950()), ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, MiniShapeStaysOnOneCore) {
  const Words expected =
      WithZeroTail({1, 32, 48,    64,   64, 32, 48, 64, 32, 48, 64, 1, 1, 1, 1, 0, 0,
                    0, 0,  10240, 6144, 0,  1,  1,  1,  1,  1,  1,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(Input(DataType::kFloat16, DataType::kFloat16, 32, 48, 64), Ascend950()),
              ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, SingleCoreKeepsTheWholeProblem) {
  CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 5000, 3000, 1000);
  input.bias_dtype = DataType::kFloat16;
  input.trans_b = true;
  const Words expected =
      WithZeroTail({1, 5000, 3000,   1000,   1000, 5000, 3000, 1000, 128, 256, 64, 4, 8, 1, 1, 1, 0,
                    0, 0,    328192, 131072, 0,    1,    1,    1,    1,   2,   4,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Ascend950(1)), ElementsAreArray(expected));
}

TEST(CubeTilingSearchTest, BufferSpaceWithinTheDefaultsIsUsed) {
  CubeTilingSearchInput input = Input(DataType::kBFloat16, DataType::kFloat32, 2000, 900, 4000);
  input.b_format = Format::kFractalNz;
  input.trans_a = true;

  const Words expected =
      WithZeroTail({24, 2000, 900,   4000,   4000, 256, 384, 4000, 128, 256, 64, 2, 2, 1, 1, 0, 0,
                    0,  0,    98304, 131072, 0,    1,   1,   1,    1,   1,   1,  0, 0, 2, 2, 1});
  EXPECT_THAT(Search(input, Chip(24, 262144, 131072, 196608)), ElementsAreArray(expected));
}

// The 950's L1 exceeds the tiling object's default (512 KiB - 256), so
// SetBufferSpace stores nothing and the search runs on the defaults.
TEST(CubeTilingSearchTest, BufferSpaceBeyondTheDefaultsIsIgnored) {
  const CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 1024, 768, 512);
  EXPECT_EQ(Search(input, Ascend950()), Search(input, Chip(32, 524032, 131072, 196352)));
  EXPECT_NE(Search(input, Ascend950()), Search(input, Chip(32, 262144, 131072, 196352)));
}

TEST(CubeTilingSearchTest, FailsWhenNoL0BlockFits) {
  CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 1, 11849, 116);
  input.trans_b = true;
  const absl::StatusOr<CubeTiling> tiling = SearchCubeTiling(input, Chip(49, 178176, 12288, 19456));
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(tiling.status().message()), HasSubstr("ml0/nl0/kl0 is zero"));
}

TEST(CubeTilingSearchTest, FailsWhenTheChosenDepthsOverflowL1) {
  const absl::StatusOr<CubeTiling> tiling = SearchCubeTiling(
      Input(DataType::kBFloat16, DataType::kBFloat16, 5, 5, 37793), Chip(44, 51200, 110592, 89088));
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(tiling.status().message()), HasSubstr("65536/1024/0 bytes"));
}

// CANN's own search divides by zero here (the host process dies); ours fails.
TEST(CubeTilingSearchTest, FailsWhereCannDividesByZero) {
  CubeTilingSearchInput input = Input(DataType::kFloat32, DataType::kFloat32, 10404, 1, 20);
  input.trans_a = true;
  const absl::StatusOr<CubeTiling> tiling =
      SearchCubeTiling(input, Chip(10, 32768, 124928, 185344));
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(tiling.status().message()), HasSubstr("divides by zero"));
}

TEST(CubeTilingSearchTest, FailsOnAnEmptyDimension) {
  const absl::StatusOr<CubeTiling> tiling =
      SearchCubeTiling(Input(DataType::kFloat16, DataType::kFloat16, 0, 5, 5), Ascend950());
  EXPECT_EQ(tiling.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CubeTilingSearchTest, BatchTilingDataOverlaysThePlanOnTheSearch) {
  CubeTilingSearchInput input = Input(DataType::kFloat16, DataType::kFloat16, 1024, 768, 512);
  input.bias_dtype = DataType::kFloat16;
  const absl::StatusOr<CubeTiling> searched = SearchCubeTiling(input, Ascend950());
  ASSERT_TRUE(searched.ok()) << searched.status();

  HighLevelBatchPlan plan;
  plan.used_core_num = 32;
  plan.single_core_m = 1024;
  plan.single_core_n = 768;
  plan.single_core_k = 512;
  plan.base_m = 256;
  plan.base_n = 256;
  plan.base_k = 64;
  plan.depth_a1 = 16;
  plan.depth_b1 = 16;
  plan.step_m = 1;
  plan.step_n = 1;
  plan.step_ka = 8;
  plan.step_kb = 6;
  plan.iterate_order = 1;
  plan.iter_batch = 3;
  plan.mmad_param = 1;
  plan.l2_cache_disable = 2;
  plan.aic_num = 24;
  plan.batch_a = 4;
  plan.batch_b = 8;
  plan.batch_c = 32;
  plan.a_dims = {1, 1, 4, 1};
  plan.b_dims = {1, 1, 1, 8};
  plan.c_dims = {1, 1, 4, 8};
  plan.m = 1000;
  plan.n = 768;
  plan.slice_m = 256;
  plan.broadcast_axis_a = 3;
  const TilingData data = HighLevelBatchTilingData(*searched, plan);
  ASSERT_EQ(data.struct_name(), "BatchMatMulV3TilingData");
  const std::vector<uint32_t> words = data.RawWords();
  ASSERT_EQ(words.size(), 90u);
  using F = HighLevelBatchField;
  auto word = [&](F field) { return Get(data, field).value_or(~0ull); };
  // The plan replaces the search's split, blocks and depths ...
  EXPECT_EQ(word(F::kUsedCoreNum), 32u);
  EXPECT_EQ(words[0], 32u);
  EXPECT_EQ(word(F::kBaseM), 256u);
  EXPECT_EQ(word(F::kStepKb), 6u);
  EXPECT_EQ(word(F::kDbL0c), 0u);
  EXPECT_EQ(word(F::kBatchNum), 3u);
  // ... the search's own words survive.
  EXPECT_EQ(word(F::kM), 1024u);
  EXPECT_EQ(word(F::kIsBias), 1u);
  EXPECT_EQ(word(F::kShareL1Size), static_cast<uint32_t>(searched->share_l1_size));
  EXPECT_EQ(word(F::kShareL0cSize), static_cast<uint32_t>(searched->share_l0c_size));
  EXPECT_EQ(word(F::kDbL0a), 2u);
  // Derived words: the swizzle window (largest divisor of 24 not above 4.9),
  // L1 extents clipped to the aligned problem, kL1 of at most 4 K blocks.
  EXPECT_EQ(word(F::kAswWindowLen), 4u);
  EXPECT_EQ(word(F::kML1), 256u);
  EXPECT_EQ(word(F::kNL1), 256u);
  EXPECT_EQ(word(F::kKL1), 256u);
  EXPECT_EQ(word(F::kBatchSplitFactor), 1u);
  EXPECT_EQ(word(F::kIterBatch), 3u);
  EXPECT_EQ(word(F::kBBatchDim3), 8u);
  EXPECT_EQ(word(F::kCBatchDim2), 4u);
  // Word 82 packs mmadParam, l1BufferNum, ubDB and l0cDB (never set: 1).
  EXPECT_EQ(words[82], 0x01010201u);
  EXPECT_EQ(word(F::kSliceM), 256u);
  EXPECT_EQ(word(F::kBroadcastAxisA), 3u);
  EXPECT_EQ(word(F::kBroadcastAxisB), 4u);
}

TEST(CubeTilingSearchTest, BatchTilingDataClipsL1ExtentsToSmallProblems) {
  const absl::StatusOr<CubeTiling> searched =
      SearchCubeTiling(Input(DataType::kFloat16, DataType::kFloat16, 40, 20, 64), Ascend950());
  ASSERT_TRUE(searched.ok()) << searched.status();
  HighLevelBatchPlan plan;
  plan.base_m = 256;
  plan.base_n = 256;
  plan.base_k = 64;
  plan.step_m = 2;
  plan.step_n = 2;
  plan.step_ka = 1;
  plan.step_kb = 5;
  plan.m = 40;
  plan.n = 20;
  plan.aic_num = 32;
  const TilingData data = HighLevelBatchTilingData(*searched, plan);
  using F = HighLevelBatchField;
  EXPECT_EQ(Get(data, F::kML1), 48u);
  EXPECT_EQ(Get(data, F::kNL1), 32u);
  EXPECT_EQ(Get(data, F::kKL1), 64u);
  EXPECT_EQ(Get(data, F::kAswWindowLen), 4u);
}

// --- Recorded answers ----------------------------------------------------------
//
// tests/data/cube_tiling_search/recorded.txt holds the search's answer (the 50
// words, or the error) for 4000 pseudo-random inputs spread over everything the
// callers pass and more: every float and 8-bit dtype, ND and FRACTAL_NZ
// operands, transposes, biases, dims from 1 to 2^31 - 1 (and 0), K around the
// 32-bit wrap of the byte counts, 1 to 1024 cores, buffers below, at and above
// the tiling object's defaults. The answers were recorded from the search as
// it was checked against CANN's compiled library and the oracle differential;
// the test holds every later version of the search to them word for word.
// NPU_RECORD_CUBE_TILING_SEARCH=<file> rewrites the file from the current
// search instead (for a deliberate change of its answers, with the oracle
// differential run again).

// splitmix64: a fixed sequence on every platform (the standard library's
// distributions are not).
class InputSequence {
 public:
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform enough in [lo, hi].
  int64_t In(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return In(1, 100) <= percent; }
  template <typename T, size_t N>
  T Pick(const T (&values)[N]) {
    return values[In(0, N - 1)];
  }

 private:
  uint64_t state_ = 20261207;
};

int64_t RandomDim(InputSequence& seq, bool is_k) {
  const int kind = static_cast<int>(seq.In(0, 99));
  if (kind < 2) return 0;
  if (kind < 32) return seq.In(1, 256);
  if (kind < 62) return seq.In(1, 8192);
  if (kind < 77) {
    const int64_t near = (int64_t{1} << seq.In(0, 16)) + seq.In(-2, 2) * (seq.Chance(50) ? 1 : 16);
    return std::max<int64_t>(near, 1);
  }
  if (kind < 87) return seq.In(8192, 1 << 20);
  if (is_k && kind < 91) return (int64_t{1} << seq.In(20, 26)) + seq.In(-64, 64) * 16;
  // K whose byte counts wrap to zero in 32 bits (CANN's divisions by zero).
  if (is_k && kind < 96) return (int64_t{1} << seq.In(18, 26)) * seq.In(1, 3);
  return seq.In(1, INT32_MAX);
}

struct RecordedCase {
  CubeTilingSearchInput input;
  ChipSpec chip;
};

RecordedCase RandomCase(InputSequence& seq) {
  static constexpr DataType kTypes[] = {
      DataType::kFloat16,    DataType::kBFloat16,   DataType::kFloat32,  DataType::kInt8,
      DataType::kFloat8E4M3, DataType::kFloat8E5M2, DataType::kHiFloat8,
  };
  static constexpr DataType kOutTypes[] = {DataType::kFloat16,  DataType::kBFloat16,
                                           DataType::kFloat32,  DataType::kInt8,
                                           DataType::kHiFloat8, DataType::kInt32};
  static constexpr DataType kBiasTypes[] = {DataType::kFloat16, DataType::kBFloat16,
                                            DataType::kFloat32, DataType::kInt32};
  static constexpr uint32_t kCores[] = {1, 2, 4, 7, 8, 20, 24, 30, 48, 64, 100, 1024};
  RecordedCase c;
  CubeTilingSearchInput& in = c.input;
  in.a_dtype = seq.Pick(kTypes);
  in.b_dtype = seq.Chance(85) ? in.a_dtype : seq.Pick(kTypes);
  in.c_dtype = seq.Pick(kOutTypes);
  if (seq.Chance(30)) in.bias_dtype = seq.Pick(kBiasTypes);
  in.a_format = seq.Chance(10) ? Format::kFractalNz : Format::kNd;
  in.b_format = seq.Chance(40) ? Format::kFractalNz : Format::kNd;
  in.c_format = seq.Chance(10) ? Format::kFractalNz : Format::kNd;
  in.trans_a = seq.Chance(50);
  in.trans_b = seq.Chance(50);
  in.m = RandomDim(seq, false);
  in.n = RandomDim(seq, false);
  in.k = RandomDim(seq, true);
  in.keep_default_ub = seq.Chance(20);
  c.chip = Ascend950(seq.Chance(60) ? 32 : seq.Pick(kCores));
  if (seq.Chance(10)) c.chip.aic_num = static_cast<uint32_t>(seq.In(1, 1024));
  if (seq.Chance(35)) {
    c.chip.l1_bytes =
        static_cast<uint64_t>(seq.In(16 * 1024, seq.Chance(50) ? 64 * 1024 : 600 * 1024));
    c.chip.l0c_bytes = static_cast<uint64_t>(seq.In(4 * 1024, 300 * 1024));
    c.chip.ub_bytes = static_cast<uint64_t>(seq.In(4 * 1024, 300 * 1024));
  }
  return c;
}

// One line: the input, "->", then "ok" and the 50 words (without the zeros
// that end them) or "error", the code and the message.
std::string InputText(const RecordedCase& c) {
  const CubeTilingSearchInput& in = c.input;
  std::ostringstream out;
  out << DataTypeName(in.a_dtype) << " " << DataTypeName(in.b_dtype) << " "
      << DataTypeName(in.c_dtype) << " "
      << (in.bias_dtype.has_value() ? DataTypeName(*in.bias_dtype) : "-") << " "
      << FormatName(in.a_format) << " " << FormatName(in.b_format) << " " << FormatName(in.c_format)
      << " " << in.trans_a << " " << in.trans_b << " " << in.m << " " << in.n << " " << in.k << " "
      << in.keep_default_ub << " " << c.chip.aic_num << " " << c.chip.l1_bytes << " "
      << c.chip.l0c_bytes << " " << c.chip.ub_bytes;
  return out.str();
}

std::string AnswerText(const absl::StatusOr<CubeTiling>& tiling) {
  if (!tiling.ok()) {
    return absl::StrCat("error ", static_cast<int>(tiling.status().code()), " ",
                        std::string(tiling.status().message()));
  }
  // The words up to the last that is not zero (the layout and batch words
  // at the end are zero in every answer).
  const std::array<uint32_t, kCubeTilingWords> words = CubeTilingWords(*tiling);
  size_t count = words.size();
  while (count > 0 && words[count - 1] == 0) --count;
  std::string out = "ok";
  for (size_t i = 0; i < count; ++i) absl::StrAppend(&out, " ", words[i]);
  return out;
}

absl::StatusOr<RecordedCase> ParseInput(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string a, b, c, bias, af, bf, cf;
  int ta = 0, tb = 0, keep_ub = 0;
  RecordedCase rc;
  rc.chip = Ascend950();
  if (!(in >> a >> b >> c >> bias >> af >> bf >> cf >> ta >> tb >> rc.input.m >> rc.input.n >>
        rc.input.k >> keep_ub >> rc.chip.aic_num >> rc.chip.l1_bytes >> rc.chip.l0c_bytes >>
        rc.chip.ub_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("unreadable input: ", std::string(text)));
  }
  CubeTilingSearchInput& input = rc.input;
  ASSIGN_OR_RETURN(input.a_dtype, ParseDataType(a));
  ASSIGN_OR_RETURN(input.b_dtype, ParseDataType(b));
  ASSIGN_OR_RETURN(input.c_dtype, ParseDataType(c));
  if (bias != "-") {
    ASSIGN_OR_RETURN(input.bias_dtype, ParseDataType(bias));
  }
  ASSIGN_OR_RETURN(input.a_format, ParseFormat(af));
  ASSIGN_OR_RETURN(input.b_format, ParseFormat(bf));
  ASSIGN_OR_RETURN(input.c_format, ParseFormat(cf));
  input.trans_a = ta != 0;
  input.trans_b = tb != 0;
  input.keep_default_ub = keep_ub != 0;
  return rc;
}

constexpr int kRecordedCases = 4000;

TEST(CubeTilingSearchTest, AnswersEqualTheRecordedOnes) {
  if (const char* path = std::getenv("NPU_RECORD_CUBE_TILING_SEARCH")) {
    std::ofstream out(path);
    InputSequence seq;
    for (int i = 0; i < kRecordedCases; ++i) {
      const RecordedCase c = RandomCase(seq);
      out << InputText(c) << " -> " << AnswerText(SearchCubeTiling(c.input, c.chip)) << "\n";
    }
    ASSERT_TRUE(out.good()) << path;
    GTEST_SKIP() << "recorded " << kRecordedCases << " answers to " << path;
  }
  std::ifstream in(NPU_CUBE_TILING_SEARCH_RECORDED);
  ASSERT_TRUE(in.good()) << NPU_CUBE_TILING_SEARCH_RECORDED;
  std::string line;
  int cases = 0;
  int differ = 0;
  while (std::getline(in, line)) {
    const size_t arrow = line.find(" -> ");
    ASSERT_NE(arrow, std::string::npos) << line;
    const absl::StatusOr<RecordedCase> c = ParseInput(std::string_view(line).substr(0, arrow));
    ASSERT_TRUE(c.ok()) << c.status();
    ++cases;
    const std::string answer = AnswerText(SearchCubeTiling(c->input, c->chip));
    const std::string_view recorded = std::string_view(line).substr(arrow + 4);
    if (answer != recorded && ++differ <= 10) {
      ADD_FAILURE() << "input " << line.substr(0, arrow) << "\n  recorded " << recorded
                    << "\n  now      " << answer;
    }
  }
  EXPECT_EQ(cases, kRecordedCases);
  EXPECT_EQ(differ, 0) << "of " << cases << " recorded answers";
}

}  // namespace
}  // namespace npu::tiling
