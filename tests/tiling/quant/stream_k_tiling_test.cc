// Tests of the MX_STREAMK QuantBatchMatmulV3 strategy (stream_k_tiling.h).
//
// Golden rows: every Ascend950 row of CANN's unit-test CSV
// (matmul/quant_batch_matmul_v3/tests/ut/op_host/test_quant_batch_matmul_v3.csv)
// whose problem is a Stream-K input, as decoded in
// shared/conformance/cann950_quant/cases.json (the names carry the CSV line),
// each written as the problem after CANN's parse. The rows CANN tiles with
// Stream-K must be admitted by the benefit gate and produce the key, block
// dim and 42 words (word 18, biasDtype, is not compared for the bias-less row
// whose CSV masks it); the others must be declined by the gate so that the
// next strategy answers. The calculator tests are CANN's own
// (test_quant_batch_matmul_v3_tiling.cpp, QuantBatchMatmulV3StreamK*).
#include "server/tiling/quant/stream_k_tiling.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "server/tiling/quant/quant_capability.h"

namespace npu::tiling::quant {
namespace {

// The problem after the parse: no batch, per-tensor or MX.
struct Problem {
  const char* name;
  uint64_t m, n, k;
  bool trans_a, trans_b;
  GeDtype x1, x2, y, scale;
  bool has_pertoken;
  GeDtype pertoken;
  bool has_bias;
  GeDtype bias;
  bool x2_nz;
  bool mx, per_tensor, double_scale;
  uint64_t group_m, group_n, group_k;
  int deterministic_level;
  uint32_t x1_quant_mode, x2_quant_mode;
  uint32_t aic, aiv;
};

struct StreamKCase {
  Problem problem;
  uint64_t key;
  uint32_t block_dim;
  int ignored_word;  // -1: none
  std::array<uint32_t, kStreamKWordCount> words;
};

// clang-format off
const StreamKCase kStreamKCases[] = {
    {{"qbmmv3_950_L242_mxfp8-streamk-nobias",
     256, 256, 8192, false, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
     133904, 32,
     18,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 8, 0, 3, 1, 1, 32, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65538, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
    {{"qbmmv3_950_L243_mxfp8-streamk-bias",
     256, 256, 8192, false, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
     133904, 32,
     -1,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 8, 0, 0, 1, 1, 32, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65794, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
    // The CSV row checks the key and block dim only: words of CANN's tiling.
    {{"qbmmv3_950_L248_fp8-doublescale-streamk-postbias",
     256, 256, 8192, false, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kFloat, true, GeDtype::kFloat, true, GeDtype::kFloat, false,
     false, true, true, 0, 0, 0, 0, 1, 1, 32, 64},
     133904, 32,
     -1,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65794, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
    // The CSV row checks the key and block dim only: words of CANN's tiling.
    {{"qbmmv3_950_L249_int8-fp32-scale-bias-allsk",
     256, 256, 8192, false, false,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kBFloat16, GeDtype::kFloat, false, GeDtype::kFloat, true, GeDtype::kFloat, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
     133904, 32,
     -1,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65794, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
    // The CSV row checks the key and block dim only: words of CANN's tiling.
    {{"qbmmv3_950_L251_fp8-doublescale-streamk-nobias-ta0tb0",
     256, 256, 8192, false, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2, GeDtype::kFloat16, GeDtype::kFloat, true, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, true, 0, 0, 0, 0, 1, 1, 32, 64},
     133904, 32,
     -1,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 3, 0, 0, 0, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65538, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
    // The CSV row checks the key and block dim only: words of CANN's tiling.
    {{"qbmmv3_950_L252_fp8-doublescale-streamk-nobias-ta1tb0",
     256, 256, 8192, true, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2, GeDtype::kFloat16, GeDtype::kFloat, true, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, true, 0, 0, 0, 0, 1, 1, 32, 64},
     133905, 32,
     -1,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 3, 0, 0, 0, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65538, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
    // The CSV row checks the key and block dim only: words of CANN's tiling.
    {{"qbmmv3_950_L254_fp8-doublescale-streamk-nobias-ta1tb1",
     256, 256, 8192, true, true,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2, GeDtype::kFloat16, GeDtype::kFloat, true, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, true, 0, 0, 0, 0, 1, 1, 32, 64},
     133909, 32,
     -1,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 3, 0, 0, 0, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65538, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
    // The CSV row checks the key and block dim only: words of CANN's tiling.
    {{"qbmmv3_950_L257_int8-encoded-scale-int32-bias-streamk",
     256, 256, 8192, false, false,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kBFloat16, GeDtype::kUint64, false, GeDtype::kFloat, true, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
     133904, 32,
     -1,
     {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 3, 0, 0, 0, 256, 256, 8192, 256, 256, 128, 256, 256, 256, 65794, 256, 256, 0, 0, 1, 1, 1, 1, 0, 0}},
};

// Stream-K inputs CANN tiles with another strategy (named after the row).
const Problem kDeclinedCases[] = {
    {"qbmmv3_950_L206_llama2-001" /* CUBE_BASIC_API_ASW */,
     4096, 128, 8192, false, false,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L208_llama2-004" /* CUBE_BASIC_API_ASW */,
     4096, 8192, 3584, true, false,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L209_llama2-005" /* CUBE_BASIC_API_ASW */,
     4096, 1024, 8192, true, true,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L227_mxfp4-pergroup-quanliang" /* MX_BASIC_API_ASW */,
     5344, 1976, 1260, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L228_mxfp4-pergroup-zengliang" /* MX_BASIC_API_ASW */,
     1, 5120, 14336, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L230_mxfp4-pergroup-kNotAlign256" /* MX_BASIC_API_ASW */,
     4096, 2048, 7104, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L231_mxfp4-pergroup-kLess64-NnotAlign16" /* MX_BASIC_API_ASW */,
     4097, 3, 62, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L238_mxfp4-pergroup-ScaleInnerNotEven" /*  */,
     1023, 2048, 32, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L240_mxfp4-pergroup-transTrueFalse" /*  */,
     1024, 256, 128, true, false,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L246_mxfp4-streamk-ta0tb1-small-gate-stub" /*  */,
     4, 128, 8192, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L258_hi8-llama2-0010" /* CUBE_BASIC_API_ASW */,
     4, 1024, 8192, false, true,
     GeDtype::kHiFloat8, GeDtype::kHiFloat8, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, true, GeDtype::kFloat, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L259_mxfp4-llama2-0001" /* MX_BASIC_API_ASW */,
     4096, 128, 8192, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L266_mxfp8-pergroup-ScaleInnerNotEven" /*  */,
     1023, 2048, 32, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L268_mxfp8-pergroup-AB-large-scaleInit" /* MX_BASIC_API_ASW */,
     1206, 1048, 8512, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L275_Al1fullload-mcnt4-A8W8-10-nopertoken" /* CUBE_BASIC_API_ASW */,
     512, 1048, 320, true, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L276_Al1fullload-mcnt4-A8W8-01-nopertoken" /* CUBE_BASIC_API_ASW */,
     512, 1048, 320, false, true,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L278_Al1fullload-mcnt4-mxfp8" /* MX_BASIC_API_ASW */,
     512, 1024, 512, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L279_Al1fullload-mcnt2-with-tail-mxfp8" /* MX_BASIC_API_ASW */,
     88, 9120, 1600, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L281_Al1fullload-mncntless32-mxfp8" /* MX_BASIC_API_ASW */,
     16, 592, 384, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L282_1971Compate-scale-bf16-bias-int32" /* CUBE_BASIC_API_ASW */,
     103, 7672, 9680, false, true,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kBFloat16, GeDtype::kBFloat16, false, GeDtype::kFloat, true, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L284_1971Compate-scale-bf16-bias-bf16" /* MIX_ASW */,
     798, 9032, 9728, true, false,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kBFloat16, GeDtype::kBFloat16, false, GeDtype::kFloat, true, GeDtype::kBFloat16, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L288_1971Compate-scale-fp32-bias-int32" /* CUBE_BASIC_API_ASW */,
     1260, 1224, 816, true, true,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kBFloat16, GeDtype::kFloat, false, GeDtype::kFloat, true, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L311_mxfp8-pergroup-A_batch-B_no_batch" /* MX_BASIC_API_ASW */,
     2412, 1048, 8512, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L314_mxfp8-true-false-afullload-tailsplit" /* MX_BASIC_API_ASW */,
     332, 5320, 496, true, false,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L323_kernel" /* CUBE_BASIC_API_ASW */,
     128, 1, 256, false, false,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kBFloat16, GeDtype::kFloat, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L370_unalign" /* MX_BASIC_API_ASW */,
     6, 9, 74, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L372_mxfp8-true-true" /* MX_BASIC_API_ASW */,
     254, 640, 64, true, true,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L373_mxfp8-true-false" /* MX_BASIC_API_ASW */,
     26, 7232, 32, true, false,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L385_full_load_tail_balance_qbmm_TT_tail_case0100" /* CUBE_BASIC_API_ASW */,
     403, 15616, 256, false, true,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L388_full_load_tail_balance_qbmm_MXFP8_tail_case0073" /* MX_BASIC_API_ASW */,
     366, 13312, 512, false, true,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L389_full_load_tail_balance_qbmm_MXFP4_tail_case0100" /* MX_BASIC_API_ASW */,
     404, 13824, 1024, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L390_nd_k_not_128_qbmm_nd_TT_case0025" /* CUBE_BASIC_API_ASW */,
     1817, 1024, 257, false, true,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L393_nd_k_not_128_qbmm_nd_MXFP8_case0027" /* MX_BASIC_API_ASW */,
     1819, 4096, 510, false, true,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E5M2, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L394_nd_k_not_128_qbmm_nd_MXFP8_case0028" /* MX_BASIC_API_ASW */,
     1820, 4352, 575, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L403_hifloat8-weightnz-tt-uint64-bias-bf16-ff" /* CUBE_BASIC_API_ASW */,
     10, 104, 112, false, false,
     GeDtype::kHiFloat8, GeDtype::kHiFloat8, GeDtype::kBFloat16, GeDtype::kUint64, false, GeDtype::kFloat, true, GeDtype::kFloat, true,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L405_fp8e4m3-weightnz-tc-uint64-bias-fp16-ff" /* CUBE_BASIC_API_ASW */,
     127, 158, 69, false, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, true, GeDtype::kFloat, true,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L406_fp8e4m3-weightnz-tc-uint64-bias-fp16-tf" /* CUBE_BASIC_API_ASW */,
     127, 158, 69, true, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, true, GeDtype::kFloat, true,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L412_opt_base_tail_load_balance" /* CUBE_BASIC_API_ASW */,
     403, 15616, 256, false, true,
     GeDtype::kInt8, GeDtype::kInt8, GeDtype::kFloat16, GeDtype::kUint64, false, GeDtype::kFloat, false, GeDtype::kInt32, false,
     false, true, false, 0, 0, 0, 0, 0, 1, 32, 64},
    {"qbmmv3_950_L414_opt_mx_full_cover_scaleK" /* MX_BASIC_API_ASW */,
     10240, 2624, 1024, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L415_opt_mx_halfk_scaleKL1" /* MX_BASIC_API_ASW */,
     8, 1536, 3072, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E5M2, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L417_mx_3buf_fp4_large_irregular" /* MX_BASIC_API_ASW */,
     5344, 1976, 1248, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, true, GeDtype::kFloat, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L418_mx_3buf_fp4_large_k_small_n" /* MX_BASIC_API_ASW */,
     4096, 128, 8192, false, true,
     GeDtype::kFloat4E2M1, GeDtype::kFloat4E2M1, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L420_mx_3buf_fp8_weightnz_tn_inner_unaligned" /* MX_BASIC_API_ASW */,
     10240, 2624, 1024, true, false,
     GeDtype::kFloat8E4M3, GeDtype::kFloat8E4M3, GeDtype::kBFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, true,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
    {"qbmmv3_950_L421_mx_3buf_fp8_nd_mixed_dtype" /* MX_BASIC_API_ASW */,
     1820, 4352, 576, false, true,
     GeDtype::kFloat8E5M2, GeDtype::kFloat8E4M3, GeDtype::kFloat16, GeDtype::kFloat8E8M0, true, GeDtype::kFloat8E8M0, false, GeDtype::kInt32, false,
     true, false, false, 1, 1, 32, 0, 8, 8, 32, 64},
};
// clang-format on

QuantFacts FactsOf(const Problem& p) {
  QuantFacts f;
  f.m = p.m;
  f.n = p.n;
  f.k = p.k;
  f.trans_a = p.trans_a;
  f.trans_b = p.trans_b;
  f.x1 = p.x1;
  f.x2 = p.x2;
  f.y = p.y;
  f.scale = p.scale;
  f.has_pertoken = p.has_pertoken;
  f.pertoken = p.pertoken;
  f.has_bias = p.has_bias;
  f.bias = p.bias;
  f.x2_nz = p.x2_nz;
  f.is_mx = p.mx;
  f.is_per_tensor = p.per_tensor;
  f.is_double_scale = p.double_scale;
  f.group_size_m = p.group_m;
  f.group_size_n = p.group_n;
  f.group_size_k = p.group_k;
  f.deterministic_level = p.deterministic_level;
  f.x1_quant_mode = p.x1_quant_mode;
  f.x2_quant_mode = p.x2_quant_mode;
  return f;
}

// The platform of CANN's unit test.
ChipSpec UtChip(uint32_t aic, uint32_t aiv) {
  ChipSpec chip;
  chip.name = "ascend950pr-ut";
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

class StreamKGoldenTest : public testing::TestWithParam<StreamKCase> {};

TEST_P(StreamKGoldenTest, MatchesCann) {
  const StreamKCase& c = GetParam();
  const QuantFacts facts = FactsOf(c.problem);
  const ChipSpec chip = UtChip(c.problem.aic, c.problem.aiv);
  MxStreamKStrategy strategy;
  std::string reason;
  ASSERT_TRUE(strategy.IsCapable(facts, chip, &reason)) << reason;
  const absl::StatusOr<QuantPlan> plan = strategy.DoTiling(facts, chip);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->strategy, "MX_STREAMK");
  EXPECT_EQ(plan->key.Encode(), c.key);
  EXPECT_EQ(plan->block_dim, c.block_dim);
  EXPECT_EQ(plan->schedule_mode, 1u);
  // 16 MiB library + one FP32 256 x 256 tile per core + 16 MiB reduction.
  EXPECT_EQ(plan->workspace_bytes, (uint64_t{32} << 20) + uint64_t{c.problem.aic} * 262144);
  ASSERT_EQ(plan->words.size(), c.words.size());
  for (size_t i = 0; i < c.words.size(); ++i) {
    if (static_cast<int>(i) == c.ignored_word) continue;
    EXPECT_EQ(plan->words[i], c.words[i]) << "word " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(CannCsv, StreamKGoldenTest, testing::ValuesIn(kStreamKCases),
                         [](const testing::TestParamInfo<StreamKCase>& info) {
                           std::string name = info.param.problem.name;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

class StreamKDeclineTest : public testing::TestWithParam<Problem> {};

TEST_P(StreamKDeclineTest, GateDeclines) {
  const QuantFacts facts = FactsOf(GetParam());
  const ChipSpec chip = UtChip(GetParam().aic, GetParam().aiv);
  ASSERT_TRUE(StreamKInputCapable(facts, chip, nullptr));
  std::string reason;
  EXPECT_FALSE(MxStreamKStrategy().IsCapable(facts, chip, &reason)) << reason;
}

INSTANTIATE_TEST_SUITE_P(CannCsv, StreamKDeclineTest, testing::ValuesIn(kDeclinedCases),
                         [](const testing::TestParamInfo<Problem>& info) {
                           std::string name = info.param.name;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// The problems of CANN's calculator tests: per-tensor or MX, 24 cores.
QuantFacts CalculatorFacts(bool mx, bool trans_a, bool trans_b, GeDtype dtype, uint64_t m,
                           uint64_t n, uint64_t k) {
  QuantFacts f;
  f.m = m;
  f.n = n;
  f.k = k;
  f.trans_a = trans_a;
  f.trans_b = trans_b;
  f.x1 = f.x2 = dtype;
  f.is_mx = mx;
  f.is_per_tensor = !mx;
  if (mx) f.scale = f.pertoken = GeDtype::kFloat8E8M0;
  return f;
}

ChipSpec CalculatorChip() {
  ChipSpec chip;
  chip.aic_num = 24;
  chip.aiv_num = 48;
  chip.l0a_bytes = 65536;
  chip.l0b_bytes = 65536;
  return chip;
}

TEST(StreamKBlockTest, Int8PieceIs256BytesForEveryTranspose) {
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      const auto block = ComputeStreamKBlock(
          CalculatorFacts(false, trans_a, trans_b, GeDtype::kInt8, 256, 256, 1000),
          CalculatorChip(), 1);
      ASSERT_TRUE(block.ok()) << block.status();
      EXPECT_EQ(block->single_core_k, 256u) << trans_a << trans_b;
    }
  }
}

TEST(StreamKBlockTest, Fp4PieceIs256BytesForEveryTranspose) {
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      const auto block = ComputeStreamKBlock(
          CalculatorFacts(true, trans_a, trans_b, GeDtype::kFloat4E2M1, 256, 256, 1000),
          CalculatorChip(), 1);
      ASSERT_TRUE(block.ok()) << block.status();
      EXPECT_EQ(block->single_core_k, 512u) << trans_a << trans_b;
    }
  }
}

TEST(StreamKBlockTest, PieceStaysByteAlignedWhenBaseKDoesNotDivideIt) {
  const auto block = ComputeStreamKBlock(
      CalculatorFacts(false, false, false, GeDtype::kInt8, 270, 16, 8192), CalculatorChip(), 1);
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(block->base_k, 224u);
  EXPECT_EQ(block->single_core_k, 768u);
  EXPECT_NE(block->single_core_k % block->base_k, 0u);
  // Two 144-row tiles (M split once, for 24 / 2 = 12 pieces of K each,
  // which the 256-byte alignment makes 11).
  EXPECT_EQ(block->base_m, 144u);
  EXPECT_EQ(block->stream_k_count, 11u);
}

TEST(StreamKL1Test, StepStaysWithinThePiece) {
  const QuantFacts facts = CalculatorFacts(false, false, false, GeDtype::kInt8, 270, 16, 8192);
  const auto l1 = ComputeStreamKL1(facts, UtChip(24, 48), 144, 32, 224, 768);
  ASSERT_TRUE(l1.ok()) << l1.status();
  // ceil(768 / 224) = 4 blocks of K per load; 4 * 224 = 896 bytes is not a
  // multiple of 256 but min(896, 768) = 768 is.
  EXPECT_EQ(l1->step_k, 4u);
  EXPECT_EQ(l1->depth_k, 8u);
}

TEST(StreamKGateTest, PlainTransposedSmallShapeIsDeclined) {
  // x1 plain, x2 transposed: K must exceed 8192.
  const QuantFacts facts = CalculatorFacts(true, false, true, GeDtype::kFloat8E4M3, 256, 256, 8192);
  const ChipSpec chip = UtChip(24, 48);
  const StreamKGateResult gate = EvaluateStreamKGate(facts, chip);
  EXPECT_FALSE(gate.admit);
  EXPECT_STREQ(gate.reason, "ta0tb1_small_shape");
}

TEST(StreamKGateTest, PostDequantBiasNeedsAllTilesSplit) {
  // INT8 with a FLOAT scale and a FLOAT bias: the bias is added after the
  // dequant, which only the Stream-K pieces do.
  QuantFacts facts = CalculatorFacts(false, false, false, GeDtype::kInt8, 256, 256, 8192);
  facts.scale = GeDtype::kFloat;
  facts.y = GeDtype::kBFloat16;
  facts.has_bias = true;
  facts.bias = GeDtype::kFloat;
  const ChipSpec chip = UtChip(32, 64);
  ASSERT_TRUE(IsPostDequantBiasInput(facts));
  const StreamKGateResult gate = EvaluateStreamKGate(facts, chip);
  ASSERT_TRUE(gate.admit) << gate.reason;
  EXPECT_LT(gate.sk_mn_count, chip.aic_num);
  EXPECT_TRUE(MxStreamKStrategy().IsCapable(facts, chip, nullptr));
}

}  // namespace
}  // namespace npu::tiling::quant
