#include "emulator/emulator.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "emulator/accuracy.h"
#include "emulator/buffers.h"
#include "emulator/gemm_kernel.h"
#include "emulator/grouped_emulation.h"
#include "emulator/l2_traffic.h"
#include "emulator/quant_emulation.h"
#include "emulator/thread_pool.h"
#include "emulator/timing_model.h"
#include "emulator/weight_quant_emulation.h"
#include "emulator/transpose_emulation.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/hardware_constants.h"
#include "server/tiling/status_macros.h"

namespace npu::emu {
namespace {

using tiling::DataType;
using tiling::MatmulProblem;

// The kernels' tile loops for `plan`, with the schedule faults of `faults`
// reproduced: a Stream-K launch without a tail round runs its loops anyway
// (problem 4), and each K slice's workspace slot is its global tile index
// instead of its place in the Stream-K round (problem 1).
absl::StatusOr<tiling::Schedule> FaultySchedule(const tiling::TilingPlan& plan,
                                                const MatmulProblem& problem,
                                                const tiling::ChipSpec& chip,
                                                const FaultInjection& faults) {
  ASSIGN_OR_RETURN(tiling::Schedule schedule, tiling::ExpandTileLoops(plan, problem, chip));
  if (!faults.stream_k_without_tail) RETURN_IF_ERROR(tiling::CheckTilePattern(plan, problem));
  if (faults.workspace_offset_from_tile_idx) {
    for (tiling::WorkUnit& unit : schedule.units) {
      if (!unit.writes_partial) continue;
      unit.workspace_slot = static_cast<uint32_t>(unit.tile_idx);
      schedule.reductions[unit.reduction].slots[unit.k_slice] = unit.workspace_slot;
    }
  }
  return schedule;
}

std::vector<int64_t> Shape2(uint64_t rows, uint64_t cols) {
  return {static_cast<int64_t>(rows), static_cast<int64_t>(cols)};
}

absl::Status CheckTensor(std::string_view name, const HostTensor& tensor, DataType dtype,
                         const std::vector<int64_t>& shape) {
  if (tensor.dtype != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(name), " has dtype ", std::string(tiling::DataTypeName(tensor.dtype)),
        ", the problem says ", std::string(tiling::DataTypeName(dtype))));
  }
  if (tensor.shape != shape) {
    std::string have, want;
    for (int64_t d : tensor.shape) absl::StrAppend(&have, have.empty() ? "" : ",", d);
    for (int64_t d : shape) absl::StrAppend(&want, want.empty() ? "" : ",", d);
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(name), " has shape [", have, "], the problem needs [", want, "]"));
  }
  if (tensor.bytes.size() != tiling::DataTypeBytesOf(dtype, tensor.elements())) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(name), " has ", tensor.bytes.size(), " bytes, expected ",
                     tiling::DataTypeBytesOf(dtype, tensor.elements())));
  }
  return absl::OkStatus();
}

std::vector<int64_t> Prefixed(const std::vector<int64_t>& batch, std::vector<int64_t> matrix) {
  std::vector<int64_t> shape = batch;
  shape.insert(shape.end(), matrix.begin(), matrix.end());
  return shape;
}

std::vector<int64_t> ShapeA(const MatmulProblem& p) {
  return p.trans_a ? Shape2(p.k, p.m) : Shape2(p.m, p.k);
}
std::vector<int64_t> ShapeB(const MatmulProblem& p) {
  return p.trans_b ? Shape2(p.n, p.k) : Shape2(p.k, p.n);
}

}  // namespace

