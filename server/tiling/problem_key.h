// Canonical bytes of what a decision depends on, for the service's caches.
//
// The engine's answer is a pure function of the problem, the chip and the
// forced strategy. These functions append each of them as fixed-width
// little-endian numbers and length-prefixed lists, in one fixed order, so
// that two inputs the engine cannot tell apart give the same bytes and any
// two it can tell apart do not; the fields the engine ignores (the bias
// dtype without a bias, the figures of a disabled slice view) are written
// as their defaults. Part of `npu_tiling_types`.
#ifndef NPU_SERVER_TILING_PROBLEM_KEY_H_
#define NPU_SERVER_TILING_PROBLEM_KEY_H_

#include <string>
#include <string_view>

#include "server/tiling/types.h"

namespace npu::tiling {

// Appends the problem's canonical bytes to `key`.
void AppendProblemKey(const MatmulProblem& problem, std::string& key);

// Appends the chip's: its name, its architecture and every figure of
// kChipFields.
void AppendChipKey(const ChipSpec& chip, std::string& key);

// Appends `text` with its length before it.
void AppendTextKey(std::string_view text, std::string& key);

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_PROBLEM_KEY_H_
