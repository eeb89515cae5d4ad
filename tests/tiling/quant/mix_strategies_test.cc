// Golden tests of the MIX_BASIC_API_ASW, MIX_ASW and CUBE_ASW
// QuantBatchMatmulV3 strategies. The MIX rows are every Ascend950 row of
// CANN's unit-test CSV
// (matmul/quant_batch_matmul_v3/tests/ut/op_host/test_quant_batch_matmul_v3.csv)
// that these strategies answer, as decoded in
// shared/conformance/cann950_quant/cases.json (the case names carry the CSV
// line): the request as the test builds it, the expected tiling key, block
// dim and tiling words. CANN's test has no CUBE_ASW row (with the Tensor API
// CUBE_BASIC_API_ASW takes those problems); the cube_asw_* rows hold the
// answers of CANN's own tiling code for a runtime without the Tensor API.
// The workspace sizes, which CANN's test does not check, come from the same
// code. The words a row lists as ignored are those CANN's test does not
// compare (biasDtype without a bias, and word 51 of the 96-word struct).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/tiling/quant/cube_asw.h"
#include "server/tiling/quant/high_level_tiling.h"
#include "server/tiling/quant/mix_asw.h"
#include "server/tiling/quant/mix_basic_api_asw.h"
#include "server/tiling/quant/quant_capability.h"
#include "server/tiling/quant/quant_parse.h"
#include "server/tiling/quant/sliding_window.h"