OperandShapes ShapesOf(const MatmulProblem& p) {
  // The transposed batch matmuls' tensors as stored, through their perms.
  if (IsTransposed(p)) return TransposedShapes(p);
  // GroupedMatmul: x[0], weight[0], bias[0] and y.
  if (IsGrouped(p)) return GroupedShapes(p);
  OperandShapes shapes;
  shapes.a = Prefixed(p.batch.a, ShapeA(p));
  shapes.b = p.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2 ? WeightShapeOf(p)
                                                                 : Prefixed(p.batch.b, ShapeB(p));
  if (p.has_bias) {
    // QuantBatchMatmulV3's bias is [n] or [batch, 1, n] (problem.quant.bias_shape).
    shapes.bias = (p.op == tiling::MatmulOp::kQuantBatchMatmulV3 ||
                   p.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2) &&
                          !p.quant.bias_shape.empty()
                      ? p.quant.bias_shape
                      : Prefixed(p.batch.bias, {p.n});
  }
  if (p.op == tiling::MatmulOp::kFusedMatMul && tiling::TraitsOf(p.fused.op).reads_x3) {
    shapes.x3 = p.fused.x3_shape.empty() ? Shape2(p.m, p.n) : p.fused.x3_shape;
  }
  shapes.c = Prefixed(tiling::OutputBatchDims(p), Shape2(p.m, p.n));
  return shapes;
}

absl::Status CheckModelled(const MatmulProblem& problem) {
  // GroupedMatmul: its groups over the token histogram, and its paths'
  // modes the emulator models.
  if (IsGrouped(problem)) return CheckGroupedModelled(problem);
  // QuantBatchMatmulV3's FRACTAL_NZ x2 (and WeightQuantBatchMatmulV2's
  // weight) only changes how the kernel loads it: its values are given and
  // computed in their ND layout (ShapesOf()).
  const bool nz_b_modelled = problem.op == tiling::MatmulOp::kQuantBatchMatmulV3 ||
                             problem.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2 ||
                             IsTransposed(problem);
  for (const auto& [format, field] :
       {std::pair{problem.format_a, "format_a"}, std::pair{problem.format_b, "format_b"},
        std::pair{problem.format_c, "format_c"}}) {
    if (format != tiling::Format::kNd &&
        !(nz_b_modelled && field == std::string_view("format_b"))) {
      return absl::UnimplementedError(absl::StrCat(
          "problem.", field, ": the emulator models ND operands only (no FRACTAL_NZ)"));
    }
  }
  if (problem.a_slice.enabled) {
    return absl::UnimplementedError("problem.a_slice: the emulator does not model slice views");
  }
  if (problem.batch.a_interleaved || problem.batch.b_interleaved) {
    return absl::UnimplementedError(
        "problem.a_batch_interleaved / b_batch_interleaved: the emulator does not model "
        "transposed non-contiguous batch views");
  }
  return absl::OkStatus();
}

