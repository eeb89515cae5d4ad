#include "server/graph/einsum.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace npu::graph {
namespace {

constexpr absl::string_view kEllipsis = "...";
// Placeholder labels for the dims an ellipsis covers: digits, which an
// equation's own labels (letters) never are.
constexpr size_t kMaxEllipsisDims = 10;

absl::Status Refuse(absl::string_view equation, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("Einsum '", equation, "': ", why));
}

struct Term {
  std::string before, after;  // letters around the ellipsis (all in `before` without one)
  bool ellipsis = false;
};

absl::StatusOr<Term> SplitTerm(absl::string_view equation, absl::string_view term) {
  Term out;
  const size_t dots = term.find(kEllipsis);
  if (dots != absl::string_view::npos) {
    if (term.find(kEllipsis, dots + kEllipsis.size()) != absl::string_view::npos) {
      return Refuse(equation, "an operand has more than one ellipsis");
    }
    out.ellipsis = true;
    out.before = std::string(term.substr(0, dots));
    out.after = std::string(term.substr(dots + kEllipsis.size()));
  } else {
    out.before = std::string(term);
  }
  for (char c : out.before + out.after) {
    if (!absl::ascii_isalpha(static_cast<unsigned char>(c))) {
      return Refuse(equation,
                    absl::StrCat("'", std::string(1, c), "' is not a label (letters only)"));
    }
  }
  return out;
}

// The placeholder labels of the last `count` of `total` ellipsis dims.
std::string Placeholders(size_t count, size_t total) {
  std::string labels;
  for (size_t i = total - count; i < total; ++i) labels.push_back(static_cast<char>('0' + i));
  return labels;
}

}  // namespace

absl::StatusOr<EinsumEquation> ParseEinsum(absl::string_view raw,
                                           const std::vector<size_t>& ranks) {
  std::string equation(raw);
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    absl::StatusOr<Term> term = SplitTerm(equation, lhs.substr(start, comma - start));
    if (!term.ok()) return term.status();
    terms.push_back(*std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size()) {
    return Refuse(equation,
                  absl::StrCat("names ", terms.size(), " operands, the node has ", ranks.size()));
  }
  // How many dims each ellipsis covers.
  std::vector<size_t> covered(terms.size(), 0);
  size_t ellipsis_dims = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t named = terms[i].before.size() + terms[i].after.size();
    if (named > ranks[i] || (!terms[i].ellipsis && named != ranks[i])) {
      return Refuse(equation, absl::StrCat("operand ", i, " has ", ranks[i], " dims, its term ",
                                           named, " labels"));
    }
    covered[i] = ranks[i] - named;
    ellipsis_dims = std::max(ellipsis_dims, covered[i]);
  }
  if (ellipsis_dims > kMaxEllipsisDims) {
    return Refuse(equation, absl::StrCat("an ellipsis covers ", ellipsis_dims, " dims, at most ",
                                         kMaxEllipsisDims));
  }
  EinsumEquation out;
  std::map<char, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string labels = terms[i].before;
    if (terms[i].ellipsis) labels += Placeholders(covered[i], ellipsis_dims);
    labels += terms[i].after;
    for (char c : labels) ++uses[c];
    out.inputs.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    absl::StatusOr<Term> term = SplitTerm(equation, equation.substr(arrow + 2));
    if (!term.ok()) return term.status();
    out.output = term->before;
    if (term->ellipsis) out.output += Placeholders(ellipsis_dims, ellipsis_dims);
    out.output += term->after;
  } else {
    // Implicit output: the ellipsis dims, then every letter used once, in
    // alphabetical order.
    out.output = Placeholders(ellipsis_dims, ellipsis_dims);
    for (const auto& [label, count] : uses) {
      if (count == 1 && absl::ascii_isalpha(static_cast<unsigned char>(label))) {
        out.output.push_back(label);
      }
    }
  }
  for (char c : out.output) {
    if (uses.count(c) == 0) {
      return Refuse(equation,
                    absl::StrCat("output label '", std::string(1, c), "' is in no operand"));
    }
    if (std::count(out.output.begin(), out.output.end(), c) != 1) {
      return Refuse(equation, absl::StrCat("output label '", std::string(1, c), "' repeats"));
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> EinsumOutputDims(
    const EinsumEquation& equation, const std::vector<std::vector<int64_t>>& dims) {
  if (dims.size() != equation.inputs.size()) return std::nullopt;
  std::map<char, int64_t> size;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].size() != equation.inputs[i].size()) return std::nullopt;
    for (size_t d = 0; d < dims[i].size(); ++d) {
      const char label = equation.inputs[i][d];
      auto [it, added] = size.emplace(label, dims[i][d]);
      if (added || it->second == dims[i][d] || dims[i][d] == 1) continue;
      if (it->second != 1) return std::nullopt;
      it->second = dims[i][d];
    }
  }
  std::vector<int64_t> out;
  for (char label : equation.output) out.push_back(size.at(label));
  return out;
}

}  // namespace npu::graph
