// CheckScheduleCoverage(): every element of C computed exactly once.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/tiling/schedule.h"
#include "server/tiling/schedule_internal.h"
#include "server/tiling/status_macros.h"

namespace npu::tiling {
namespace {

struct Box {
  Range m, n, k;
  size_t unit = 0;
};

bool Overlap(const Range& a, const Range& b) { return a.begin < b.end && b.begin < a.end; }

// Exact cover of [0, M) x [0, N) (x [0, K) when `use_k`): the boxes stay in
// bounds, do not overlap, and their volumes add up to the whole.
absl::Status CheckExactCover(std::vector<Box> boxes, uint64_t m, uint64_t n, uint64_t k, bool use_k,
                             std::string_view what) {
  uint64_t volume = 0;
  for (const Box& box : boxes) {
    if (box.m.end > m || box.n.end > n || (use_k && box.k.end > k)) {
      return absl::InternalError(
          absl::StrCat(std::string(what), ": unit ", box.unit, " reaches outside the problem"));
    }
    volume += box.m.size() * box.n.size() * (use_k ? box.k.size() : 1);
  }
  // Zero-volume boxes (cores whose piece is empty) cannot overlap anything.
  boxes.erase(std::remove_if(boxes.begin(), boxes.end(),
                             [&](const Box& box) {
                               return box.m.empty() || box.n.empty() || (use_k && box.k.empty());
                             }),
              boxes.end());
  std::sort(boxes.begin(), boxes.end(),
            [](const Box& a, const Box& b) { return a.m.begin < b.m.begin; });
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = i + 1; j < boxes.size() && boxes[j].m.begin < boxes[i].m.end; ++j) {
      if (Overlap(boxes[i].n, boxes[j].n) && (!use_k || Overlap(boxes[i].k, boxes[j].k))) {
        return absl::InternalError(absl::StrCat(std::string(what), ": units ", boxes[i].unit,
                                                " and ", boxes[j].unit, " overlap"));
      }
    }
  }
  const uint64_t expected = m * n * (use_k ? k : 1);
  if (volume != expected) {
    return absl::InternalError(
        absl::StrCat(std::string(what), ": units cover ", volume, " of ", expected, " elements"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckScheduleCoverage(const Schedule& schedule, const MatmulProblem& problem) {
  // GroupedMatmul: each group's C on its own.
  if (problem.op == MatmulOp::kGroupedMatmul) {
    return schedule_internal::CheckGroupedCoverage(schedule, problem);
  }
  std::vector<Box> mmad, outputs;
  std::map<uint32_t, size_t> slot_writer;
  for (size_t i = 0; i < schedule.units.size(); ++i) {
    const WorkUnit& unit = schedule.units[i];
    const Box box{unit.m, unit.n, unit.k, i};
    switch (unit.op) {
      case UnitOp::kMmad:
        mmad.push_back(box);
        if (unit.writes_partial) {
          if (unit.workspace_slot >= schedule.workspace_slots) {
            return absl::InternalError(absl::StrCat("unit ", i, " writes workspace slot ",
                                                    unit.workspace_slot, " of ",
                                                    schedule.workspace_slots));
          }
          auto [it, inserted] = slot_writer.emplace(unit.workspace_slot, i);
          if (!inserted) {
            return absl::InternalError(absl::StrCat("units ", it->second, " and ", i,
                                                    " both write workspace slot ",
                                                    unit.workspace_slot));
          }
        } else {
          outputs.push_back(box);
        }
        break;
      case UnitOp::kReduce: {
        if (unit.reduction < 0 ||
            static_cast<size_t>(unit.reduction) >= schedule.reductions.size()) {
          return absl::InternalError(absl::StrCat("reduce unit ", i, " has no group"));
        }
        for (uint32_t slot : schedule.reductions[unit.reduction].slots) {
          if (slot_writer.count(slot) == 0) {
            return absl::InternalError(absl::StrCat("reduce unit ", i, " reads workspace slot ",
                                                    slot, " that no unit writes"));
          }
        }
        outputs.push_back(box);
        break;
      }
      case UnitOp::kVectorMul:
        mmad.push_back(box);
        outputs.push_back(box);
        break;
      case UnitOp::kClear:
        outputs.push_back(box);
        break;
    }
  }
  // A batched C is covered as its stacked [batch * rows, n] matrix.
  const uint64_t m = schedule.batch_rows > 0 ? schedule.batch * schedule.batch_rows
                                             : static_cast<uint64_t>(problem.m);
  RETURN_IF_ERROR(CheckExactCover(mmad, m, problem.n, problem.k, true, "(m, n, k)"));
  return CheckExactCover(outputs, m, problem.n, problem.k, false, "C (m, n)");
}

}  // namespace npu::tiling