namespace {

// Rejects what the emulator cannot run at all, before any tensor is looked
// at: a chip spec the tiling library would refuse, degenerate sizes, and the
// operand layouts the kernel model does not implement.
absl::Status CheckProblem(const MatmulProblem& problem, const tiling::ChipSpec& chip_spec) {
  RETURN_IF_ERROR(tiling::ValidateChip(chip_spec));
  // GroupedMatmul's sizes are its groups'.
  if (IsGrouped(problem)) return CheckModelled(problem);
  if (problem.m <= 0 || problem.n <= 0 || problem.k < 0) {
    return absl::InvalidArgumentError(absl::StrCat("problem sizes m=", problem.m, " n=", problem.n,
                                                   " k=", problem.k,
                                                   " must be m, n > 0 and k >= 0"));
  }
  RETURN_IF_ERROR(CheckModelled(problem));
  RETURN_IF_ERROR(tiling::BatchShapeOf(problem).status());
  if (IsTransposed(problem) && problem.transpose.batch == 0) {
    return absl::InvalidArgumentError(
        "problem has an empty output: transpose.batch=0 (the kernels compute nothing)");
  }
  if (problem.op == tiling::MatmulOp::kFusedMatMul && tiling::TraitsOf(problem.fused.op).reads_x3) {
    const std::vector<int64_t>& x3 = problem.fused.x3_shape;
    const uint64_t batch_c = tiling::BatchProduct(tiling::OutputBatchDims(problem));
    const bool ok_2d = x3.empty() || (x3.size() == 2 && x3[0] == problem.m && x3[1] == problem.n);
    const bool ok_3d = x3.size() == 3 && x3[1] == problem.m && x3[2] == problem.n &&
                       (x3[0] == 1 || static_cast<uint64_t>(x3[0]) == batch_c);
    if (!ok_2d && !ok_3d) {
      return absl::InvalidArgumentError(
          absl::StrCat("x3_shape must be [m, n] or [b, m, n] with b 1 or the ", batch_c,
                       " C batches (m=", problem.m, ", n=", problem.n, ")"));
    }
  }
  return absl::OkStatus();
}

// Numerics read the caller's tensors, so they must match the problem; and a
// host matmul costs real time, so it is refused above the configured MAC
// budget rather than left to run.
absl::Status CheckNumericInputs(const MatmulProblem& problem, const Tensors& inputs,
                                const EmulatorOptions& options) {
  if (IsGrouped(problem)) {
    RETURN_IF_ERROR(CheckGroupedInputs(problem, inputs));
    const uint64_t macs = GroupedUsefulMacs(problem);
    if (options.max_numeric_macs != 0 && macs > options.max_numeric_macs) {
      return absl::ResourceExhaustedError(
          absl::StrCat("numerics need ", macs, " MACs over the groups, above the work limit of ",
                       options.max_numeric_macs, "; use timing-only"));
    }
    return absl::OkStatus();
  }
  const OperandShapes shapes = ShapesOf(problem);
  if (IsTransposed(problem)) {
    RETURN_IF_ERROR(CheckTransposedInputs(problem, inputs));
  } else if (problem.op == tiling::MatmulOp::kQuantBatchMatmulV3) {
    RETURN_IF_ERROR(CheckQuantInputs(problem, inputs));
  } else if (problem.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2) {
    RETURN_IF_ERROR(CheckWeightQuantInputs(problem, inputs));
  } else {
    RETURN_IF_ERROR(CheckTensor("A", inputs.a, problem.dtype_a, shapes.a));
    RETURN_IF_ERROR(CheckTensor("B", inputs.b, problem.dtype_b, shapes.b));
  }
  if (problem.has_bias && problem.op != tiling::MatmulOp::kWeightQuantBatchMatmulV2) {
    if (!inputs.bias.has_value()) return absl::InvalidArgumentError("the problem has a bias");
    RETURN_IF_ERROR(CheckTensor("bias", *inputs.bias, problem.dtype_bias, shapes.bias));
  }
  if (!shapes.x3.empty()) {
    if (!inputs.x3.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("the fused op ",
                                                     std::string(FusedOpName(problem.fused.op)),
                                                     " reads x3; none was given"));
    }
    // x3 has the dtype of x1 (FusedMatMul's dtype tuples).
    RETURN_IF_ERROR(CheckTensor("x3", *inputs.x3, problem.dtype_a, shapes.x3));
  }
  const uint64_t macs = uint64_t(problem.m) * uint64_t(problem.n) * uint64_t(problem.k) *
                        tiling::BatchProduct(tiling::OutputBatchDims(problem));
  if (options.max_numeric_macs != 0 && macs > options.max_numeric_macs) {
    return absl::ResourceExhaustedError(
        absl::StrCat("numerics need ", macs, " MACs, above the work limit of ",
                     options.max_numeric_macs, "; use timing-only"));
  }
  return absl::OkStatus();
}

// The plan the faulty kernel actually runs: plan-level faults are applied to
// a copy so the caller's plan stays the one that was chosen.
tiling::TilingPlan PlanWithFaults(const tiling::TilingPlan& input_plan,
                                  const FaultInjection& faults) {
  tiling::TilingPlan plan = input_plan;
  if (faults.oversized_base_k) {
    // Seeds/000 problem 5: base_k doubled past the L0A ping-pong limit.
    plan.block.base_k *= 2;
    plan.block.k_l1 = std::max(plan.block.k_l1, plan.block.base_k);
  }
  return plan;
}

// The timing model needs the useful MAC count and the operand type to report
// utilisation, and the caller's limits to stop a runaway or cancelled run.
TimingOptions TimingOptionsFor(const MatmulProblem& problem, const EmulatorOptions& options) {
  TimingOptions timing;
  timing.cancelled = options.cancelled;
  timing.max_events = options.max_simulated_ops;
  timing.useful_macs = uint64_t(problem.m) * uint64_t(problem.n) * uint64_t(problem.k) *
                       tiling::BatchProduct(tiling::OutputBatchDims(problem));
  timing.dtype = problem.dtype_a;
  timing.hf32 = problem.hf32;
  timing.gm_split = options.gm_split;
  return timing;
}

