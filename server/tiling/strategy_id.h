// Typed identifiers of the built-in strategies and their CANN names.
//
// Plans carry the CANN name of the strategy that produced them (the wire
// answer shows it next to ours); code that needs to know which strategy it
// has compares a StrategyId, not the text. Header-only, part of
// `npu_tiling` (the public API the advisor and the service use).
#ifndef NPU_SERVER_TILING_STRATEGY_ID_H_
#define NPU_SERVER_TILING_STRATEGY_ID_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace npu::tiling {

enum class StrategyId : uint8_t {
  kZeroK,                 // K_EQUAL_ZERO
  kVectorMul,             // TO_MUL
  kVectorMultiMul,        // TO_MULTI_MUL
  kStreamK,               // BASIC_STREAM_K
  kSwizzledDataParallel,  // BASIC_ASWT
};

// CANN's name of the strategy, e.g. "BASIC_ASWT".
constexpr std::string_view StrategyName(StrategyId id) {
  switch (id) {
    case StrategyId::kZeroK:
      return "K_EQUAL_ZERO";
    case StrategyId::kVectorMul:
      return "TO_MUL";
    case StrategyId::kVectorMultiMul:
      return "TO_MULTI_MUL";
    case StrategyId::kStreamK:
      return "BASIC_STREAM_K";
    case StrategyId::kSwizzledDataParallel:
      return "BASIC_ASWT";
  }
  return "?";
}

// The identifier of a built-in strategy's CANN name; nothing for other names.
constexpr std::optional<StrategyId> FindStrategyId(std::string_view name) {
  for (StrategyId id : {StrategyId::kZeroK, StrategyId::kVectorMul, StrategyId::kVectorMultiMul,
                        StrategyId::kStreamK, StrategyId::kSwizzledDataParallel}) {
    if (StrategyName(id) == name) return id;
  }
  return std::nullopt;
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGY_ID_H_
