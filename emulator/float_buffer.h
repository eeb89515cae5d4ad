// A host array of fp32 that the emulator fills completely before it reads
// it: the operands as the cube reads them, and the reference's copies.
//
// Unlike std::vector<float> it is not zeroed on construction (a whole pass
// over the memory, on the allocating thread), and a large one is mapped on
// 2 MiB boundaries and offered to the kernel as transparent huge pages
// (MADV_HUGEPAGE), so that filling tens of MiB takes tens of page faults
// rather than thousands. Where huge pages are off the advice is ignored and
// the buffer works the same.
#ifndef NPU_EMULATOR_FLOAT_BUFFER_H_
#define NPU_EMULATOR_FLOAT_BUFFER_H_

#include <cstddef>

#include "absl/types/span.h"

namespace npu::emu {

class FloatBuffer {
 public:
  FloatBuffer() = default;
  // `size` floats, uninitialized. Throws std::bad_alloc, like operator new,
  // when the host is out of memory.
  explicit FloatBuffer(size_t size);
  ~FloatBuffer();
  FloatBuffer(FloatBuffer&& other) noexcept;
  FloatBuffer& operator=(FloatBuffer&& other) noexcept;
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  float& operator[](size_t i) { return data_[i]; }
  float operator[](size_t i) const { return data_[i]; }
  absl::Span<const float> span() const { return {data_, size_}; }

 private:
  void Release();

  float* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;  // > 0: data_ is an mmap of this many bytes
};

}  // namespace npu::emu

#endif  // NPU_EMULATOR_FLOAT_BUFFER_H_