// ReLU on C as the epilogue applies it (NaN stays NaN).
void ApplyRelu(HostTensor& c) {
  for (uint64_t i = 0; i < c.elements(); ++i) {
    const float value = c.Get(i);
    if (value < 0) c.Set(i, 0.0f);
  }
}

// The common tail of Emulate() and EmulateKernel(): instruction streams,
// simulated time and, unless timing-only, the numerics of `result.schedule`.
absl::Status RunSchedule(const tiling::TilingPlan& plan, const PipelineConfig& pipeline,
                         const MatmulProblem& problem, const tiling::ChipSpec& chip_spec,
                         const Tensors& inputs, const EmulatorOptions& options,
                         EmulationResult& result) {
  const ChipModel chip = ChipModel::FromSpec(chip_spec, options.arch_timing);
  ProgramOptions program_options;
  program_options.pipeline = pipeline;
  program_options.faults = options.faults;
  program_options.max_ops = options.max_simulated_ops;
  program_options.share_identical_cores = !options.simulate_every_core;
  // The transposed batch matmuls are timed as the batched matmul they
  // compute, their transfers through their strided layouts (the pipeline).
  const bool transposed = IsTransposed(problem);
  // GroupedMatmul is timed on its stacked C, each group's weight its own
  // in L2 (grouped_emulation.h).
  const bool grouped = IsGrouped(problem);
  const MatmulProblem timed = transposed ? LogicalProblem(problem, false)
                              : grouped  ? GroupedTimedProblem(problem)
                                         : MatmulProblem();
  const MatmulProblem& walked = transposed || grouped ? timed : problem;
  ASSIGN_OR_RETURN(ProgramSet programs,
                   BuildPrograms(result.schedule, plan, walked, chip, program_options));
  TimingOptions timing = TimingOptionsFor(walked, options);
  timing.read_mix =
      EstimateGmReadMix(grouped ? GroupedL2View(result.schedule) : result.schedule, walked,
                        chip_spec, pipeline.b_per_group);
  if (grouped) timing.useful_macs = GroupedUsefulMacs(problem);
  ASSIGN_OR_RETURN(result.stats, RunTiming(programs, chip, timing));

  if (!options.timing_only && grouped) {
    ThreadPool pool(options.threads);
    ASSIGN_OR_RETURN(result.c, RunGroupedNumerics(result.schedule, plan, problem, inputs, pool,
                                                  options.cancelled));
  } else if (!options.timing_only && transposed) {
    ThreadPool pool(options.threads);
    ASSIGN_OR_RETURN(
        result.c, RunTransposedNumerics(result.schedule, problem, inputs, pool, options.cancelled));
  } else if (!options.timing_only && problem.op == tiling::MatmulOp::kQuantBatchMatmulV3) {
    ThreadPool pool(options.threads);
    ASSIGN_OR_RETURN(result.c,
                     RunQuantNumerics(result.schedule, problem, inputs, pool, options.cancelled));
  } else if (!options.timing_only && problem.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2) {
    ThreadPool pool(options.threads);
    ASSIGN_OR_RETURN(result.c, RunWeightQuantNumerics(result.schedule, problem, inputs, pool,
                                                      options.cancelled));
  } else if (!options.timing_only) {
    result.c = HostTensor::Zeros(problem.dtype_c, ShapesOf(problem).c);
    ThreadPool pool(options.threads);
    RETURN_IF_ERROR(RunNumerics(result.schedule, problem, inputs.a, inputs.b,
                                problem.has_bias ? &*inputs.bias : nullptr, pool, options.cancelled,
                                result.c, inputs.x3.has_value() ? &*inputs.x3 : nullptr));
  }
  return absl::OkStatus();
}

