#include "server/service/provenance.h"

#include <array>
#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "server/service/convert.h"

#ifndef NPU_ENGINE_VERSION
#error "NPU_ENGINE_VERSION is set by server/CMakeLists.txt"
#endif
#ifndef NPU_ENGINE_REVISION
#error "NPU_ENGINE_REVISION is set by server/CMakeLists.txt"
#endif

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;

// 64-bit FNV-1a, continued from `hash`.
uint64_t Fnv1a(absl::string_view bytes, uint64_t hash = 14695981039346656037ull) {
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string Deterministic(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

// 16 lowercase hex digits (every FULL answer carries one: no format parser).
FingerprintDigits HexDigits(uint64_t hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  FingerprintDigits hex;
  for (int i = 15; i >= 0; --i, hash >>= 4) hex.digits[i] = kDigits[hash & 0xf];
  return hex;
}
std::string Hex(uint64_t hash) { return std::string(HexDigits(hash).view()); }

// What the fingerprint reads of a chip: its figures in wire order and its
// architecture.
struct ChipFigures {
  std::array<uint64_t, npu::tiling::kChipFieldCount> values{};
  npu::tiling::NpuArch arch{};

  explicit ChipFigures(const npu::tiling::ChipSpec& chip) : arch(chip.npu_arch) {
    size_t i = 0;
    ForEachChipField([&](const npu::tiling::ChipField& field, const ChipFieldWire&) {
      values[i++] = field.Get(chip);
    });
  }
  bool operator==(const ChipFigures& other) const {
    return values == other.values && arch == other.arch;
  }
};

uint64_t FingerprintHash(const ChipFigures& figures) {
  uint64_t hash = Fnv1a("");
  for (uint64_t value : figures.values) {
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
    hash = Fnv1a(absl::string_view(bytes, sizeof(bytes)), hash);
  }
  const std::string_view arch = npu::tiling::NpuArchName(figures.arch);
  return Fnv1a(absl::string_view(arch.data(), arch.size()), hash);
}

}  // namespace

std::string_view EngineVersion() { return NPU_ENGINE_VERSION; }
std::string_view EngineRevision() { return NPU_ENGINE_REVISION; }

pb::Provenance EngineProvenance() {
  pb::Provenance provenance;
  provenance.set_engine_version(NPU_ENGINE_VERSION);
  provenance.set_engine_revision(NPU_ENGINE_REVISION);
  provenance.set_cann_revision(kCannRevision);
  return provenance;
}

std::string ChipFingerprint(const npu::tiling::ChipSpec& chip) {
  return std::string(ChipFingerprintDigits(chip).view());
}

FingerprintDigits ChipFingerprintDigits(const npu::tiling::ChipSpec& chip) {
  struct Memo {
    ChipFigures figures;
    FingerprintDigits digits;
  };
  thread_local std::optional<Memo> last;
  ChipFigures figures(chip);
  if (!last.has_value() || !(last->figures == figures)) {
    const FingerprintDigits digits = HexDigits(FingerprintHash(figures));
    last.emplace(Memo{figures, digits});
  }
  return last->digits;
}

std::string DecisionKey(const pb::MatmulProblem& problem, const std::string& chip_fingerprint) {
  uint64_t hash = Fnv1a(Deterministic(problem));
  hash = Fnv1a(chip_fingerprint, hash);
  hash = Fnv1a(NPU_ENGINE_VERSION, hash);
  return Hex(hash);
}

}  // namespace npu::server
