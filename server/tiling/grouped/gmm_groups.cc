#include "server/tiling/grouped/gmm_groups.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::tiling::grouped {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string Dims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

uint64_t Elements(const std::vector<int64_t>& dims) {
  uint64_t count = 1;
  for (int64_t d : dims) count *= static_cast<uint64_t>(d);
  return count;
}

// The last two dims of instance `i` of `list` (the kernels' GetTensorShape).
absl::StatusOr<std::pair<uint64_t, uint64_t>> Last2(const GroupedTensorList& list,
                                                    GroupedTensor tensor, size_t i) {
  const std::vector<int64_t>& dims = list.instances[i].origin;
  if (dims.size() < 2) {
    return Invalid(absl::StrCat("field grouped.", std::string(GroupedTensorName(tensor)), "[", i,
                                "]=", Dims(dims), " must have at least 2 dims"));
  }
  return std::pair<uint64_t, uint64_t>{static_cast<uint64_t>(dims[dims.size() - 2]),
                                       static_cast<uint64_t>(dims.back())};
}

// The [rows, cols] matrix a weight stores (x [k, n], transposed [n, k]).
// A FRACTAL_NZ weight whose origin is its NZ shape (two dims more than the
// ND form: the weight-quant path's (N1, K1, K0, N0) / transposed (K1, N1,
// N0, K0), the expert dim first for one weight) reads as the matrix of its
// fractals: rows A1 * A0, cols B1 * B0 of (B1, A1, A0, B0).
absl::StatusOr<std::pair<uint64_t, uint64_t>> WeightMatrix(const GroupedTensorList& w, size_t i,
                                                           bool single) {
  const std::vector<int64_t>& dims = w.instances[i].origin;
  if (w.format == Format::kFractalNz && dims.size() >= (single ? 5u : 4u)) {
    const size_t r = dims.size();
    return std::pair<uint64_t, uint64_t>{static_cast<uint64_t>(dims[r - 3] * dims[r - 2]),
                                         static_cast<uint64_t>(dims[r - 4] * dims[r - 1])};
  }
  return Last2(w, GroupedTensor::kWeight, i);
}

}  // namespace

std::string_view HistogramSourceName(HistogramSource source) {
  switch (source) {
    case HistogramSource::kNone:
      return "none";
    case HistogramSource::kGiven:
      return "given";
    case HistogramSource::kEven:
      return "even";
    case HistogramSource::kYShapes:
      return "y_shapes";
  }
  return "?";
}

std::vector<int64_t> EvenHistogram(uint64_t total, uint64_t groups) {
  std::vector<int64_t> histogram(groups, 0);
  if (groups == 0) return histogram;
  for (uint64_t g = 0; g < groups; ++g) {
    histogram[g] = static_cast<int64_t>(total / groups + (g < total % groups ? 1 : 0));
  }
  return histogram;
}

std::string GmmGroups::FormName() const {
  return absl::StrCat(single_x ? "s" : "m", "-", single_w ? "s" : "m", "-", single_y ? "s" : "m");
}

std::string GmmGroups::Describe() const {
  const size_t e = groups.size();
  std::string what;
  switch (group_type) {
    case kGroupTypeSplitM:
      what = absl::StrCat("split M over ", e, " groups, rows per group ");
      break;
    case kGroupTypeSplitK:
      what = absl::StrCat("split K over ", e, " groups, K per group ");
      break;
    default:
      return absl::StrCat("no split: ", e, " groups (", FormName(),
                          "), each group's sizes from its tensors");
  }
  // Long histograms are cut: the answer lists the first 16 entries.
  constexpr size_t kShown = 16;
  std::vector<int64_t> shown(histogram.begin(),
                             histogram.begin() + std::min(histogram.size(), kShown));
  absl::StrAppend(&what, absl::StrJoin(shown, ","), histogram.size() > kShown ? ",..." : "");
  switch (source) {
    case HistogramSource::kGiven:
      absl::StrAppend(&what, " (the token_histogram given)");
      break;
    case HistogramSource::kEven:
      absl::StrAppend(&what, " (spread evenly: no token_histogram was given; the kernels' time "
                             "depends on the real distribution)");
      break;
    case HistogramSource::kYShapes:
      absl::StrAppend(&what, " (the rows of each y: no token_histogram was given)");
      break;
    case HistogramSource::kNone:
      break;
  }
  return what;
}

size_t GmmGroups::GroupOfRow(uint64_t row) const {
  // The last group whose first row is at most `row`: of groups sharing a
  // first row, the ones before it hold no row.
  size_t lo = 0, hi = groups.size();
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    (groups[mid].c_row <= row ? lo : hi) = mid;
  }
  return lo;
}

