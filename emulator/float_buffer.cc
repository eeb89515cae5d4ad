#include "emulator/float_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace npu::emu {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;
// Below this a buffer comes from the heap: a mapping would cost more than
// the faults it saves.
constexpr size_t kMapAtLeastBytes = size_t{4} << 20;
constexpr size_t kCacheLineBytes = 64;

size_t RoundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

FloatBuffer::FloatBuffer(size_t size) : size_(size) {
  if (size == 0) return;
  if (size > (~size_t{0} - kHugePageBytes) / sizeof(float)) throw std::bad_alloc();
  const size_t bytes = size * sizeof(float);
  if (bytes >= kMapAtLeastBytes) {
    // Map one huge page more than needed and trim both ends to 2 MiB
    // boundaries, so that every page of the buffer can be a huge one.
    const size_t want = RoundUp(bytes, kHugePageBytes);
    const size_t span = want + kHugePageBytes;
    void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto base = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = RoundUp(base, kHugePageBytes);
    if (aligned > base) munmap(raw, aligned - base);
    const uintptr_t end = base + span, aligned_end = aligned + want;
    if (end > aligned_end) munmap(reinterpret_cast<void*>(aligned_end), end - aligned_end);
#if defined(MADV_HUGEPAGE)
    madvise(reinterpret_cast<void*>(aligned), want, MADV_HUGEPAGE);
#endif
    data_ = reinterpret_cast<float*>(aligned);
    mapped_bytes_ = want;
    return;
  }
  void* heap = std::aligned_alloc(kCacheLineBytes, RoundUp(bytes, kCacheLineBytes));
  if (heap == nullptr) throw std::bad_alloc();
  data_ = static_cast<float*>(heap);
}

FloatBuffer::~FloatBuffer() { Release(); }

FloatBuffer::FloatBuffer(FloatBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)) {}

FloatBuffer& FloatBuffer::operator=(FloatBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

void FloatBuffer::Release() {
  if (data_ == nullptr) return;
  if (mapped_bytes_ > 0) {
    munmap(data_, mapped_bytes_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = 0;
  mapped_bytes_ = 0;
}

}  // namespace npu::emu
