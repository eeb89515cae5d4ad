// What an answer was computed with: the engine's version and source
// revision, the CANN source it reproduces, and stable fingerprints of a chip
// and of one decision, so that a client's cache can tell when an answer may
// have changed (GetGraphTiling, ListPlatforms).
#ifndef NPU_SERVER_SERVICE_PROVENANCE_H_
#define NPU_SERVER_SERVICE_PROVENANCE_H_

#include <string>
#include <string_view>

#include "npu/tiling/v1/tiling_service.pb.h"
#include "server/tiling/types.h"

namespace npu::server {

// The CANN source whose host tiling the engine reproduces (the commit of
// hicann/ops-nn the golden cases of tests/data come from).
inline constexpr char kCannRevision[] = "hicann/ops-nn@e5c3fa93";

// This service's version ("0.1.0") and source revision (git, or "unknown").
std::string_view EngineVersion();
std::string_view EngineRevision();

// Version, revision and CANN revision; `chip_fingerprint` is left empty.
npu::tiling::v1::Provenance EngineProvenance();

// 16 hex digits: a 64-bit FNV-1a hash of every figure of `chip` in wire
// order and its architecture (not its name: two profiles with the same
// figures get the same answers).
std::string ChipFingerprint(const npu::tiling::ChipSpec& chip);

// The same digits without the heap, for the FULL answer of every call:
// each thread keeps the last chip it hashed, and nearly every call of a
// running service is for the same profile.
struct FingerprintDigits {
  char digits[16];
  std::string_view view() const { return {digits, sizeof(digits)}; }
};
FingerprintDigits ChipFingerprintDigits(const npu::tiling::ChipSpec& chip);

// 16 hex digits: a hash of the canonical (deterministically serialized)
// `problem`, the chip fingerprint and the engine version.
std::string DecisionKey(const npu::tiling::v1::MatmulProblem& problem,
                        const std::string& chip_fingerprint);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_PROVENANCE_H_