// The pipeline CANN's kernel of `plan` runs: the transposed batch matmuls'
// is their logical matmul's, with their strided layouts (and an NZ x2 that
// needs no ND -> NZ conversion).
PipelineConfig PipelineOf(const tiling::TilingPlan& plan, const MatmulProblem& problem) {
  if (!IsTransposed(problem)) return PipelineForPlan(plan, problem);
  PipelineConfig pipeline = PipelineForPlan(plan, LogicalProblem(problem, false));
  pipeline.b_nz = problem.format_b == tiling::Format::kFractalNz;
  pipeline.strided = tiling::transpose::TransposeLayoutOf(problem);
  return pipeline;
}

// The 950 L1 bank of each buffer of `kernel` (PipelineConfig::l1_banks):
// from its l1_offsets where given, else from l1_bank_split; unknown on
// other architectures and where the kernel leaves the placement open.
std::array<uint8_t, kL1Buffers> KernelL1Banks(const KernelSchedule& kernel,
                                              const tiling::ChipSpec& chip) {
  std::array<uint8_t, kL1Buffers> banks = UnplacedL1();
  if (chip.npu_arch != tiling::NpuArch::kDav3510) return banks;
  const auto place = [&banks](L1Buffer ping, uint8_t ping_bank, uint8_t pong_bank) {
    banks[static_cast<int>(ping)] = ping_bank;
    banks[static_cast<int>(ping) + 1] = pong_bank;
  };
  constexpr L1Buffer kOperands[] = {L1Buffer::kAPing, L1Buffer::kBPing, L1Buffer::kScaleAPing,
                                    L1Buffer::kScaleBPing};
  switch (kernel.l1_bank_split) {
    case L1BankSplit::kUnspecified:
      break;
    case L1BankSplit::kPingPong:
      for (L1Buffer operand : kOperands) place(operand, 0, 1);
      break;
    case L1BankSplit::kAB:
      place(L1Buffer::kAPing, 0, 0);
      place(L1Buffer::kScaleAPing, 0, 0);
      place(L1Buffer::kBPing, 1, 1);
      place(L1Buffer::kScaleBPing, 1, 1);
      break;
    case L1BankSplit::kNone:
      place(L1Buffer::kAPing, 0, 0);
      place(L1Buffer::kBPing, 0, 0);
      place(L1Buffer::kScaleAPing, 1, 1);
      place(L1Buffer::kScaleBPing, 1, 1);
      break;
  }
  const std::pair<L1Buffer, const std::vector<uint64_t>*> offsets[] = {
      {L1Buffer::kAPing, &kernel.l1_offsets.a},
      {L1Buffer::kBPing, &kernel.l1_offsets.b},
      {L1Buffer::kScaleAPing, &kernel.l1_offsets.scale_a},
      {L1Buffer::kScaleBPing, &kernel.l1_offsets.scale_b}};
  for (const auto& [ping, list] : offsets) {
    if (list->empty()) continue;
    const auto bank_of = [](uint64_t offset) {
      return static_cast<uint8_t>(std::min<uint64_t>(1, offset / kL1BankBytes));
    };
    place(ping, bank_of(list->front()), bank_of(list->back()));
  }
  return banks;
}

