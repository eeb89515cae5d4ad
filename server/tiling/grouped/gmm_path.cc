#include "server/tiling/grouped/gmm_path.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::tiling::grouped {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// GE's GetSizeByDataType() is 1 for exactly the 8-bit types (the 4-bit
// ones have a size of their own).
bool IsOneByte(DataType dtype) { return DataTypeBits(dtype) == 8; }

bool IsFourBitX(DataType dtype) {
  return dtype == DataType::kInt4 || dtype == DataType::kFloat4E2M1 ||
         dtype == DataType::kFloat4E1M2;
}

// The problem's fields outside `grouped`, which GroupedMatmul does not
// read: each must keep its default, so that no request means something the
// tiling ignores.
absl::Status CheckUnreadFields(const MatmulProblem& p) {
  const MatmulProblem d;
  const auto unread = [](std::string_view field) {
    return Invalid(absl::StrCat("field ", std::string(field),
                                " is not read by GroupedMatmul: its shapes, dtypes, formats, "
                                "transposes and bias are the tensor lists of `grouped`"));
  };
  if (p.m != d.m) return unread("m");
  if (p.n != d.n) return unread("n");
  if (p.k != d.k) return unread("k");
  if (p.dtype_a != d.dtype_a) return unread("dtype_a");
  if (p.dtype_b != d.dtype_b) return unread("dtype_b");
  if (p.dtype_c != d.dtype_c) return unread("dtype_c");
  if (p.has_bias) return unread("has_bias");
  if (p.trans_a) return unread("trans_a");
  if (p.trans_b) return unread("trans_b");
  if (p.format_a != d.format_a) return unread("format_a");
  if (p.format_b != d.format_b) return unread("format_b");
  if (p.format_c != d.format_c) return unread("format_c");
  if (!p.storage_shape_b.empty()) return unread("storage_shape_b");
  if (p.hf32) return unread("hf32");
  if (p.deterministic_level != 0) return unread("deterministic_level");
  return absl::OkStatus();
}

// One instance's shape (`part` "origin" or "storage"); the field's name is
// spelled only for a refusal, so a valid problem allocates nothing here.
absl::Status CheckShape(std::string_view tensor, size_t index, std::string_view part,
                        const std::vector<int64_t>& dims) {
  const auto field = [&] {
    return absl::StrCat("grouped.", std::string(tensor), "[", index, "].", std::string(part));
  };
  if (dims.size() > kMaxGroupedRank) {
    return Invalid(
        absl::StrCat("field ", field(), " has ", dims.size(), " dims; at most ", kMaxGroupedRank));
  }
  for (int64_t d : dims) {
    if (d < 0 || d > 2147483647) {
      return Invalid(absl::StrCat("field ", field(), "=[", absl::StrJoin(dims, ", "),
                                  "] has a dim outside [0, 2147483647]"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBounds(const GroupedInputs& g) {
  for (size_t t = 0; t < kGroupedTensorCount; ++t) {
    const std::string_view name = GroupedTensorName(static_cast<GroupedTensor>(t));
    const GroupedTensorList& list = g.tensors[t];
    if (list.size() > kMaxGroupedInstances) {
      return Invalid(absl::StrCat("field grouped.", std::string(name), " has ", list.size(),
                                  " instances; at most ", kMaxGroupedInstances));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      if (absl::Status s = CheckShape(name, i, "origin", list.instances[i].origin); !s.ok()) {
        return s;
      }
      if (absl::Status s = CheckShape(name, i, "storage", list.instances[i].storage); !s.ok()) {
        return s;
      }
    }
  }
  if (g.tuning_config.size() > kMaxGroupedInstances) {
    return Invalid(absl::StrCat("field grouped.tuning_config has ", g.tuning_config.size(),
                                " entries; at most ", kMaxGroupedInstances));
  }
  if (g.token_histogram.size() > kMaxHistogramEntries) {
    return Invalid(absl::StrCat("field grouped.token_histogram has ", g.token_histogram.size(),
                                " entries; at most ", kMaxHistogramEntries));
  }
  for (int64_t rows : g.token_histogram) {
    if (rows < 0) {
      return Invalid(
          absl::StrCat("field grouped.token_histogram has an entry ", rows, "; each must be >= 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view GmmPathName(GmmPath path) {
  switch (path) {
    case GmmPath::kNoQuant:
      return "NO_QUANT";
    case GmmPath::kQuant:
      return "QUANT";
    case GmmPath::kWeightQuant:
      return "WEIGHT_QUANT";
    case GmmPath::kPreArch35:
      return "PRE_ARCH35";
  }
  return "?";
}

GmmPath PathOf(const GroupedInputs& grouped) {
  const DataType x = grouped[GroupedTensor::kX].dtype;
  const DataType w = grouped[GroupedTensor::kWeight].dtype;
  if (IsFourBitX(x) || (IsOneByte(x) && IsOneByte(w))) return GmmPath::kQuant;
  if (x != w) return GmmPath::kWeightQuant;
  if (IsFloatMatmulType(x)) return GmmPath::kNoQuant;
  return GmmPath::kPreArch35;
}

absl::Status CheckGroupedProblem(const MatmulProblem& problem) {
  if (absl::Status s = CheckUnreadFields(problem); !s.ok()) return s;
  const GroupedInputs& g = problem.grouped;
  if (absl::Status s = CheckBounds(g); !s.ok()) return s;
  // TilingGMM reads x[0]'s description, then weight[0]'s.
  if (!g[GroupedTensor::kX].present()) {
    return Invalid(
        "field grouped.x has no instance: GroupedMatmul needs x[0] (CANN fails "
        "without its description)");
  }
  if (!g[GroupedTensor::kWeight].present()) {
    return Invalid(
        "field grouped.weight has no instance: GroupedMatmul needs weight[0] (CANN "
        "fails without its description)");
  }
  if (PathOf(g) == GmmPath::kPreArch35) {
    const std::string dtype(DataTypeName(g[GroupedTensor::kX].dtype));
    return Invalid(absl::StrCat(
        "fields grouped.x.dtype and grouped.weight.dtype = ", dtype, "/", dtype,
        " take no DAV_3510 path of GroupedMatmul (quant: 8- or 4-bit x; weight-quant: x != "
        "weight; no-quant: float16, bfloat16 or float32); CANN falls back to its pre-arch35 "
        "GMMTiling, whose plans are another chip's"));
  }
  return absl::OkStatus();
}

}  // namespace npu::tiling::grouped
