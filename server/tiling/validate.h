// Input validation of a matmul problem, as CANN's host tiling does it before
// any strategy runs: dimension ranges, dtype combinations, formats, NZ
// storage shapes, bias and slice-view rules, and for BatchMatMulV3 and
// FusedMatMul the batch, broadcast, epilogue and x3 rules. Fields one
// operator does not read are refused for it.
#ifndef NPU_SERVER_TILING_VALIDATE_H_
#define NPU_SERVER_TILING_VALIDATE_H_

#include <memory>

#include "absl/status/status.h"
#include "server/tiling/quant/quant_facts.h"
#include "server/tiling/types.h"

namespace npu::tiling {

// Largest m, n or k CANN accepts (INT32_MAX).
inline constexpr int64_t kMaxDim = 2147483647;

// OK, or kInvalidArgument naming the field and the limit it broke.
absl::Status ValidateProblem(const MatmulProblem& problem);
// The same; for a QuantBatchMatmulV3 problem that passes, `*parsed` (when
// not null) gets CANN's parse of it, which its strategies read (other
// operators leave it empty).
absl::Status ValidateProblem(const MatmulProblem& problem,
                             std::shared_ptr<const quant::QuantFacts>* parsed);

// The input rules that depend on the chip: FusedMatMul's add and mul
// epilogues need two AIV cores per AIC. OK, or kInvalidArgument naming the
// field and the rule.
absl::Status ValidateProblemForChip(const MatmulProblem& problem, const ChipSpec& chip);

// OK when CANN's arch35 mat_mul_v3 tiling applies to `chip`, i.e. its
// npu_arch is DAV_3510; otherwise kFailedPrecondition naming the platform
// and its architecture. A valid chip of another architecture (the Atlas A2
// profile) is one the emulator can time a hand-written kernel on, but not
// one the engine can tile for: StrategyRegistry::Decide() refuses it.
absl::Status ValidateTilingArch(const ChipSpec& chip);

// A problem that passed ValidateProblem() and a chip that passed
// ValidateChip(), each kept only once its check passed: what
// StrategyRegistry::Decide() can trust without checking again. Only these
// checks fill one, so a caller cannot promise a check it did not make. The
// two are checked apart so that a caller can do more between them (the
// service checks the problem before it resolves the chip, and names the
// request field at fault).
class CheckedInputs {
 public:
  // ValidateProblem(`problem`); on success `problem` is kept.
  absl::Status CheckProblem(MatmulProblem problem);
  // The same for the problem `fill(MatmulProblem&)` writes into a default
  // one held here: a request converts straight into place, without a copy.
  template <typename Fill>
  absl::Status CheckProblemFilledBy(Fill&& fill) {
    ResetProblem();
    problem_filled_ = true;
    fill(problem_);
    return CheckHeldProblem();
  }
  // ValidateChip(`chip`); on success `chip` is kept.
  absl::Status CheckChip(ChipSpec chip);
  // Keeps the built-in profile `name` (BuiltinPlatforms(), types.h), valid
  // as shipped (validate_test checks each one), without checking it again;
  // FindPlatform()'s kNotFound for a name that is not built in.
  absl::Status CheckPlatform(std::string_view name);

  // Whether both checks passed.
  bool complete() const { return problem_checked_ && chip_checked_; }
  // The checked problem and chip; each only after its check passed.
  const MatmulProblem& problem() const { return problem_; }
  const ChipSpec& chip() const { return chip_; }
  // QuantBatchMatmulV3: CANN's parse of the checked problem (null for the
  // other operators).
  const std::shared_ptr<const quant::QuantFacts>& quant() const { return quant_; }
  // Moves the checked problem or chip out; this object is then not complete.
  MatmulProblem TakeProblem();
  ChipSpec TakeChip();

 private:
  // Makes the held problem a default one, unchecked.
  void ResetProblem();
  // ValidateProblem() of the held problem.
  absl::Status CheckHeldProblem();

  MatmulProblem problem_;
  bool problem_filled_ = false;  // problem_ may differ from a default one
  ChipSpec chip_;
  std::shared_ptr<const quant::QuantFacts> quant_;
  bool problem_checked_ = false;
  bool chip_checked_ = false;
};

}  // namespace npu::tiling

#endif  // NPU_SERVER_TILING_VALIDATE_H_