// The pipeline a hand-written kernel runs (its buffers, flags and epilogue).
PipelineConfig KernelPipeline(const KernelSchedule& kernel, const MatmulProblem& problem,
                              const tiling::ChipSpec& chip) {
  PipelineConfig pipeline;
  pipeline.l1_stages_a = kernel.depth_a1;
  pipeline.l1_stages_b = kernel.depth_b1;
  pipeline.l0_stages = kernel.l0_double_buffer ? 2 : 1;
  pipeline.l0c_stages = kernel.l0c_double_buffer ? 2 : 1;
  pipeline.unit_flag = kernel.unit_flag;
  pipeline.k_l1_b = KernelBStageK(kernel, problem, chip);
  pipeline.b_nz = kernel.b_format == tiling::Format::kFractalNz;
  pipeline.l1_banks = KernelL1Banks(kernel, chip);
  pipeline.b_per_group = kernel.b_per_group;
  if (IsMxProblem(problem)) {
    pipeline.scale_k_l1 = KernelScaleStageK(kernel, problem);
    pipeline.scale_stages = kernel.scale_l1_buffers;
    pipeline.scale_b_kn = !problem.trans_b;
  }
  if (kernel.kind == KernelScheduleKind::kRoundRobinTiles && kernel.block_dim > chip.aic_num) {
    pipeline.launch_blocks = kernel.block_dim;
  }
  const bool fp32_c = problem.dtype_c == DataType::kFloat32;
  switch (kernel.epilogue) {
    case Epilogue::kNone:
    case Epilogue::kReluGm:
      break;
    case Epilogue::kReluUb:
      pipeline.output_through_ub = true;
      break;
    case Epilogue::kGeluUb:
      pipeline.output_through_ub = true;
      pipeline.ub_vector_passes = kGeluTanhVectorPasses + (fp32_c ? 0 : kCastVectorPasses);
      break;
    case Epilogue::kDequantAiv:
    case Epilogue::kDequantGeluAiv:
    case Epilogue::kGeluGm: {
      RelayEpilogue& relay = pipeline.relay;
      relay.aivs = kernel.aiv_per_aic;
      relay.split = kernel.aiv_split == AivSplit::kSingle      ? RelaySplit::kSingle
                    : kernel.aiv_split == AivSplit::kAlternate ? RelaySplit::kAlternate
                                                               : RelaySplit::kHalves;
      relay.slots = kernel.workspace_slots;
      relay.pass_rows = kernel.aiv_tile_rows;
      relay.pass_cols = kernel.aiv_tile_cols;
      if (kernel.epilogue == Epilogue::kGeluGm) {
        // C goes out and comes back in its own type; a narrower C is cast
        // to fp32 and back around the GELU.
        relay.in_bytes_per_element = tiling::DataTypeBytes(problem.dtype_c);
        relay.vector_passes = kGeluTanhVectorPasses + (fp32_c ? 0 : 2 * kCastVectorPasses);
      } else {
        relay.in_bytes_per_element = tiling::kFp32Bytes;  // int32 or fp32 accumulator
        relay.column_scale = true;
        relay.row_scale = problem.quant.pertoken.present;
        relay.vector_passes =
            kDequantVectorPasses + (relay.row_scale ? kPerTokenVectorPasses : 0) +
            (problem.has_bias ? kBiasVectorPasses : 0) +
            (kernel.epilogue == Epilogue::kDequantGeluAiv ? kFasterGeluVectorPasses : 0) +
            kCastVectorPasses;
      }
      break;
    }
  }
  return pipeline;
}

}  // namespace

absl::StatusOr<EmulationResult> Emulate(const tiling::TilingPlan& input_plan,
                                        const MatmulProblem& problem,
                                        const tiling::ChipSpec& chip_spec, const Tensors& inputs,
                                        const EmulatorOptions& options) {
  RETURN_IF_ERROR(CheckProblem(problem, chip_spec));
  if (!options.timing_only) RETURN_IF_ERROR(CheckNumericInputs(problem, inputs, options));

  const tiling::TilingPlan plan = PlanWithFaults(input_plan, options.faults);
  EmulationResult result;
  ASSIGN_OR_RETURN(result.schedule, FaultySchedule(plan, problem, chip_spec, options.faults));
  RETURN_IF_ERROR(CheckBuffers(result.schedule, plan, problem, ChipModel::FromSpec(chip_spec)));
  // A kernel whose tiles miss or repeat part of C is a kernel fault.
  RETURN_IF_ERROR(tiling::CheckScheduleCoverage(result.schedule, problem));
  RETURN_IF_ERROR(
      RunSchedule(plan, PipelineOf(plan, problem), problem, chip_spec, inputs, options, result));
  return result;
}

