#include "server/tiling/grouped/weight_quant/gwq_resplit.h"

#include <algorithm>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace npu::tiling::grouped::weight_quant {
namespace {

constexpr uint64_t kBlockBytes = 32;  // one 32-byte block of UB / L1 (ONE_BLK_SIZE)
// A tail above one 256-block per core is cut into twice as many blocks, so
// that each stays at most 256 wide.
constexpr uint64_t kResplitFactor = 2;

// GroupedMatmul::CeilDiv / CeilAlign of two uint64 (a zero divisor leaves
// the dividend, a zero alignment gives 0).
uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? a : (a + b - 1) / b; }
uint64_t CeilAlign(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b * b; }

// CalcFullNumBlocksResplitTiling: N > 128 per core, so every core takes a
// tail block of 128-256 columns.
void FullCores(const GwqFacts& f, uint64_t c0, GwqResplit* r) {
  const uint64_t cores = f.aic_num;
  const uint64_t round = cores * kGwqBaseN;
  r->main_block_size = kGwqBaseN;
  // One round of 256-blocks stays in the tail, which the re-split evens out.
  r->main_block_count = f.n / round > 1 ? f.n / round - 1 : 0;
  const uint64_t tail_cols = f.n - r->main_block_count * r->main_block_size * cores;
  const uint64_t tail = f.weight_nz && c0 != 0 ? tail_cols / c0 : tail_cols;
  const uint64_t blocks = tail_cols > round ? cores * kResplitFactor : cores;
  r->first_size = static_cast<uint16_t>(tail / blocks);
  r->second_size = static_cast<uint16_t>(r->first_size + 1);
  r->second_count = static_cast<uint16_t>(tail % blocks);
  r->first_count = static_cast<uint16_t>(blocks - r->second_count);
  if (f.weight_nz) {
    r->first_size = static_cast<uint16_t>(r->first_size * static_cast<uint16_t>(c0));
    r->second_size = static_cast<uint16_t>(r->second_size * static_cast<uint16_t>(c0));
  }
  r->detail =
      absl::StrCat("N=", f.n, " over ", cores, " cores: ", r->main_block_count,
                   " rounds of 256 per core, the tail of ", tail_cols, " in ", blocks, " blocks");
}

// CalcNoFullNumBlocksResplitTiling: N <= 128 per core. With enough groups to
// fill the cores at 256 per block, N is cut in N / 256 (rounded up) even
// blocks aligned to C0; else in N / 128 blocks, and some cores idle.
void NarrowN(const GwqFacts& f, uint64_t c0, GwqResplit* r) {
  r->main_block_size = kGwqBaseN;
  r->main_block_count = 0;
  const uint64_t blocks_256 = CeilDiv(f.n, kGwqBaseN);
  if (uint64_t{f.group_num} * blocks_256 >= f.aic_num) {
    r->first_size = static_cast<uint16_t>(CeilAlign(CeilDiv(f.n, blocks_256), c0));
    r->first_count = static_cast<uint16_t>(blocks_256);
    r->second_size = 0;
    r->second_count = 0;
    r->cube_blocks_n = blocks_256;
    r->detail = absl::StrCat("N=", f.n, " in ", blocks_256, " blocks of 256 at most: ", f.group_num,
                             " groups fill the ", f.aic_num, " cores");
    return;
  }
  const uint64_t tasks = std::max<uint64_t>(1, f.n / kGwqBaseNMin);
  r->cube_blocks_n = tasks;
  const uint64_t units = f.weight_nz && c0 != 0 ? f.n / c0 : f.n;
  r->first_size = static_cast<uint16_t>(units / tasks);
  r->second_size = static_cast<uint16_t>(r->first_size + 1);
  r->second_count = static_cast<uint16_t>(units % tasks);
  r->first_count = static_cast<uint16_t>(tasks - r->second_count);
  if (f.weight_nz && c0 != 0) {
    r->first_size = static_cast<uint16_t>(r->first_size * static_cast<uint16_t>(c0));
    r->second_size = static_cast<uint16_t>(r->second_size * static_cast<uint16_t>(c0));
  }
  r->detail = absl::StrCat("N=", f.n, " in ", tasks, " blocks of 128 or more on ", tasks, " of ",
                           f.aic_num, " cores (", f.group_num, " groups cannot fill them)");
}

}  // namespace

bool GwqTailResplitEnabled(const GwqFacts& f) {
  if (f.MultiMultiMulti()) return false;
  if (!f.weight_nz && !f.trans_b) return false;
  if (f.A16W4NdPerGroup() && f.trans_b) return false;
  return true;
}

uint64_t GwqC0(DataType x) {
  if (x == DataType::kInt4) return kBlockBytes * 2;
  return kBlockBytes / static_cast<uint64_t>(GwqGeSize(x));
}

absl::StatusOr<GwqResplit> GwqCalcResplit(const GwqFacts& f) {
  GwqResplit r;
  if (!GwqTailResplitEnabled(f)) {
    if (f.MultiMultiMulti()) {
      r.detail = "no tail re-split (lists of x, weights and y)";
    } else if (!f.weight_nz && !f.trans_b) {
      r.detail = "no tail re-split (a non-transposed ND weight)";
    } else {
      r.detail = "no tail re-split (a transposed A16W4 ND per-group weight)";
    }
    return r;
  }
  const uint64_t c0 = GwqC0(f.x);
  if (f.weight_nz && !f.trans_b && f.n % c0 > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("field grouped.weight: N=", f.n,
                     " of a non-transposed FRACTAL_NZ weight must be a "
                     "multiple of x's C0 ",
                     c0, " (CalcResplitTiling)"));
  }
  r.cube_blocks_n = f.aic_num;
  const uint64_t round = uint64_t{f.aic_num} * kGwqBaseN;
  if (f.n % round == 0) {
    r.main_block_size = kGwqBaseN;
    r.main_block_count = f.n / round;
    r.detail = absl::StrCat("N=", f.n, " is ", r.main_block_count, " rounds of 256 on each of ",
                            f.aic_num, " cores");
  } else if (f.n > uint64_t{f.aic_num} * kGwqBaseNMin) {
    FullCores(f, c0, &r);
  } else {
    NarrowN(f, c0, &r);
  }
  // CheckResplitTilingResult.
  for (const auto& [size, count, name] :
       {std::tuple<uint16_t, uint16_t, const char*>{r.first_size, r.first_count, "first"},
        {r.second_size, r.second_count, "second"}}) {
    if (f.n >= kGwqBaseNMin && count > 0 && (size < kGwqBaseNMin || size > kGwqBaseN)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "field grouped.weight: N=", f.n, " on ", f.aic_num, " cores re-splits into ", name,
          " tail blocks of ", size, " columns, outside [128, 256] (CheckResplitTilingResult)"));
    }
  }
  return r;
}

}  // namespace npu::tiling::grouped::weight_quant
