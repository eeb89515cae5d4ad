// Numerics check of a tiling plan: run it in the emulator on random inputs
// and compare C with an fp64 reference.
//
// A recommendation is only as good as the numbers it computes, so the
// advisor checks the plan it recommends here. Problems too large to hold in
// host memory or to emulate with numerics in a fraction of a second are
// checked on a shrunken copy that keeps the plan's structure: the same block
// sizes, K staging, split-K chunks, window, residency and model, fewer tiles
// (keeping the tail tiles and the K remainder), fewer cores and a shorter K.
// The full-size plan's schedule is checked separately by the timing
// emulation (every (m, n, k) point covered once, buffers, no deadlock).
// Part of `npu_advisor`.
#ifndef NPU_SERVER_ADVISOR_VERIFY_H_
#define NPU_SERVER_ADVISOR_VERIFY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/tiling/types.h"

namespace npu::advisor {

// Problems up to this many multiply-adds are checked as they are; larger
// ones are shrunk towards it. 2^24 MACs keep the fp64 reference (the slower
// half of the check) near a few tens of milliseconds.
inline constexpr uint64_t kDirectVerifyMacs = uint64_t{1} << 24;
// Host memory bounds the direct check as well: A, B and C of up to 4 Mi
// elements together (16 MiB as fp32, twice that for the fp64 reference).
inline constexpr uint64_t kDirectVerifyElements = uint64_t{1} << 22;

// What VerifyNumerics actually ran.
struct NumericsReport {
  bool shrunk = false;
  int64_t m = 0, n = 0, k = 0;   // the problem verified
  uint32_t cores = 0;            // block_dim of the plan verified
  double worst_error_ratio = 0;  // max |C - ref| / bound over C (<= 1 passes)
  std::string note;              // how the verified copy relates to the original
};

// A copy of (plan, problem, chip) with the same plan structure and at most
// about `max_macs` multiply-adds where the structure allows (see the file
// comment). The copy's operands are ND. kUnimplemented for a model it cannot
// shrink.
struct ShrunkCase {
  tiling::TilingPlan plan;
  tiling::MatmulProblem problem;
  tiling::ChipSpec chip;
  std::string note;
};
absl::StatusOr<ShrunkCase> ShrinkForVerification(const tiling::TilingPlan& plan,
                                                 const tiling::MatmulProblem& problem,
                                                 const tiling::ChipSpec& chip, uint64_t max_macs);

// Emulates `plan` with numerics on RandomInputs(seed) and checks every C
// element against the fp64 reference within the bound the dtypes imply
// (emu::CompareWithReference, emulator/accuracy.h). Problems above
// kDirectVerifyMacs are checked
// on ShrinkForVerification's copy; BatchMatMulV3 / FusedMatMul problems are
// checked as they are (x3 included), and kUnimplemented when that is more
// than 4x the direct limits; GroupedMatmul as it is within those limits,
// above them on a few experts' last blocks with the same block (its
// no-quant split-M plans; kUnimplemented for the others). kInternal names the first element out of
// bounds; emulator errors pass through. `report` (optional) says what ran.
absl::Status VerifyNumerics(const tiling::TilingPlan& plan, const tiling::MatmulProblem& problem,
                            const tiling::ChipSpec& chip, uint64_t seed,
                            NumericsReport* report = nullptr, int threads = 1);

}  // namespace npu::advisor

#endif  // NPU_SERVER_ADVISOR_VERIFY_H_
