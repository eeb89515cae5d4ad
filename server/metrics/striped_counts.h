// Counts updated on every RPC, kept in per-thread stripes and summed when
// read.
//
// A prometheus-cpp Counter is one atomic double, changed with a
// compare-and-swap loop, and a Histogram takes a mutex on every Observe():
// with several threads serving calls, each of those cache lines moves
// between cores on nearly every call. Here each thread adds, with a relaxed
// atomic, to its own stripe: a separate set of cache lines. Reads sum the
// stripes; they happen when Prometheus scrapes, far less often than writes.
#ifndef NPU_SERVER_METRICS_STRIPED_COUNTS_H_
#define NPU_SERVER_METRICS_STRIPED_COUNTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace npu::server {

class StripedCounts {
 public:
  // `size` counts, all zero.
  explicit StripedCounts(size_t size);

  StripedCounts(const StripedCounts&) = delete;
  StripedCounts& operator=(const StripedCounts&) = delete;

  size_t size() const { return size_; }

  // Adds `delta` to count `index` (< size()).
  void Add(size_t index, uint64_t delta = 1) {
    Slot(ThreadStripe(), index).fetch_add(delta, std::memory_order_relaxed);
  }

  // Count `index` over every stripe. Adds that happen meanwhile may or may
  // not be included; a count never goes down.
  uint64_t Sum(size_t index) const;

  // Stripes of a process: threads beyond this many share stripes (still
  // correctly, by the atomic add).
  static constexpr size_t kStripes = 16;

 private:
  static constexpr size_t kLineBytes = 64;
  static constexpr size_t kCountsPerLine = kLineBytes / sizeof(uint64_t);
  struct alignas(kLineBytes) Line {
    std::atomic<uint64_t> counts[kCountsPerLine];
  };

  // The calling thread's stripe, given out in turn on a thread's first use.
  static size_t ThreadStripe() {
    thread_local const size_t stripe = NextStripe();
    return stripe;
  }
  static size_t NextStripe();

  std::atomic<uint64_t>& Slot(size_t stripe, size_t index) {
    return lines_[stripe * lines_per_stripe_ + index / kCountsPerLine]
        .counts[index % kCountsPerLine];
  }
  const std::atomic<uint64_t>& Slot(size_t stripe, size_t index) const {
    return lines_[stripe * lines_per_stripe_ + index / kCountsPerLine]
        .counts[index % kCountsPerLine];
  }

  size_t size_;
  size_t lines_per_stripe_;
  std::vector<Line> lines_;
};

}  // namespace npu::server

#endif  // NPU_SERVER_METRICS_STRIPED_COUNTS_H_
