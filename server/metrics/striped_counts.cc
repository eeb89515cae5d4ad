#include "server/metrics/striped_counts.h"

#include "server/tiling/int_math.h"

namespace npu::server {

StripedCounts::StripedCounts(size_t size)
    : size_(size),
      lines_per_stripe_(tiling::CeilDiv(size, kCountsPerLine)),
      lines_(kStripes * lines_per_stripe_) {
  for (Line& line : lines_) {
    for (std::atomic<uint64_t>& count : line.counts) count.store(0, std::memory_order_relaxed);
  }
}

uint64_t StripedCounts::Sum(size_t index) const {
  uint64_t sum = 0;
  for (size_t stripe = 0; stripe < kStripes; ++stripe) {
    sum += Slot(stripe, index).load(std::memory_order_relaxed);
  }
  return sum;
}

size_t StripedCounts::NextStripe() {
  static std::atomic<size_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed) % kStripes;
}

}  // namespace npu::server