absl::StatusOr<EmulationResult> EmulateKernel(const KernelSchedule& kernel,
                                              const MatmulProblem& problem,
                                              const tiling::ChipSpec& chip_spec,
                                              const Tensors& inputs,
                                              const EmulatorOptions& options) {
  RETURN_IF_ERROR(tiling::ValidateChip(chip_spec));
  RETURN_IF_ERROR(ValidateKernelSchedule(kernel, problem, chip_spec));
  // NZ B only changes how B is loaded; the operands are checked and
  // computed in their ND layout.
  MatmulProblem nd_problem = problem;
  nd_problem.format_b = tiling::Format::kNd;
  nd_problem.storage_shape_b.clear();
  RETURN_IF_ERROR(CheckProblem(nd_problem, chip_spec));
  if (!options.timing_only) {
    // What the numerics do not compute: a GELU, and one B per group.
    if (kernel.epilogue == Epilogue::kDequantGeluAiv || kernel.epilogue == Epilogue::kGeluUb ||
        kernel.epilogue == Epilogue::kGeluGm) {
      return absl::UnimplementedError(
          absl::StrCat("kernel_schedule.epilogue=", std::string(EpilogueName(kernel.epilogue)),
                       ": the numerics of a GELU epilogue are not modelled; use timing_only"));
    }
    if (kernel.b_per_group) {
      return absl::UnimplementedError(
          "kernel_schedule.b_per_group: the numerics of a grouped GEMM with a B per group are not "
          "modelled (the problem has one B); use timing_only");
    }
    RETURN_IF_ERROR(CheckNumericInputs(nd_problem, inputs, options));
  }

  EmulationResult result;
  ASSIGN_OR_RETURN(result.schedule, ExpandKernelSchedule(kernel, problem, chip_spec));
  RETURN_IF_ERROR(tiling::CheckScheduleCoverage(result.schedule, nd_problem));
  tiling::TilingPlan plan;
  plan.strategy = "kernel schedule";
  plan.block_dim = kernel.block_dim;
  RETURN_IF_ERROR(RunSchedule(plan, KernelPipeline(kernel, problem, chip_spec), nd_problem,
                              chip_spec, inputs, options, result));
  if (!options.timing_only && kernel.epilogue == Epilogue::kReluGm) ApplyRelu(result.c);
  if (!options.timing_only && kernel.epilogue == Epilogue::kReluUb) ApplyRelu(result.c);
  return result;
}

void ApplyEpilogue(Epilogue epilogue, std::vector<double>& reference) {
  if (epilogue != Epilogue::kReluGm && epilogue != Epilogue::kReluUb) return;
  for (double& value : reference) value = value > 0 ? value : (value == value ? 0.0 : value);
}

Tensors RandomInputs(const MatmulProblem& problem, uint64_t seed) {
  if (IsTransposed(problem)) return RandomTransposedInputs(problem, seed);
  if (IsGrouped(problem)) return RandomGroupedInputs(problem, seed);
  if (problem.op == tiling::MatmulOp::kQuantBatchMatmulV3) return RandomQuantInputs(problem, seed);
  if (problem.op == tiling::MatmulOp::kWeightQuantBatchMatmulV2) {
    return RandomWeightQuantInputs(problem, seed);
  }
  std::mt19937_64 engine(seed);
  // Uniform in [-1, 1) from the top 24 bits: identical on every platform.
  auto draw = [&] { return static_cast<float>(engine() >> 40) / 8388608.0f - 1.0f; };
  auto fill = [&](DataType dtype, std::vector<int64_t> shape) {
    HostTensor tensor = HostTensor::Zeros(dtype, std::move(shape));
    for (uint64_t i = 0; i < tensor.elements(); ++i) tensor.Set(i, draw());
    return tensor;
  };
  const OperandShapes shapes = ShapesOf(problem);
  Tensors tensors;
  tensors.a = fill(problem.dtype_a, shapes.a);
  tensors.b = fill(problem.dtype_b, shapes.b);
  if (problem.has_bias) tensors.bias = fill(problem.dtype_bias, shapes.bias);
  if (!shapes.x3.empty()) tensors.x3 = fill(problem.dtype_a, shapes.x3);
  return tensors;
}

