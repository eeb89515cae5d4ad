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
  // MatMulV3.
  kZeroK,                 // K_EQUAL_ZERO
  kVectorMul,             // TO_MUL
  kVectorMultiMul,        // TO_MULTI_MUL
  kStreamK,               // BASIC_STREAM_K
  kSwizzledDataParallel,  // BASIC_ASWT
  // BatchMatMulV3.
  kBatchZeroK,  // BATCH_MATMUL_INPUT_K_EQUAL_ZERO
  // FusedMatMul's 2-D strategies (inherited from MatMulV3) and its K = 0.
  kFusedZeroK,                 // INPUT_K_EQUAL_ZERO_INHERITED_FROM_BMMV3
  kFusedStreamK,               // BASIC_STREAM_K_INHERITED_FROM_MMV3
  kFusedSwizzledDataParallel,  // BASIC_ASWT_INHERITED_FROM_MMV3
};

// Every built-in strategy id.
inline constexpr StrategyId kAllStrategyIds[] = {
    StrategyId::kZeroK,
    StrategyId::kVectorMul,
    StrategyId::kVectorMultiMul,
    StrategyId::kStreamK,
    StrategyId::kSwizzledDataParallel,
    StrategyId::kBatchZeroK,
    StrategyId::kFusedZeroK,
    StrategyId::kFusedStreamK,
    StrategyId::kFusedSwizzledDataParallel,
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
    case StrategyId::kBatchZeroK:
      return "BATCH_MATMUL_INPUT_K_EQUAL_ZERO";
    case StrategyId::kFusedZeroK:
      return "INPUT_K_EQUAL_ZERO_INHERITED_FROM_BMMV3";
    case StrategyId::kFusedStreamK:
      return "BASIC_STREAM_K_INHERITED_FROM_MMV3";
    case StrategyId::kFusedSwizzledDataParallel:
      return "BASIC_ASWT_INHERITED_FROM_MMV3";
  }
  return "?";
}

// The identifier of a built-in strategy's CANN name; nothing for other names.
constexpr std::optional<StrategyId> FindStrategyId(std::string_view name) {
  for (StrategyId id : kAllStrategyIds) {
    if (StrategyName(id) == name) return id;
  }
  return std::nullopt;
}

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_STRATEGY_ID_H_
