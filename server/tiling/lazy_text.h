// A text kept as its pieces and concatenated, as absl::StrCat() would, only
// when it is read.
//
// The engine explains every decision that asks for it (each strategy's
// reason in the trace, the chosen plan's detail), but the words are read
// only when an answer is encoded, and often not at all (a cached decision
// served in the compact view). Keeping the numbers instead of their digits
// takes the formatting and the heap off the decision path; the text read is
// the same, byte for byte.
//
// Kept by value: arithmetic values (bool included), std::string (moved or
// copied), string_view (copied into a string), other LazyTexts, and C
// strings, which are kept as pointers: pass only literals or other strings
// of static storage as `const char*`. A text of one C string is kept in
// place; any other in one heap block. A piece of any other type (an
// absl::AlphaNum, ...) makes the text formatted at once. A LazyText is
// immutable, so reading one from several threads is safe.
#ifndef NPU_SERVER_TILING_LAZY_TEXT_H_
#define NPU_SERVER_TILING_LAZY_TEXT_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace npu::tiling {

class LazyText;

namespace lazy_text_internal {

// How a piece of type T is kept: T itself for numbers and strings, const
// char* for C strings, void when it is not kept (formatted at once).
template <typename T, typename = void>
struct Kept {
  using type = void;
};
template <typename T>
struct Kept<T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, char>>> {
  using type = T;
};
template <>
struct Kept<std::string> {
  using type = std::string;
};
template <>
struct Kept<LazyText> {
  using type = LazyText;
};
template <>
struct Kept<std::string_view> {
  using type = std::string;  // copied: a view may outlive what it shows
};
template <>
struct Kept<const char*> {
  using type = const char*;
};
template <>
struct Kept<char*> {
  using type = const char*;
};
template <typename T>
using KeptType = typename Kept<std::decay_t<T>>::type;

template <typename T>
void AppendPiece(std::string* out, const T& piece);

// Whether every piece is kept (none is void).
template <typename... Kept>
constexpr bool AllKept() {
  return (!std::is_void_v<Kept> && ...);
}

}  // namespace lazy_text_internal

class LazyText {
 public:
  LazyText() = default;
  // Implicit, like std::string's: Capability::Yes("always capable").
  LazyText(const char* literal)
      : ops_(&kLiteralOps), data_(const_cast<char*>(literal)) {}                         // NOLINT
  LazyText(std::string text) { EmplaceHeap(std::tuple<std::string>(std::move(text))); }  // NOLINT

  // The concatenation of `pieces`, kept unformatted when every piece can be:
  // one C string in place, anything else in one heap block.
  template <typename... Pieces>
  static LazyText Of(Pieces&&... pieces) {
    LazyText text;
    if constexpr (sizeof...(Pieces) == 1 &&
                  (std::is_same_v<lazy_text_internal::KeptType<Pieces>, const char*> && ...)) {
      text = LazyText(static_cast<const char*>(pieces)...);
    } else if constexpr (lazy_text_internal::AllKept<lazy_text_internal::KeptType<Pieces>...>()) {
      text.EmplaceHeap(
          std::tuple<lazy_text_internal::KeptType<Pieces>...>(std::forward<Pieces>(pieces)...));
    } else {
      std::string formatted;
      (lazy_text_internal::AppendPiece(&formatted, pieces), ...);
      text.EmplaceHeap(std::tuple<std::string>(std::move(formatted)));
    }
    return text;
  }

  LazyText(const LazyText& other)
      : ops_(other.ops_),
        data_(other.ops_ != nullptr && other.ops_ != &kLiteralOps ? other.ops_->copy(other.data_)
                                                                  : other.data_) {}
  LazyText(LazyText&& other) noexcept
      : ops_(std::exchange(other.ops_, nullptr)), data_(std::exchange(other.data_, nullptr)) {}
  LazyText& operator=(const LazyText& other) {
    if (this != &other) *this = LazyText(other);
    return *this;
  }
  LazyText& operator=(LazyText&& other) noexcept {
    if (this != &other) {
      Reset();
      ops_ = std::exchange(other.ops_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
    }
    return *this;
  }
  ~LazyText() { Reset(); }

  // The text, formatted now.
  std::string str() const {
    std::string out;
    AppendTo(&out);
    return out;
  }
  void AppendTo(std::string* out) const {
    if (ops_ != nullptr) ops_->append(data_, out);
  }
  // Whether the text reads "" (checked without formatting it).
  bool empty() const { return ops_ == nullptr || ops_->empty(data_); }

  // Comparisons read the texts (for tests and checks, not hot paths).
  friend bool operator==(const LazyText& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const LazyText& a, const char* b) { return a.str() == b; }
  friend bool operator==(const LazyText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const LazyText& a, const LazyText& b) { return a.str() == b.str(); }
  template <typename T>
  friend bool operator!=(const LazyText& a, const T& b) {
    return !(a == b);
  }
  friend std::ostream& operator<<(std::ostream& os, const LazyText& text) {
    return os << text.str();
  }

 private:
  struct Ops {
    void (*append)(const void* data, std::string* out);
    bool (*empty)(const void* data);
    void* (*copy)(const void* data);
    void (*destroy)(void* data);
  };

  static inline constexpr Ops kLiteralOps = {
      [](const void* data, std::string* out) { out->append(static_cast<const char*>(data)); },
      [](const void* data) { return *static_cast<const char*>(data) == '\0'; },
      [](const void* data) { return const_cast<void*>(data); },
      [](void*) {},
  };

  template <typename Tuple>
  static const Ops* HeapOpsOf() {
    static constexpr Ops kOps = {
        [](const void* data, std::string* out) {
          std::apply(
              [out](const auto&... piece) { (lazy_text_internal::AppendPiece(out, piece), ...); },
              *static_cast<const Tuple*>(data));
        },
        [](const void* data) {
          return std::apply([](const auto&... piece) { return (IsEmptyPiece(piece) && ...); },
                            *static_cast<const Tuple*>(data));
        },
        [](const void* data) -> void* { return new Tuple(*static_cast<const Tuple*>(data)); },
        [](void* data) { delete static_cast<Tuple*>(data); },
    };
    return &kOps;
  }

  template <typename T>
  static bool IsEmptyPiece(const T& piece) {
    if constexpr (std::is_same_v<T, std::string>) {
      return piece.empty();
    } else if constexpr (std::is_same_v<T, const char*>) {
      return piece == nullptr || *piece == '\0';
    } else if constexpr (std::is_same_v<T, LazyText>) {
      return piece.empty();
    } else {
      return false;  // a number always has digits
    }
  }

  template <typename Tuple>
  void EmplaceHeap(Tuple&& tuple) {
    using Kept = std::decay_t<Tuple>;
    data_ = new Kept(std::forward<Tuple>(tuple));
    ops_ = HeapOpsOf<Kept>();
  }

  void Reset() {
    // A literal owns nothing: no call (most texts on the hot path are "").
    if (ops_ != nullptr && ops_ != &kLiteralOps) ops_->destroy(data_);
    ops_ = nullptr;
    data_ = nullptr;
  }

  const Ops* ops_ = nullptr;
  void* data_ = nullptr;  // the C string, or the heap tuple of pieces
};

namespace lazy_text_internal {

template <typename T>
void AppendPiece(std::string* out, const T& piece) {
  if constexpr (std::is_same_v<T, LazyText>) {
    piece.AppendTo(out);
  } else if constexpr (std::is_same_v<T, const char*>) {
    if (piece != nullptr) out->append(piece);
  } else {
    absl::StrAppend(out, piece);
  }
}

}  // namespace lazy_text_internal

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_LAZY_TEXT_H_