namespace {

// fp64 FusedMatMul epilogue of the reference (inner_precise's intermediate
// cast included, it is part of the op's definition).
double ReferenceFusedOp(const MatmulProblem& p, double value, double x3) {
  // High performance (inner_precise 1) casts the matmul to C's type before
  // x3 applies.
  const double mm = tiling::TraitsOf(p.fused.op).reads_x3 && p.fused.inner_precise == 1
                        ? RoundTo(p.dtype_c, static_cast<float>(value))
                        : value;
  return EpilogueFp64(p.fused.op, mm, x3);
}

}  // namespace

std::vector<double> ReferenceMatmul(const MatmulProblem& problem, const Tensors& inputs) {
  if (IsTransposed(problem) && problem.op == tiling::MatmulOp::kTransposeBatchMatMul) {
    // The logical matmul's C (the accumulator of an int8 y), in y's stored
    // order.
    const MatmulProblem logical = LogicalProblem(problem, true);
    const std::vector<double> c = ReferenceMatmul(logical, LogicalInputs(problem, inputs));
    const tiling::transpose::TransposeLayout layout = tiling::transpose::TransposeLayoutOf(problem);
    std::vector<double> stored(c.size());
    for (uint64_t b = 0; b < layout.batch; ++b) {
      for (uint64_t i = 0; i < layout.m; ++i) {
        std::copy_n(c.begin() + (b * layout.m + i) * layout.n, layout.n,
                    stored.begin() + layout.YOffset(b, i, 0));
      }
    }
    return stored;
  }
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  const std::vector<int64_t> c_dims = tiling::OutputBatchDims(problem);
  const tiling::BatchSlots c_slots = tiling::RightAligned(c_dims);
  const uint64_t batches = tiling::BatchProduct(c_dims);
  const bool fused = problem.op == tiling::MatmulOp::kFusedMatMul;
  std::vector<double> x3;
  uint64_t x3_batches = 1;
  if (fused && tiling::TraitsOf(problem.fused.op).reads_x3 && inputs.x3.has_value()) {
    for (float v : inputs.x3->ToFloats()) x3.push_back(v);
    x3_batches = x3.size() / (m * n);
  }
  // Each batch's operands row-major in fp32 (which holds every input dtype
  // exactly), hf32-rounded when the problem asks.
  ThreadPool pool(1);
  const FloatBuffer a =
      BatchedOperandAsFloats(inputs.a, tiling::BatchProduct(problem.batch.a), m, k, problem.trans_a,
                             problem.hf32 && inputs.a.dtype == DataType::kFloat32, pool);
  const FloatBuffer b =
      BatchedOperandAsFloats(inputs.b, tiling::BatchProduct(problem.batch.b), k, n, problem.trans_b,
                             problem.hf32 && inputs.b.dtype == DataType::kFloat32, pool);
  std::vector<double> c(batches * m * n, 0.0);
  for (uint64_t batch = 0; batch < batches; ++batch) {
    const float* ab =
        a.data() +
        tiling::BroadcastIndex(tiling::RightAligned(problem.batch.a), c_slots, batch) * m * k;
    const float* bb =
        b.data() +
        tiling::BroadcastIndex(tiling::RightAligned(problem.batch.b), c_slots, batch) * k * n;
    const uint64_t bias_off =
        tiling::BroadcastIndex(tiling::RightAligned(problem.batch.bias), c_slots, batch) * n;
    for (uint64_t i = 0; i < m; ++i) {
      double* row = c.data() + (batch * m + i) * n;
      for (uint64_t p = 0; p < k; ++p) {
        const double av = ab[i * k + p];
        const float* brow = bb + p * n;
        for (uint64_t j = 0; j < n; ++j) row[j] += av * brow[j];
      }
      if (problem.has_bias && inputs.bias.has_value()) {
        for (uint64_t j = 0; j < n; ++j) row[j] += inputs.bias->Get(bias_off + j);
      }
      if (fused) {
        const double* x3_row =
            x3.empty() ? nullptr : x3.data() + ((x3_batches > 1 ? batch : 0) * m + i) * n;
        for (uint64_t j = 0; j < n; ++j) {
          row[j] = ReferenceFusedOp(problem, row[j], x3_row ? x3_row[j] : 0.0);
        }
      }
    }
  }
  return c;
}

std::string NumericsBackendName() { return GemmBackendName(); }

}  // namespace npu::emu
