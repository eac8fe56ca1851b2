#pragma once
// Per-thread scratch memory for row kernels: grown on demand and reused across rows, so a batch of
// many short rows allocates once per thread, not once per row. Buffers are not initialised (no
// zero-fill): a kernel that uses only part of a large buffer touches only those pages.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace sharp::norm {

class Workspace {
 public:
  // Slots 0-3 belong to row kernels; 4-7 to the Normaliser base class (widening float rows).
  static constexpr std::size_t kDoubleSlots = 8;

  // A buffer of at least `count` doubles; distinct slots never alias. Contents are unspecified.
  double* doubles(std::size_t slot, std::size_t count) { return grow(doubles_[slot], count); }
  std::uint32_t* indices(std::size_t count) { return grow(indices_, count); }

 private:
  template <class T>
  struct Buffer {
    std::unique_ptr<T[]> data;
    std::size_t size = 0;
  };
  template <class T>
  static T* grow(Buffer<T>& b, std::size_t count) {
    if (b.size < count) {
      b.data.reset(new T[count]);  // default-initialised: no page is touched here
      b.size = count;
    }
    return b.data.get();
  }

  Buffer<double> doubles_[kDoubleSlots];
  Buffer<std::uint32_t> indices_;
};

}  // namespace sharp::norm