namespace npu::tiling::quant {
namespace {

struct GoldenCase {
  const char* name;
  const char* strategy;  // CANN's name
  bool tensor_api;
  QuantTensor x1, x2, scale, pertoken, bias, y;  // absent: {}
  bool trans_a, trans_b;
  uint32_t aic, aiv;
  uint64_t key;
  uint32_t block_dim;
  uint64_t workspace_bytes;
  std::vector<uint32_t> words;
  std::vector<size_t> ignored_words;
};

// clang-format off
const GoldenCase kGoldenCases[] = {
    {"qbmmv3_950_L260_Key-llama2-case29", "MIX_ASW", true,
     {true, GeDtype::kInt8, {1, 256, 6656}, {1, 256, 6656}, false},
     {true, GeDtype::kInt8, {1, 4992, 6656}, {1, 4992, 6656}, false},
     {true, GeDtype::kFloat, {4992}, {4992}, false},
     {true, GeDtype::kFloat, {256}, {256}, false},
     {},
     {true, GeDtype::kFloat16, {1, 256, 4992}, {1, 256, 4992}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 127, 160, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 256, 4992, 6656, 6656, 256, 160, 6656, 256, 160, 128, 6, 12, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 6, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {25, 51}},
    {"qbmmv3_950_L261_Key-llama2-case35", "MIX_ASW", true,
     {true, GeDtype::kInt8, {1, 192, 6656}, {1, 192, 6656}, false},
     {true, GeDtype::kInt8, {1, 4480, 6656}, {1, 4480, 6656}, false},
     {true, GeDtype::kFloat, {4480}, {4480}, false},
     {true, GeDtype::kFloat, {192}, {192}, false},
     {},
     {true, GeDtype::kFloat16, {1, 192, 4480}, {1, 192, 4480}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 96, 144, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 192, 4480, 6656, 6656, 192, 144, 6656, 192, 144, 128, 10, 10, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {25, 51}},
    {"qbmmv3_950_L271_Al1fullload-mcnt2-pertoken", "MIX_ASW", true,
     {true, GeDtype::kInt8, {1, 1024, 426}, {1, 1024, 426}, false},
     {true, GeDtype::kInt8, {1, 1024, 8192}, {1, 1024, 8192}, false},
     {true, GeDtype::kFloat, {8192}, {8192}, false},
     {true, GeDtype::kFloat, {426}, {426}, false},
     {true, GeDtype::kInt32, {8192}, {8192}, false},
     {true, GeDtype::kFloat16, {1, 426, 8192}, {1, 426, 8192}, false},
     true, false, 32, 64,
     769, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 79, 256, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 426, 8192, 1024, 1024, 256, 256, 1024, 256, 256, 128, 8, 4, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 2, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L272_Al1fullload-mcnt4-pertoken", "MIX_ASW", true,
     {true, GeDtype::kInt8, {1, 128, 3072}, {1, 128, 3072}, false},
     {true, GeDtype::kInt8, {1, 3072, 1024}, {1, 3072, 1024}, false},
     {true, GeDtype::kFloat, {1024}, {1024}, false},
     {true, GeDtype::kFloat, {128}, {128}, false},
     {true, GeDtype::kInt32, {1024}, {1024}, false},
     {true, GeDtype::kFloat16, {1, 128, 1024}, {1, 128, 1024}, false},
     false, false, 32, 64,
     768, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 16, 128, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 128, 1024, 3072, 3072, 32, 128, 3072, 32, 128, 256, 12, 4, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 2, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L283_1971Compate-scale-bf16-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kInt8, {9696, 590}, {9696, 590}, false},
     {true, GeDtype::kInt8, {4256, 9696}, {4256, 9696}, false},
     {true, GeDtype::kBFloat16, {4256}, {4256}, false},
     {},
     {true, GeDtype::kFloat, {4256}, {4256}, false},
     {true, GeDtype::kBFloat16, {590, 4256}, {590, 4256}, false},
     true, true, 32, 64,
     517, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 590, 4256, 9696, 9696, 256, 256, 9696, 256, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L284_1971Compate-scale-bf16-bias-bf16", "MIX_ASW", true,
     {true, GeDtype::kInt8, {9728, 798}, {9728, 798}, false},
     {true, GeDtype::kInt8, {9728, 9032}, {9728, 9032}, false},
     {true, GeDtype::kBFloat16, {1}, {1}, false},
     {},
     {true, GeDtype::kBFloat16, {9032}, {9032}, false},
     {true, GeDtype::kBFloat16, {798, 9032}, {798, 9032}, false},
     true, false, 32, 64,
     513, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 27, 0, 0, 0, 0, 0, 0, 0, 0, 32, 798, 9032, 9728, 9728, 256, 256, 9728, 256, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L286_1971Compate-scale-fp32-bias-int32", "MIX_ASW", true,
     {true, GeDtype::kInt8, {1029, 3376}, {1029, 3376}, false},
     {true, GeDtype::kInt8, {3376, 1536}, {3376, 1536}, false},
     {true, GeDtype::kFloat, {1536}, {1536}, false},
     {},
     {true, GeDtype::kInt32, {1536}, {1536}, false},
     {true, GeDtype::kBFloat16, {1029, 1536}, {1029, 1536}, false},
     false, false, 32, 64,
     512, 30, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 30, 1029, 1536, 3376, 3376, 208, 256, 3376, 208, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L287_1971Compate-scale-bf16-bias-int32", "MIX_ASW", true,
     {true, GeDtype::kInt8, {2784, 1789}, {2784, 1789}, false},
     {true, GeDtype::kInt8, {1056, 2784}, {1056, 2784}, false},
     {true, GeDtype::kBFloat16, {1056}, {1056}, false},
     {},
     {true, GeDtype::kInt32, {1056}, {1056}, false},
     {true, GeDtype::kBFloat16, {1789, 1056}, {1789, 1056}, false},
     true, true, 32, 64,
     517, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 1789, 1056, 2784, 2784, 256, 256, 2784, 256, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L290_fp8-pertoken-perchannel-fp32", "MIX_ASW", true,
     {true, GeDtype::kFloat8E4M3, {1, 27, 240}, {1, 27, 240}, false},
     {true, GeDtype::kFloat8E4M3, {1, 40, 240}, {1, 40, 240}, false},
     {true, GeDtype::kFloat, {40}, {40}, false},
     {true, GeDtype::kFloat, {27}, {27}, false},
     {true, GeDtype::kFloat, {40}, {40}, false},
     {true, GeDtype::kFloat, {1, 27, 40}, {1, 27, 40}, false},
     false, true, 32, 64,
     772, 6, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 8, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 27, 40, 240, 240, 16, 16, 240, 16, 16, 256, 1, 16, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 8, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L291_hifloat8-pertoken-perchannel-fp16", "MIX_ASW", true,
     {true, GeDtype::kHiFloat8, {1, 263, 1}, {1, 263, 1}, false},
     {true, GeDtype::kHiFloat8, {1, 1010, 263}, {1, 1010, 263}, false},
     {true, GeDtype::kFloat, {1010}, {1010}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {},
     {true, GeDtype::kFloat16, {1, 1, 1010}, {1, 1, 1010}, false},
     true, true, 32, 64,
     773, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 1, 1010, 263, 263, 1, 32, 263, 128, 32, 256, 2, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 4, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {25, 51}},
    {"qbmmv3_950_L293_fp8-pertoken-pertensor-batch-bf16", "MIX_ASW", true,
     {true, GeDtype::kFloat8E5M2, {28, 328, 129}, {28, 328, 129}, false},
     {true, GeDtype::kFloat8E5M2, {1, 178, 328}, {1, 178, 328}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {129}, {129}, false},
     {true, GeDtype::kFloat, {178}, {178}, false},
     {true, GeDtype::kBFloat16, {28, 129, 178}, {28, 129, 178}, false},
     true, true, 32, 64,
     517, 30, 16777216,
     {28, 1, 28, 1, 1, 1, 28, 1, 1, 1, 1, 1, 1, 1, 28, 0, 1, 1, 0, 0, 65, 192, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 30, 129, 178, 328, 328, 129, 178, 328, 160, 192, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 6, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L294_hifloat8-pertoken-pertensor-bf16", "MIX_ASW", true,
     {true, GeDtype::kHiFloat8, {1, 1220, 948}, {1, 1220, 948}, false},
     {true, GeDtype::kHiFloat8, {1, 788, 948}, {1, 788, 948}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {1220}, {1220}, false},
     {true, GeDtype::kFloat, {788}, {788}, false},
     {true, GeDtype::kBFloat16, {1, 1220, 788}, {1, 1220, 788}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 80, 208, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 1220, 788, 948, 948, 160, 208, 948, 160, 208, 128, 8, 8, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L303_1971CompatePertoken-scale-bf16-bias-int32", "MIX_ASW", true,
     {true, GeDtype::kInt8, {103, 9680}, {103, 9680}, false},
     {true, GeDtype::kInt8, {7672, 9680}, {7672, 9680}, false},
     {true, GeDtype::kBFloat16, {1}, {1}, false},
     {true, GeDtype::kFloat, {103}, {103}, false},
     {true, GeDtype::kInt32, {7672}, {7672}, false},
     {true, GeDtype::kBFloat16, {103, 7672}, {103, 7672}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 52, 240, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 103, 7672, 9680, 9680, 103, 240, 9680, 112, 240, 128, 16, 8, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 4, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L304_1971CompatePertoken-scale-bf16-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kInt8, {9696, 590}, {9696, 590}, false},
     {true, GeDtype::kInt8, {4256, 9696}, {4256, 9696}, false},
     {true, GeDtype::kBFloat16, {4256}, {4256}, false},
     {true, GeDtype::kFloat, {590}, {590}, false},
     {true, GeDtype::kFloat, {4256}, {4256}, false},
     {true, GeDtype::kBFloat16, {590, 4256}, {590, 4256}, false},
     true, true, 32, 64,
     517, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 79, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 590, 4256, 9696, 9696, 256, 256, 9696, 256, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L306_1971CompatePertoken-scale-fp32-bias-bf16", "MIX_ASW", true,
     {true, GeDtype::kInt8, {360, 6992}, {360, 6992}, false},
     {true, GeDtype::kInt8, {1384, 6992}, {1384, 6992}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {360}, {360}, false},
     {true, GeDtype::kBFloat16, {1384}, {1384}, false},
     {true, GeDtype::kBFloat16, {360, 1384}, {360, 1384}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 48, 176, 0, 0, 0, 27, 0, 0, 0, 0, 0, 0, 0, 0, 32, 360, 1384, 6992, 6992, 96, 176, 6992, 96, 176, 128, 20, 10, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 5, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L307_1971CompatePertoken-scale-bf16-bias-int32", "MIX_ASW", true,
     {true, GeDtype::kInt8, {2784, 1789}, {2784, 1789}, false},
     {true, GeDtype::kInt8, {1056, 2784}, {1056, 2784}, false},
     {true, GeDtype::kBFloat16, {1056}, {1056}, false},
     {true, GeDtype::kFloat, {1789}, {1789}, false},
     {true, GeDtype::kInt32, {1056}, {1056}, false},
     {true, GeDtype::kBFloat16, {1789, 1056}, {1789, 1056}, false},
     true, true, 32, 64,
     517, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 79, 256, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 1789, 1056, 2784, 2784, 256, 256, 2784, 256, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L309_1971CompatePertokenfp16-scale-fp32-bias-fp16", "MIX_ASW", true,
     {true, GeDtype::kInt8, {360, 6992}, {360, 6992}, false},
     {true, GeDtype::kInt8, {1384, 6992}, {1384, 6992}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {360}, {360}, false},
     {true, GeDtype::kFloat16, {1384}, {1384}, false},
     {true, GeDtype::kFloat16, {360, 1384}, {360, 1384}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 48, 176, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 32, 360, 1384, 6992, 6992, 96, 176, 6992, 96, 176, 128, 20, 10, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 5, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L310_1971CompatePertokenfp16-scale-fp32-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kInt8, {1520, 2852}, {1520, 2852}, false},
     {true, GeDtype::kInt8, {1520, 2256}, {1520, 2256}, false},
     {true, GeDtype::kFloat, {2256}, {2256}, false},
     {true, GeDtype::kFloat, {2852}, {2852}, false},
     {true, GeDtype::kFloat, {2256}, {2256}, false},
     {true, GeDtype::kFloat16, {2852, 2256}, {2852, 2256}, false},
     true, false, 32, 64,
     513, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 79, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 2852, 2256, 1520, 1520, 256, 256, 1520, 256, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L316_fanhua", "MIX_ASW", true,
     {true, GeDtype::kInt8, {52, 4632}, {52, 4632}, false},
     {true, GeDtype::kInt8, {7360, 4632}, {7360, 4632}, false},
     {true, GeDtype::kBFloat16, {7360}, {7360}, false},
     {},
     {true, GeDtype::kBFloat16, {7360}, {7360}, false},
     {true, GeDtype::kBFloat16, {52, 7360}, {52, 7360}, false},
     false, true, 32, 64,
     516, 31, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 27, 0, 0, 0, 0, 0, 0, 0, 0, 31, 52, 7360, 4632, 4632, 52, 240, 4632, 64, 240, 128, 24, 8, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 4, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L317_fanhua", "MIX_ASW", true,
     {true, GeDtype::kInt8, {4632, 52}, {4632, 52}, false},
     {true, GeDtype::kInt8, {7360, 4632}, {7360, 4632}, false},
     {true, GeDtype::kBFloat16, {7360}, {7360}, false},
     {},
     {true, GeDtype::kBFloat16, {7360}, {7360}, false},
     {true, GeDtype::kBFloat16, {52, 7360}, {52, 7360}, false},
     true, true, 32, 64,
     517, 31, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 27, 0, 0, 0, 0, 0, 0, 0, 0, 31, 52, 7360, 4632, 4632, 52, 240, 4632, 128, 240, 128, 8, 8, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L324_kernel", "MIX_ASW", true,
     {true, GeDtype::kInt8, {1240, 185}, {1240, 185}, false},
     {true, GeDtype::kInt8, {464, 1240}, {464, 1240}, false},
     {true, GeDtype::kFloat, {464}, {464}, false},
     {},
     {},
     {true, GeDtype::kBFloat16, {185, 464}, {185, 464}, false},
     true, true, 32, 64,
     773, 30, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 30, 185, 464, 1240, 1240, 128, 32, 1240, 128, 32, 256, 5, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 4, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {25, 51}},
    {"qbmmv3_950_L325_fanhua", "MIX_ASW", true,
     {true, GeDtype::kInt8, {256, 128}, {256, 128}, false},
     {true, GeDtype::kInt8, {128, 256}, {128, 256}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {256}, {256}, false},
     {true, GeDtype::kInt32, {256}, {256}, false},
     {true, GeDtype::kFloat16, {256, 256}, {256, 256}, false},
     false, false, 32, 64,
     512, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 8, 128, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 256, 256, 128, 128, 16, 128, 128, 16, 128, 128, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L327_fanhua", "MIX_ASW", true,
     {true, GeDtype::kInt8, {256, 128}, {256, 128}, false},
     {true, GeDtype::kInt8, {256, 128}, {256, 128}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {256}, {256}, false},
     {true, GeDtype::kInt32, {256}, {256}, false},
     {true, GeDtype::kFloat16, {256, 256}, {256, 256}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 16, 64, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 256, 256, 128, 128, 32, 64, 128, 32, 64, 128, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L328_fanhua", "MIX_ASW", true,
     {true, GeDtype::kInt8, {256, 128}, {256, 128}, false},
     {true, GeDtype::kInt8, {256, 128}, {256, 128}, false},
     {true, GeDtype::kFloat, {256}, {256}, false},
     {true, GeDtype::kFloat, {256}, {256}, false},
     {true, GeDtype::kInt32, {256}, {256}, false},
     {true, GeDtype::kFloat16, {256, 256}, {256, 256}, false},
     false, true, 32, 64,
     516, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 16, 64, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 256, 256, 128, 128, 32, 64, 128, 32, 64, 128, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L330_fanhua", "MIX_ASW", true,
     {true, GeDtype::kFloat8E4M3, {61, 142}, {61, 142}, false},
     {true, GeDtype::kFloat8E4M3, {61, 94}, {61, 94}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {142}, {142}, false},
     {},
     {true, GeDtype::kFloat16, {142, 94}, {142, 94}, false},
     true, false, 32, 64,
     769, 6, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 71, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 142, 94, 61, 61, 142, 94, 61, 160, 96, 64, 1, 12, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 1, 1, 0, 0},
     {25, 51}},
    {"qbmmv3_950_L331_fanhua", "MIX_ASW", true,
     {true, GeDtype::kFloat8E5M2, {10, 112}, {10, 112}, false},
     {true, GeDtype::kFloat8E4M3, {104, 112}, {104, 112}, false},
     {true, GeDtype::kFloat, {104}, {104}, false},
     {true, GeDtype::kFloat, {10}, {10}, false},
     {true, GeDtype::kFloat, {104}, {104}, false},
     {true, GeDtype::kBFloat16, {10, 104}, {10, 104}, false},
     false, true, 32, 64,
     772, 7, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 5, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 10, 104, 112, 112, 10, 16, 112, 16, 16, 128, 1, 32, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L333_fanhua", "MIX_ASW", true,
     {true, GeDtype::kFloat8E5M2, {62, 242}, {62, 242}, false},
     {true, GeDtype::kFloat8E5M2, {79, 62}, {79, 62}, false},
     {true, GeDtype::kFloat, {79}, {79}, false},
     {true, GeDtype::kFloat, {242}, {242}, false},
     {true, GeDtype::kFloat, {79}, {79}, false},
     {true, GeDtype::kFloat, {242, 79}, {242, 79}, false},
     true, true, 32, 64,
     773, 5, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 121, 80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 242, 79, 62, 62, 242, 79, 62, 256, 80, 64, 1, 16, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 8, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L334_fanhua", "MIX_ASW", true,
     {true, GeDtype::kHiFloat8, {242, 62}, {242, 62}, false},
     {true, GeDtype::kHiFloat8, {62, 79}, {62, 79}, false},
     {true, GeDtype::kFloat, {79}, {79}, false},
     {true, GeDtype::kFloat, {242}, {242}, false},
     {true, GeDtype::kFloat, {79}, {79}, false},
     {true, GeDtype::kBFloat16, {242, 79}, {242, 79}, false},
     false, false, 32, 64,
     768, 6, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 121, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 242, 79, 62, 62, 242, 79, 62, 256, 96, 64, 1, 12, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L336_fanhua", "MIX_ASW", true,
     {true, GeDtype::kHiFloat8, {75, 68}, {75, 68}, false},
     {true, GeDtype::kHiFloat8, {71, 68}, {71, 68}, false},
     {true, GeDtype::kFloat, {71}, {71}, false},
     {true, GeDtype::kFloat, {75}, {75}, false},
     {true, GeDtype::kFloat, {71}, {71}, false},
     {true, GeDtype::kFloat16, {75, 71}, {75, 71}, false},
     false, true, 32, 64,
     772, 25, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 8, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25, 75, 71, 68, 68, 16, 16, 68, 16, 16, 128, 1, 32, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L337_fanhua", "MIX_ASW", true,
     {true, GeDtype::kHiFloat8, {62, 242}, {62, 242}, false},
     {true, GeDtype::kHiFloat8, {62, 79}, {62, 79}, false},
     {true, GeDtype::kFloat, {79}, {79}, false},
     {true, GeDtype::kFloat, {242}, {242}, false},
     {true, GeDtype::kFloat, {79}, {79}, false},
     {true, GeDtype::kBFloat16, {242, 79}, {242, 79}, false},
     true, false, 32, 64,
     769, 6, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 121, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 242, 79, 62, 62, 242, 79, 62, 256, 96, 64, 1, 12, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L380_qbmm_int4_pertoken_perchannel_ut_function_cases_0", "MIX_ASW", true,
     {true, GeDtype::kInt4, {128, 64}, {128, 64}, false},
     {true, GeDtype::kInt4, {64, 32}, {64, 32}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {128}, {128}, false},
     {true, GeDtype::kFloat16, {32}, {32}, false},
     {true, GeDtype::kFloat16, {128, 32}, {128, 32}, false},
     false, false, 32, 64,
     768, 2, 16787456,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 64, 32, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 128, 32, 64, 64, 128, 32, 64, 128, 32, 64, 1, 32, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L381_qbmm_int4_pertoken_perchannel_ut_function_cases_1", "MIX_ASW", true,
     {true, GeDtype::kInt4, {128, 64}, {128, 64}, false},
     {true, GeDtype::kInt4, {64, 32}, {64, 32}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {128}, {128}, false},
     {true, GeDtype::kFloat, {32}, {32}, false},
     {true, GeDtype::kFloat16, {128, 32}, {128, 32}, false},
     false, false, 32, 64,
     768, 2, 16787456,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 64, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 128, 32, 64, 64, 128, 32, 64, 128, 32, 64, 1, 32, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L383_qbmm_int4_pertoken_perchannel_ut_function_cases_3", "MIX_ASW", true,
     {true, GeDtype::kInt4, {128, 64}, {128, 64}, false},
     {true, GeDtype::kInt4, {32, 64}, {32, 64}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {128}, {128}, false},
     {true, GeDtype::kFloat, {32}, {32}, false},
     {true, GeDtype::kFloat16, {128, 32}, {128, 32}, false},
     false, true, 32, 64,
     516, 16, 16787456,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 8, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 128, 32, 64, 64, 16, 16, 64, 16, 16, 128, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L386_full_load_tail_balance_qbmm_KC_tail_case0050", "MIX_ASW", true,
     {true, GeDtype::kInt8, {339, 256}, {339, 256}, false},
     {true, GeDtype::kInt8, {10496, 256}, {10496, 256}, false},
     {true, GeDtype::kFloat, {10496}, {10496}, false},
     {true, GeDtype::kFloat, {339}, {339}, false},
     {},
     {true, GeDtype::kFloat16, {339, 10496}, {339, 10496}, false},
     false, true, 32, 64,
     772, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 79, 256, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 339, 10496, 256, 256, 176, 256, 256, 176, 256, 128, 2, 4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {25, 51}},
    {"qbmmv3_950_L395_fp8-kc-fp32-scale-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kFloat8E4M3, {1, 27, 240}, {1, 27, 240}, false},
     {true, GeDtype::kFloat8E4M3, {1, 40, 240}, {1, 40, 240}, false},
     {true, GeDtype::kFloat, {40}, {40}, false},
     {true, GeDtype::kFloat, {27}, {27}, false},
     {true, GeDtype::kFloat, {40}, {40}, false},
     {true, GeDtype::kFloat, {1, 27, 40}, {1, 27, 40}, false},
     false, true, 32, 64,
     772, 6, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 8, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 27, 40, 240, 240, 16, 16, 240, 16, 16, 256, 1, 16, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 8, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L396_fp8-kt-fp32-scale-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kFloat8E4M3, {1, 127, 69}, {1, 127, 69}, false},
     {true, GeDtype::kFloat8E4M3, {1, 69, 158}, {1, 69, 158}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {127}, {127}, false},
     {true, GeDtype::kFloat, {158}, {158}, false},
     {true, GeDtype::kFloat16, {1, 127, 158}, {1, 127, 158}, false},
     false, false, 32, 64,
     768, 10, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 64, 160, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 127, 158, 69, 69, 127, 158, 69, 128, 160, 96, 1, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 10, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L398_hifloat8-kt-fp32-scale-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kHiFloat8, {28, 328, 129}, {28, 328, 129}, false},
     {true, GeDtype::kHiFloat8, {1, 178, 328}, {1, 178, 328}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {129}, {129}, false},
     {true, GeDtype::kFloat, {178}, {178}, false},
     {true, GeDtype::kBFloat16, {28, 129, 178}, {28, 129, 178}, false},
     true, true, 32, 64,
     517, 30, 16777216,
     {28, 1, 28, 1, 1, 1, 28, 1, 1, 1, 1, 1, 1, 1, 28, 0, 1, 1, 0, 0, 65, 192, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 30, 129, 178, 328, 328, 129, 178, 328, 160, 192, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 6, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L399_fp8e4m3-dynamic-tc-fp32-scale-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kFloat8E4M3, {16, 32}, {16, 32}, false},
     {true, GeDtype::kFloat8E4M3, {32, 16}, {32, 16}, false},
     {true, GeDtype::kFloat, {16}, {16}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {16}, {16}, false},
     {true, GeDtype::kFloat16, {16, 16}, {16, 16}, false},
     false, false, 32, 64,
     768, 2, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 16, 16, 32, 32, 16, 16, 32, 16, 32, 32, 1, 64, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 32, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L401_hifloat8-dynamic-tc-fp32-scale-bias-fp32", "MIX_ASW", true,
     {true, GeDtype::kHiFloat8, {16, 32}, {16, 32}, false},
     {true, GeDtype::kHiFloat8, {32, 16}, {32, 16}, false},
     {true, GeDtype::kFloat, {16}, {16}, false},
     {true, GeDtype::kFloat, {1}, {1}, false},
     {true, GeDtype::kFloat, {16}, {16}, false},
     {true, GeDtype::kFloat, {16, 16}, {16, 16}, false},
     false, false, 32, 64,
     768, 2, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 16, 16, 32, 32, 16, 16, 32, 16, 32, 32, 1, 64, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 32, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 0, 0},
     {51}},
    {"qbmmv3_950_L423_mix_nz", "MIX_BASIC_API_ASW", true,
     {true, GeDtype::kInt8, {1, 128, 256}, {1, 128, 256}, false},
     {true, GeDtype::kInt8, {1, 256, 4096}, {1, 128, 16, 16, 32}, true},
     {true, GeDtype::kFloat, {4096}, {4096}, false},
     {true, GeDtype::kFloat, {128}, {128}, false},
     {true, GeDtype::kFloat, {4096}, {4096}, false},
     {true, GeDtype::kBFloat16, {1, 128, 4096}, {1, 128, 4096}, false},
     false, false, 32, 64,
     131600, 32, 16777216,
     {128, 4096, 256, 256, 256, 0, 8388736, 256, 0, 65537, 65537, 0, 66052, 516, 0, 0},
     {}},
    {"qbmmv3_950_L424_mix_nz", "MIX_BASIC_API_ASW", true,
     {true, GeDtype::kInt8, {1, 128, 256}, {1, 128, 256}, false},
     {true, GeDtype::kInt8, {1, 4096, 256}, {1, 8, 256, 16, 32}, true},
     {true, GeDtype::kFloat, {4096}, {4096}, false},
     {true, GeDtype::kFloat, {128}, {128}, false},
     {true, GeDtype::kFloat, {4096}, {4096}, false},
     {true, GeDtype::kBFloat16, {1, 128, 4096}, {1, 128, 4096}, false},
     false, true, 32, 64,
     131604, 32, 16777216,
     {128, 4096, 256, 256, 256, 0, 8388736, 256, 0, 65537, 65537, 0, 66052, 516, 0, 0},
     {}},
    {"qbmmv3_950_L426_mix_nz", "MIX_BASIC_API_ASW", true,
     {true, GeDtype::kInt8, {14, 401, 7549}, {14, 401, 7549}, false},
     {true, GeDtype::kInt8, {14, 7549, 1034}, {14, 33, 472, 16, 32}, true},
     {true, GeDtype::kFloat, {1034}, {1034}, false},
     {},
     {true, GeDtype::kFloat, {1034}, {1034}, false},
     {true, GeDtype::kBFloat16, {14, 401, 1034}, {14, 401, 1034}, false},
     false, false, 32, 64,
     131584, 32, 16777216,
     {14, 14, 14, 1, 1, 1, 14, 1, 1, 1, 14, 1, 1, 1, 14, 0, 2, 0, 0, 0, 0, 0, 401, 1034, 7549, 208, 256, 128, 384, 384, 0, 16843010, 2, 1, 1, 1, 0, 0},
     {}},
    {"qbmmv3_950_L427_mix_nz", "MIX_BASIC_API_ASW", true,
     {true, GeDtype::kInt8, {1, 128, 128}, {1, 128, 128}, false},
     {true, GeDtype::kInt8, {1, 128, 16384}, {1, 512, 8, 16, 32}, true},
     {true, GeDtype::kFloat, {16384}, {16384}, false},
     {true, GeDtype::kFloat, {128}, {128}, false},
     {true, GeDtype::kFloat, {16384}, {16384}, false},
     {true, GeDtype::kBFloat16, {1, 128, 16384}, {1, 128, 16384}, false},
     false, false, 32, 64,
     131856, 32, 16777216,
     {128, 16384, 128, 128, 128, 0, 16777344, 128, 0, 65537, 65537, 0, 66052, 516, 0, 0},
     {}},
    {"cube_asw_int8_perchannel_a_full_load", "CUBE_ASW", false,
     {true, GeDtype::kInt8, {256, 1024}, {256, 1024}, false},
     {true, GeDtype::kInt8, {2048, 1024}, {32, 128, 16, 32}, true},
     {true, GeDtype::kUint64, {2048}, {2048}, false},
     {},
     {},
     {true, GeDtype::kFloat16, {256, 2048}, {256, 2048}, false},
     false, true, 32, 64,
     260, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 256, 2048, 1024, 1024, 128, 128, 1024, 128, 128, 256, 4, 4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {25, 51}},
    {"cube_asw_int8_pertensor_bias", "CUBE_ASW", false,
     {true, GeDtype::kInt8, {4096, 2048}, {4096, 2048}, false},
     {true, GeDtype::kInt8, {2048, 7168}, {224, 128, 16, 32}, true},
     {true, GeDtype::kUint64, {1}, {1}, false},
     {},
     {true, GeDtype::kInt32, {7168}, {7168}, false},
     {true, GeDtype::kBFloat16, {4096, 7168}, {4096, 7168}, false},
     false, false, 32, 64,
     0, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 4096, 7168, 2048, 2048, 256, 256, 2048, 256, 256, 128, 6, 6, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
    {"cube_asw_hif8_transposed_a", "CUBE_ASW", false,
     {true, GeDtype::kHiFloat8, {4096, 1000}, {4096, 1000}, false},
     {true, GeDtype::kHiFloat8, {4096, 3000}, {94, 256, 16, 32}, true},
     {true, GeDtype::kUint64, {3000}, {3000}, false},
     {},
     {},
     {true, GeDtype::kFloat, {1000, 3000}, {1000, 3000}, false},
     true, false, 32, 64,
     1, 32, 16777216,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 32, 1000, 3000, 4096, 4096, 256, 256, 4096, 256, 256, 128, 6, 6, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 1, 0, 0},
     {25, 51}},
    {"cube_asw_e4m3_batch", "CUBE_ASW", false,
     {true, GeDtype::kFloat8E4M3, {4, 128, 512}, {4, 128, 512}, false},
     {true, GeDtype::kFloat8E4M3, {4, 1024, 512}, {4, 16, 64, 16, 32}, true},
     {true, GeDtype::kUint64, {1}, {1}, false},
     {},
     {true, GeDtype::kFloat, {1024}, {1024}, false},
     {true, GeDtype::kBFloat16, {4, 128, 1024}, {4, 128, 1024}, false},
     false, true, 32, 64,
     4, 32, 16777216,
     {4, 4, 4, 1, 1, 1, 4, 1, 1, 1, 4, 1, 1, 1, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 128, 1024, 512, 512, 64, 64, 512, 64, 64, 512, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0},
     {51}},
};
// clang-format on

QuantRequest RequestOf(const GoldenCase& c) {
  QuantRequest r;
  r.x1 = c.x1;
  r.x2 = c.x2;
  r.scale = c.scale;
  r.pertoken = c.pertoken;
  r.bias = c.bias;
  r.y = c.y;
  r.transpose_x1 = c.trans_a;
  r.transpose_x2 = c.trans_b;
  r.tensor_api = c.tensor_api;
  return r;
}

// The platform of CANN's unit test (UB 245760).
ChipSpec TestChip(uint32_t aic, uint32_t aiv) {
  ChipSpec chip;
  chip.aic_num = aic;
  chip.aiv_num = aiv;
  chip.l1_bytes = 524288;
  chip.l0a_bytes = 65536;
  chip.l0b_bytes = 65536;
  chip.l0c_bytes = 262144;
  chip.ub_bytes = 245760;
  chip.l2_bytes = 134217728;
  chip.bt_bytes = 4096;
  return chip;
}

// The strategy CANN's walk reaches first; MX_STREAMK, whose benefit gate is
// not ported, is skipped.
std::string FirstCapable(const QuantFacts& facts, const ChipSpec& chip) {
  for (QuantStrategyId id : kQuantStrategyOrder) {
    if (id == QuantStrategyId::kMxStreamK) continue;
    if (IsStrategyCapable(id, facts, chip, nullptr)) return std::string(QuantStrategyName(id));
  }
  return "";
}

const QuantStrategy& StrategyNamed(const std::string& name) {
  static const MixBasicApiAswStrategy mix_basic;
  static const MixAswStrategy mix;
  static const CubeAswStrategy cube;
  if (name == mix_basic.name()) return mix_basic;
  if (name == mix.name()) return mix;
  return cube;
}

class MixGoldenTest : public testing::TestWithParam<GoldenCase> {};

TEST_P(MixGoldenTest, MatchesCann) {
  const GoldenCase& c = GetParam();
  absl::StatusOr<QuantFacts> facts = ParseQuantRequest(RequestOf(c));
  ASSERT_TRUE(facts.ok()) << facts.status();
  const ChipSpec chip = TestChip(c.aic, c.aiv);
  const QuantStrategy& strategy = StrategyNamed(c.strategy);
  ASSERT_EQ(strategy.name(), c.strategy);

  EXPECT_EQ(FirstCapable(*facts, chip), c.strategy);
  ASSERT_TRUE(strategy.IsCapable(*facts, chip, nullptr));
  absl::StatusOr<QuantPlan> plan = strategy.DoTiling(*facts, chip);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->strategy, c.strategy);
  EXPECT_EQ(plan->key.Encode(), c.key);
  EXPECT_EQ(plan->block_dim, c.block_dim);
  EXPECT_EQ(plan->workspace_bytes, c.workspace_bytes);
  EXPECT_EQ(plan->schedule_mode, 0u);
  ASSERT_EQ(plan->words.size(), c.words.size());
  for (size_t i = 0; i < c.words.size(); ++i) {
    if (std::count(c.ignored_words.begin(), c.ignored_words.end(), i) > 0) continue;
    EXPECT_EQ(plan->words[i], c.words[i]) << "word " << i;
  }
}

std::string CaseName(const testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cann950, MixGoldenTest, testing::ValuesIn(kGoldenCases), CaseName);

const GoldenCase& FindCase(const std::string& strategy) {
  for (const GoldenCase& c : kGoldenCases) {
    if (strategy == c.strategy) return c;
  }
  return kGoldenCases[0];
}

TEST(MixStrategiesTest, CoreRatioOtherThanTwoEndsTheWalk) {
  for (const char* name : {"MIX_BASIC_API_ASW", "MIX_ASW"}) {
    const GoldenCase& c = FindCase(name);
    absl::StatusOr<QuantFacts> facts = ParseQuantRequest(RequestOf(c));
    ASSERT_TRUE(facts.ok()) << facts.status();
    const QuantStrategy& strategy = StrategyNamed(name);
    const ChipSpec chip = TestChip(32, 60);
    ASSERT_TRUE(strategy.IsCapable(*facts, chip, nullptr)) << name;
    EXPECT_EQ(strategy.DoTiling(*facts, chip).status().code(),
              absl::StatusCode::kFailedPrecondition)
        << name;
  }
}

TEST(CubeAswTest, CoreRatioDoesNotMatter) {
  const GoldenCase& c = FindCase("CUBE_ASW");
  absl::StatusOr<QuantFacts> facts = ParseQuantRequest(RequestOf(c));
  ASSERT_TRUE(facts.ok()) << facts.status();
  CubeAswStrategy cube;
  EXPECT_TRUE(cube.DoTiling(*facts, TestChip(32, 60)).ok());
}

TEST(CubeAswTest, TensorApiLeavesNzWeightToTheBasicApiKernel) {
  GoldenCase c = FindCase("CUBE_ASW");
  c.tensor_api = true;
  absl::StatusOr<QuantFacts> facts = ParseQuantRequest(RequestOf(c));
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(FirstCapable(*facts, TestChip(32, 64)), "CUBE_BASIC_API_ASW");
}

TEST(MixAswTest, Int4PairIsTiledAsInt8WithWorkspaceCopies) {
  QuantFacts facts;
  facts.m = 1000;
  facts.n = 512;
  facts.k = 2048;
  facts.x1 = facts.x2 = GeDtype::kInt4;
  facts.y = GeDtype::kBFloat16;
  facts.scale = GeDtype::kFloat;
  facts.is_per_channel = true;
  const ChipSpec chip = TestChip(32, 64);
  MixAswStrategy mix;
  std::string reason;
  ASSERT_TRUE(mix.IsCapable(facts, chip, &reason)) << reason;
  absl::StatusOr<QuantPlan> int4 = mix.DoTiling(facts, chip);
  ASSERT_TRUE(int4.ok()) << int4.status();
  QuantFacts as_int8 = facts;
  as_int8.x1 = as_int8.x2 = GeDtype::kInt8;
  absl::StatusOr<QuantPlan> int8 = mix.DoTiling(as_int8, chip);
  ASSERT_TRUE(int8.ok()) << int8.status();
  EXPECT_EQ(int4->words, int8->words);
  EXPECT_EQ(int4->key.Encode(), int8->key.Encode());
  EXPECT_EQ(int4->workspace_bytes, kLibraryWorkspaceBytes + 1000 * 2048 + 2048 * 512);
  EXPECT_EQ(int8->workspace_bytes, kLibraryWorkspaceBytes);
}

TEST(HighLevelTilingTest, PertokenUbRows) {
  QuantFacts facts;
  facts.m = 256;
  facts.y = GeDtype::kFloat16;
  facts.scale = GeDtype::kFloat;
  facts.pertoken = GeDtype::kFloat;
  facts.is_per_channel = true;
  facts.is_pertoken = true;
  // (245760 - 4 * 160 - 2 * 28) / (2 * 6 * 160 + 2 * 4) = 127, under 128.
  const UbTiling ub = CalcPertokenUbTiling(facts, TestChip(32, 64), 256, 160);
  EXPECT_EQ(ub.calc_m, 127u);
  EXPECT_EQ(ub.calc_n, 160u);
  // Capped at half of M.
  facts.m = 31;
  EXPECT_EQ(CalcPertokenUbTiling(facts, TestChip(32, 64), 256, 160).calc_m, 16u);
}

}  // namespace
}  // namespace npu::tiling::quant