absl::StatusOr<GmmGroups> GroupsOf(const GroupedInputs& g) {
  const GroupedTensorList& x = g[GroupedTensor::kX];
  const GroupedTensorList& w = g[GroupedTensor::kWeight];
  const GroupedTensorList& y = g[GroupedTensor::kY];
  const GroupedTensorList& bias = g[GroupedTensor::kBias];
  const GroupedTensorList& group_list = g[GroupedTensor::kGroupList];
  if (!x.present() || !w.present()) {
    return Invalid("field grouped.x / grouped.weight: GroupedMatmul needs both");
  }
  GmmGroups out;
  out.trans_x = g.transpose_x;
  out.trans_w = g.transpose_weight;
  out.single_x = x.size() == 1;
  out.single_w = w.size() == 1;
  out.single_y = g.split_item == 2 || g.split_item == 3;
  // The bias follows the weight: a list of weights reads bias[g].
  out.single_bias = out.single_w;
  out.has_bias = bias.present() && Elements(bias.instances[0].storage) != 0;
  if (g.group_list_type == kGroupListSparse) {
    return absl::UnimplementedError(
        "grouped.group_list_type=2: the emulator does not model a sparse group list (its "
        "kernels visit the experts the list names)");
  }

  // CANN's reading of the forms: a list of x, or split K with a list of
  // weights, is no split.
  out.group_type = g.group_type;
  if (out.group_type == kGroupTypeSplitM && !out.single_x) out.group_type = kGroupTypeNone;
  if (out.group_type == kGroupTypeSplitK && (!out.single_x || !out.single_w)) {
    out.group_type = kGroupTypeNone;
  }
  if (out.group_type != kGroupTypeNone && out.group_type != kGroupTypeSplitM &&
      out.group_type != kGroupTypeSplitK) {
    return Invalid(absl::StrCat("field grouped.group_type=", g.group_type,
                                " must be -1 (no split), 0 (split M) or 2 (split K)"));
  }
  const bool split = out.group_type != kGroupTypeNone;

  size_t groups = 0;
  if (split) {
    if (!group_list.present() || group_list.instances[0].origin.empty()) {
      return Invalid(absl::StrCat("field grouped.group_list: group_type ", out.group_type,
                                  " splits by group_list, which is missing"));
    }
    groups = static_cast<size_t>(group_list.instances[0].origin[0]);
  } else {
    groups = out.single_x ? w.size() : (out.single_w ? x.size() : std::min(x.size(), w.size()));
  }
  if (groups == 0) return Invalid("field grouped.group_list: the problem has no group");
  if (!out.single_w && w.size() < groups) {
    return Invalid(absl::StrCat("field grouped.weight has ", w.size(), " tensors, the problem has ",
                                groups, " groups"));
  }
  if (!out.single_y && y.present() && y.size() < groups) {
    return Invalid(absl::StrCat("field grouped.y has ", y.size(), " tensors, the problem has ",
                                groups, " groups"));
  }
  if (out.has_bias && !out.single_bias && bias.size() < groups) {
    return Invalid(absl::StrCat("field grouped.bias has ", bias.size(), " tensors, the problem has ",
                                groups, " groups"));
  }

  // Every group's shape as the kernels read it, before the split replaces
  // m or k.
  out.groups.resize(groups);
  for (size_t e = 0; e < groups; ++e) {
    GmmGroup& group = out.groups[e];
    group.x_index = out.single_x ? 0 : static_cast<uint32_t>(e);
    group.w_index = out.single_w ? 0 : static_cast<uint32_t>(e);
    group.y_index = out.single_y ? 0 : static_cast<uint32_t>(e);
    group.bias_index = out.single_w ? 0 : static_cast<uint32_t>(e);
    absl::StatusOr<std::pair<uint64_t, uint64_t>> xd = Last2(x, GroupedTensor::kX, group.x_index);
    if (!xd.ok()) return xd.status();
    absl::StatusOr<std::pair<uint64_t, uint64_t>> wd = WeightMatrix(w, group.w_index, out.single_w);
    if (!wd.ok()) return wd.status();
    group.m = out.trans_x ? xd->second : xd->first;
    group.k = out.trans_w ? wd->second : wd->first;
    group.n = out.trans_w ? wd->first : wd->second;
    const uint64_t x_k = out.trans_x ? xd->first : xd->second;
    if (!split && x_k != group.k) {
      return Invalid(absl::StrCat("field grouped.x[", group.x_index, "]=",
                                  Dims(x.instances[group.x_index].origin), " has k=", x_k,
                                  ", but grouped.weight[", group.w_index, "] has k=", group.k));
    }
  }

  if (split) {
    const std::pair<uint64_t, uint64_t> xd = *Last2(x, GroupedTensor::kX, 0);
    const bool split_m = out.group_type == kGroupTypeSplitM;
    out.split_total = split_m ? (out.trans_x ? xd.second : xd.first)
                              : (out.trans_x ? xd.first : xd.second);
    const char* dim = split_m ? "M" : "K";
    const char* unit = split_m ? "rows" : "columns of K";
    if (!g.token_histogram.empty()) {
      if (g.token_histogram.size() != groups) {
        return Invalid(absl::StrCat(
            "field grouped.token_histogram has ", g.token_histogram.size(),
            " entries, but the problem has ", groups,
            " groups (group_list's length): one entry per group, its ", unit));
      }
      const uint64_t sum = static_cast<uint64_t>(
          std::accumulate(g.token_histogram.begin(), g.token_histogram.end(), int64_t{0}));
      if (sum != out.split_total) {
        return Invalid(absl::StrCat("field grouped.token_histogram sums to ", sum, ", but x has ",
                                    dim, " = ", out.split_total, ": the groups' ", unit,
                                    " must add up to it"));
      }
      out.histogram = g.token_histogram;
      out.source = HistogramSource::kGiven;
    } else if (split_m && !out.single_y && y.present()) {
      for (size_t e = 0; e < groups; ++e) {
        absl::StatusOr<std::pair<uint64_t, uint64_t>> yd = Last2(y, GroupedTensor::kY, e);
        if (!yd.ok()) return yd.status();
        out.histogram.push_back(static_cast<int64_t>(yd->first));
      }
      const uint64_t sum = static_cast<uint64_t>(
          std::accumulate(out.histogram.begin(), out.histogram.end(), int64_t{0}));
      if (sum != out.split_total) {
        return Invalid(absl::StrCat("field grouped.y: its tensors' rows sum to ", sum,
                                    ", but x has M = ", out.split_total));
      }
      out.source = HistogramSource::kYShapes;
    } else {
      out.histogram = EvenHistogram(out.split_total, groups);
      out.source = HistogramSource::kEven;
    }
    for (size_t e = 0; e < groups; ++e) {
      (split_m ? out.groups[e].m : out.groups[e].k) = static_cast<uint64_t>(out.histogram[e]);
    }
  } else if (!g.token_histogram.empty()) {
    return Invalid(absl::StrCat(
        "field grouped.token_histogram is given, but the problem has no split (group_type ",
        g.group_type, " with ", x.size(), " x and ", w.size(),
        " weight tensors reads as -1): each group's sizes are its tensors' shapes"));
  }

  // The blocks each group reads and writes, and its place in the stacked C.
  uint64_t x_off = 0, w_off = 0, y_off = 0, bias_off = 0, k_off = 0, row = 0;
  for (GmmGroup& group : out.groups) {
    group.x_offset = out.single_x ? x_off : 0;
    group.w_offset = out.single_w ? w_off : 0;
    group.y_offset = out.single_y ? y_off : 0;
    group.bias_offset = out.single_w ? bias_off : 0;
    group.k_offset = k_off;
    group.c_row = row;
    x_off += group.m * group.k;
    w_off += group.k * group.n;
    y_off += group.m * group.n;
    bias_off += group.n;
    k_off += group.k;
    row += group.m;
    out.max_n = std::max(out.max_n, group.n);
  }
  out.stacked_rows = row;
  out.y_elements = y_off;

  // The tensors hold the blocks the groups read; y and the bias exactly.
  if (out.single_x && Elements(x.instances[0].origin) < x_off) {
    return Invalid(absl::StrCat("field grouped.x[0]=", Dims(x.instances[0].origin), " holds ",
                                Elements(x.instances[0].origin), " elements, but the groups read ",
                                x_off));
  }
  if (out.single_w && Elements(w.instances[0].origin) < w_off) {
    return Invalid(absl::StrCat("field grouped.weight[0]=", Dims(w.instances[0].origin), " holds ",
                                Elements(w.instances[0].origin), " elements, but the groups read ",
                                w_off));
  }
  if (y.present()) {
    for (size_t e = 0; e < (out.single_y ? 1 : groups); ++e) {
      const uint64_t want = out.single_y ? y_off : out.groups[e].m * out.groups[e].n;
      if (Elements(y.instances[e].origin) != want) {
        return Invalid(absl::StrCat("field grouped.y[", e, "]=", Dims(y.instances[e].origin),
                                    " holds ", Elements(y.instances[e].origin),
                                    " elements, but the groups write ", want));
      }
    }
  }
  if (out.has_bias) {
    for (size_t e = 0; e < (out.single_bias ? 1 : groups); ++e) {
      const uint64_t want = out.single_bias ? bias_off : out.groups[e].n;
      if (Elements(bias.instances[e].origin) < want) {
        return Invalid(absl::StrCat("field grouped.bias[", e, "]=", Dims(bias.instances[e].origin),
                                    " holds ", Elements(bias.instances[e].origin),
                                    " elements, but the groups read ", want));
      }
    }
  }
  return out;
}

}  // namespace npu::tiling::grouped
