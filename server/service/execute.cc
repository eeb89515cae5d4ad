#include "server/service/execute.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "emulator/accuracy.h"
#include "emulator/chip.h"
#include "emulator/grouped_emulation.h"
#include "emulator/work_estimate.h"
#include "server/service/convert.h"
#include "server/service/explicit_tiling.h"
#include "server/service/kernel_convert.h"
#include "server/service/request_pipeline.h"
#include "server/service/status_mapping.h"
#include "server/service/validate.h"
#include "server/tiling/batch_shape.h"
#include "server/tiling/grouped/gmm_groups.h"
#include "server/tiling/int_math.h"
#include "server/tiling/operator_table.h"
#include "server/tiling/registry.h"
#include "server/tiling/status_macros.h"
#include "server/tiling/tiling_data.h"
#include "server/tiling/validate.h"

namespace npu::server {
namespace {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;
using tl::CeilDiv;

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

// Products that saturate instead of wrapping: the estimates below only
// compare against a limit.
uint64_t SatMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// One inline operand against the problem: dtype, stored shape, byte count.
absl::Status CheckTensor(absl::string_view field, const pb::Tensor& tensor, tl::DataType dtype,
                         const std::vector<int64_t>& shape, absl::string_view layout) {
  const pb::DataType want = DataTypeToProto(dtype);
  if (tensor.dtype() != want) {
    return FieldError(absl::StrCat(field, ".dtype"),
                      absl::StrCat(pb::DataType_Name(tensor.dtype()), ", but the problem says ",
                                   pb::DataType_Name(want)));
  }
  const std::vector<int64_t> have(tensor.shape().begin(), tensor.shape().end());
  if (have != shape) {
    return FieldError(absl::StrCat(field, ".shape"),
                      absl::StrCat(ShapeString(have), ", but the problem stores it as ",
                                   ShapeString(shape), " (", layout, ")"));
  }
  uint64_t elements = 1;
  for (int64_t dim : shape) elements *= static_cast<uint64_t>(dim);
  const uint64_t bytes = tl::DataTypeBytesOf(dtype, elements);
  if (tensor.data().size() != bytes) {
    return FieldError(absl::StrCat(field, ".data"),
                      absl::StrCat(tensor.data().size(), " bytes, but ", ShapeString(shape), " ",
                                   std::string(tl::DataTypeName(dtype)), " is ", bytes,
                                   " bytes (little-endian, row-major)"));
  }
  return absl::OkStatus();
}

// GroupedMatmul's inline tensors: every list of problem.grouped but y, one
// tensor per instance (the emulator checks group_list's values against the
// histogram), and none of the operand fields of the other operators.
absl::Status CheckGroupedInputs(const pb::ExecuteInputs& inputs, const tl::MatmulProblem& p) {
  for (const auto& [given, field] :
       {std::pair{inputs.has_a(), "inputs.a"}, std::pair{inputs.has_b(), "inputs.b"},
        std::pair{inputs.has_bias(), "inputs.bias"}, std::pair{inputs.has_x3(), "inputs.x3"},
        std::pair{inputs.has_scale(), "inputs.scale"},
        std::pair{inputs.has_pertoken_scale(), "inputs.pertoken_scale"},
        std::pair{inputs.has_offset(), "inputs.offset"}}) {
    if (given) {
      return FieldError(field, "given, but GroupedMatmul's tensors are its lists "
                               "(inputs.grouped)");
    }
  }
  const pb::GroupedExecuteInputs& g = inputs.grouped();
  const struct {
    tl::GroupedTensor list;
    const google::protobuf::RepeatedPtrField<pb::Tensor>& tensors;
  } lists[] = {
      {tl::GroupedTensor::kX, g.x()},
      {tl::GroupedTensor::kWeight, g.weight()},
      {tl::GroupedTensor::kBias, g.bias()},
      {tl::GroupedTensor::kScale, g.scale()},
      {tl::GroupedTensor::kOffset, g.offset()},
      {tl::GroupedTensor::kAntiquantScale, g.antiquant_scale()},
      {tl::GroupedTensor::kAntiquantOffset, g.antiquant_offset()},
      {tl::GroupedTensor::kPerTokenScale, g.per_token_scale()},
  };
  for (const auto& [list, tensors] : lists) {
    const std::string name(tl::GroupedTensorName(list));
    const tl::GroupedTensorList& spec = p.grouped[list];
    if (static_cast<size_t>(tensors.size()) != spec.size()) {
      return FieldError(absl::StrCat("inputs.grouped.", name),
                        absl::StrCat(tensors.size(), " tensors, but problem.grouped.", name,
                                     " has ", spec.size(), " instances"));
    }
    for (int i = 0; i < tensors.size(); ++i) {
      RETURN_IF_ERROR(CheckTensor(absl::StrCat("inputs.grouped.", name, "[", i, "]"),
                                  tensors[i], spec.dtype, spec.instances[i].origin,
                                  absl::StrCat("problem.grouped.", name, "[", i, "].origin")));
    }
  }
  if (g.group_list_size() > 1) {
    return FieldError("inputs.grouped.group_list", "at most one tensor");
  }
  return absl::OkStatus();
}

absl::Status CheckInputs(const pb::ExecuteInputs& inputs, const tl::MatmulProblem& p) {
  if (p.op == tl::MatmulOp::kGroupedMatmul) return CheckGroupedInputs(inputs, p);
  if (inputs.has_grouped()) {
    return FieldError("inputs.grouped", "given, but only GroupedMatmul takes tensor lists");
  }
  const emu::OperandShapes shapes = emu::ShapesOf(p);
  const bool batched = !p.batch.a.empty() || !p.batch.b.empty();
  if (!inputs.has_a()) return FieldError("inputs.a", "required with inputs");
  if (!inputs.has_b()) return FieldError("inputs.b", "required with inputs");
  const bool transposed = tl::OperatorSpecOf(p.op).takes_transpose;
  RETURN_IF_ERROR(CheckTensor(
      "inputs.a", inputs.a(), p.dtype_a, shapes.a,
      transposed
          ? "x1 as stored: [m, batch, k] for perm_x1 [1, 0, 2], else [batch, m, k]"
          : absl::StrCat(batched ? "batch_a + " : "", p.trans_a ? "[k, m]: trans_a" : "[m, k]")));
  RETURN_IF_ERROR(CheckTensor(
      "inputs.b", inputs.b(), p.dtype_b, shapes.b,
      transposed
          ? "x2 as stored: [batch, n, k] for perm_x2 [0, 2, 1], else [batch, k, n]"
          : absl::StrCat(batched ? "batch_b + " : "", p.trans_b ? "[n, k]: trans_b" : "[k, n]")));
  if (p.has_bias != inputs.has_bias()) {
    return FieldError("inputs.bias", p.has_bias ? "required: problem.has_bias is set"
                                                : "given, but problem.has_bias is not set");
  }
  if (p.has_bias) {
    RETURN_IF_ERROR(CheckTensor("inputs.bias", inputs.bias(), p.dtype_bias, shapes.bias,
                                p.batch.bias.empty() ? "[n]" : "batch_bias + [n]"));
  }
  const bool needs_x3 = !shapes.x3.empty();
  if (needs_x3 != inputs.has_x3()) {
    return FieldError("inputs.x3",
                      needs_x3
                          ? absl::StrCat("required: problem.fused_op ",
                                         std::string(tl::FusedOpKeyName(p.fused.op)), " reads x3")
                          : "given, but only FusedMatMul's ADD and MUL read x3");
  }
  if (needs_x3) {
    RETURN_IF_ERROR(CheckTensor("inputs.x3", inputs.x3(), p.dtype_a, shapes.x3,
                                "problem.x3_shape, [m, n] when empty"));
  }
  // QuantBatchMatmulV3's and TransposeQuantBatchMatMul's scales, as
  // problem.quant describes them; TransposeBatchMatMul's int8 y scale, as
  // problem.transpose.scale does; WeightQuantBatchMatmulV2's antiquant
  // scale and offset come as scale and offset.
  const bool weight_quant = p.op == tl::MatmulOp::kWeightQuantBatchMatmulV2;
  const bool tbmm = p.op == tl::MatmulOp::kTransposeBatchMatMul;
  const bool quant = tl::OperatorSpecOf(p.op).takes_quant || tbmm;
  const struct {
    const char* field;
    bool given;
    const pb::Tensor& tensor;
    const tl::QuantTensorSpec& spec;
    const char* spec_field;
  } scales[] = {
      {"inputs.scale", inputs.has_scale(), inputs.scale(),
       weight_quant ? p.quant.antiquant_scale : tbmm ? p.transpose.scale : p.quant.scale,
       weight_quant ? "problem.quant.antiquant_scale"
       : tbmm       ? "problem.transpose.scale"
                    : "problem.quant.scale"},
      {"inputs.pertoken_scale", inputs.has_pertoken_scale(), inputs.pertoken_scale(),
       p.quant.pertoken, "problem.quant.pertoken_scale"},
      {"inputs.offset", inputs.has_offset(), inputs.offset(),
       weight_quant ? p.quant.antiquant_offset : p.quant.offset,
       weight_quant ? "problem.quant.antiquant_offset" : "problem.quant.offset"},
  };
  for (const auto& scale : scales) {
    const bool needed = quant && scale.spec.present;
    if (needed != scale.given) {
      return FieldError(scale.field,
                        needed
                            ? absl::StrCat("required: ", scale.spec_field, " is present")
                            : absl::StrCat("given, but ", quant ? scale.spec_field : "the problem",
                                           quant ? " is absent" : " takes no scales"));
    }
    if (needed) {
      RETURN_IF_ERROR(CheckTensor(scale.field, scale.tensor, scale.spec.dtype, scale.spec.shape,
                                  absl::StrCat(scale.spec_field, ".shape")));
    }
  }
  return absl::OkStatus();
}

// The chip an Execute runs on. An explicit tiling records the chip it was
// made for; a request that names no platform runs on that one, any other
// must name the same chip (a tiling is only meaningful for its chip).
absl::StatusOr<tl::ChipSpec> ResolveExecuteChip(const pb::ExecuteRequest& request,
                                                const RequestParts& parts) {
  const bool request_names_chip =
      !request.platform().empty() || request.platform_overrides().ByteSizeLong() != 0;
  const bool tiling_names_chip = request.has_tiling() && request.tiling().has_platform();
  if (tiling_names_chip && !request_names_chip) return ChipFromProto(request.tiling().platform());
  ASSIGN_OR_RETURN(tl::ChipSpec chip, ResolveChip(parts));
  if (tiling_names_chip) {
    const pb::ChipSpec& have = request.tiling().platform();
    // The name is a label; the hardware facts must agree (the first field
    // that differs is named).
    absl::Status agree;
    ForEachChipField([&](const tl::ChipField& field, const ChipFieldWire& wire) {
      const uint64_t given = wire.spec_value(have), want = field.Get(chip);
      if (!agree.ok() || given == want) return;
      agree = FieldError(absl::StrCat("tiling.platform.", std::string(field.name)),
                         absl::StrCat(given, ", but the request's platform has ", want,
                                      "; leave platform and platform_overrides empty to run "
                                      "on the tiling's platform"));
    });
    if (!agree.ok()) return agree;
    if (!have.npu_arch().empty() && have.npu_arch() != tl::NpuArchName(chip.npu_arch)) {
      return FieldError("tiling.platform.npu_arch",
                        absl::StrCat(have.npu_arch(), ", but the request's platform is ",
                                     std::string(tl::NpuArchName(chip.npu_arch))));
    }
  }
  return chip;
}

int ThreadsFor(uint32_t requested, const ExecuteOptions& options) {
  int limit = options.max_threads_per_run;
  if (limit <= 0) limit = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::clamp(static_cast<int>(std::max<uint32_t>(1, requested)), 1, limit);
}

void PipesToProto(const std::array<uint64_t, emu::kPipeCount>& busy, pb::PipeCycles* out) {
  out->set_mte2(busy[static_cast<int>(emu::Pipe::kMte2)]);
  out->set_mte1(busy[static_cast<int>(emu::Pipe::kMte1)]);
  out->set_cube(busy[static_cast<int>(emu::Pipe::kCube)]);
  out->set_fixpipe(busy[static_cast<int>(emu::Pipe::kFixpipe)]);
  out->set_vec(busy[static_cast<int>(emu::Pipe::kVec)]);
  out->set_mte3(busy[static_cast<int>(emu::Pipe::kMte3)]);
}

void TimingToProto(const emu::EmulationResult& result, pb::TimingReport* out) {
  const emu::EmulatorStats& stats = result.stats;
  out->set_predicted_cycles(stats.total_cycles);
  out->set_predicted_time_us(stats.microseconds);
  out->set_cube_utilization(stats.cube_utilization);
  out->set_bound_resource(stats.bound);
  PipesToProto(stats.pipe_busy_cycles, out->mutable_busy_cycles());
  out->set_ddr_busy_cycles(stats.ddr_channel_busy_cycles);
  out->set_l2_busy_cycles(stats.l2_channel_busy_cycles);
  pb::TrafficBytes* traffic = out->mutable_traffic();
  traffic->set_ddr_read_bytes(stats.traffic.ddr_read_bytes);
  traffic->set_l2_read_bytes(stats.traffic.l2_read_bytes);
  traffic->set_gm_write_bytes(stats.traffic.gm_write_bytes);
  traffic->set_l1_to_l0_bytes(stats.traffic.l1_to_l0_bytes);
  traffic->set_l0c_out_bytes(stats.traffic.l0c_out_bytes);
  traffic->set_ub_in_bytes(stats.traffic.ub_in_bytes);
  traffic->set_ub_out_bytes(stats.traffic.ub_out_bytes);
  traffic->set_workspace_bytes(stats.traffic.workspace_bytes);
  for (const emu::CoreStats& core : stats.cores) {
    pb::CoreTiming* row = out->add_cores();
    row->set_kind(core.kind == tl::CoreKind::kAic ? pb::CORE_KIND_AIC : pb::CORE_KIND_AIV);
    row->set_core(core.core);
    row->set_units(core.units);
    row->set_finish_cycle(core.finish_cycle);
    PipesToProto(core.pipe_busy_cycles, row->mutable_busy_cycles());
  }
  out->set_aic_cores(result.schedule.aic_cores);
  // A schedule names the AIV cores of its own vector units (a Stream-K
  // reduction); the AIVs of an epilogue or a dequant (a mix kernel's) are
  // the pipeline's, counted where they ran.
  out->set_aiv_cores(std::max(result.schedule.aiv_cores, stats.msprof.aiv_cores));
  out->set_rounds(result.schedule.rounds);
  out->set_simulated_ops(stats.events);
  MsprofToProto(stats.msprof, out->mutable_msprof());
}

// `status` with its message put under `field`, the part of the request
// whose size it is about (the fuzzers check every error names one).
absl::Status UnderField(const absl::Status& status, absl::string_view field) {
  if (status.ok() || absl::StartsWith(status.message(), field)) return status;
  return absl::Status(status.code(), absl::StrCat(field, ": ", status.message()));
}

// The request field a work limit refused: the kernel schedule or explicit
// tiling that asks for the work, else the problem's size.
absl::string_view WorkField(const PreparedExecute& prepared) {
  if (prepared.kernel.has_value()) return "kernel_schedule";
  return prepared.explicit_tiling ? "tiling" : "problem";
}

// What an emulator error means for the caller. For an explicit tiling or a
// kernel schedule every fault is the request's (its buffers, its schedule,
// its kernel); for the engine's own plan it is our bug.
absl::Status EmulatorError(const absl::Status& status, const PreparedExecute& prepared) {
  switch (status.code()) {
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kUnimplemented:
      return status;
    case absl::StatusCode::kFailedPrecondition:
      // CANN's kernel itself would go wrong on this run (a GroupedMatmul
      // kernel's tile pattern over the token histogram): the run's fact,
      // not our bug.
      if (absl::StartsWith(status.message(), "hazard:")) return status;
      break;
    case absl::StatusCode::kResourceExhausted:
      return UnderField(status, WorkField(prepared));
    default:
      break;
  }
  if (prepared.kernel.has_value()) {
    // The emulator's schedule checks already name "kernel_schedule.<field>".
    if (absl::StartsWith(status.message(), "kernel_schedule")) {
      return absl::InvalidArgumentError(status.message());
    }
    return absl::InvalidArgumentError(absl::StrCat("kernel_schedule: ", status.message()));
  }
  if (prepared.explicit_tiling) {
    return absl::InvalidArgumentError(absl::StrCat("tiling: ", status.message()));
  }
  return absl::InternalError(
      absl::StrCat("the engine's ", prepared.plan.strategy, " plan failed in the emulator (",
                   absl::StatusCodeToString(status.code()), "): ", status.message()));
}

}  // namespace

absl::Status CheckEmulationWork(const tl::TilingPlan& plan, const tl::MatmulProblem& problem,
                                uint64_t max_simulated_ops) {
  if (max_simulated_ops == 0) return absl::OkStatus();
  const emu::EmulationWork work = emu::EstimateEmulationWork(plan, problem);
  if (work.min_ops > max_simulated_ops) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the emulation needs at least ",
                     work.min_ops == kSaturated ? "2^64" : absl::StrCat(work.min_ops),
                     " simulated pipe operations (", work.why, "), above the server's limit of ",
                     max_simulated_ops, " (--max_execute_simulated_ops)"));
  }
  return absl::OkStatus();
}

emu::Tensors TensorsFromProto(const pb::ExecuteInputs& inputs) {
  auto convert = [](const pb::Tensor& in) {
    emu::HostTensor out;
    out.dtype = DataTypeFromProto(in.dtype());
    out.shape.assign(in.shape().begin(), in.shape().end());
    out.bytes.assign(in.data().begin(), in.data().end());
    return out;
  };
  emu::Tensors tensors;
  tensors.a = convert(inputs.a());
  tensors.b = convert(inputs.b());
  if (inputs.has_bias()) tensors.bias = convert(inputs.bias());
  if (inputs.has_x3()) tensors.x3 = convert(inputs.x3());
  if (inputs.has_scale()) tensors.scale = convert(inputs.scale());
  if (inputs.has_pertoken_scale()) tensors.pertoken_scale = convert(inputs.pertoken_scale());
  if (inputs.has_offset()) tensors.offset = convert(inputs.offset());
  if (inputs.has_grouped()) {
    // GroupedMatmul's lists, by GroupedTensor.
    const pb::GroupedExecuteInputs& g = inputs.grouped();
    const std::pair<tl::GroupedTensor, const google::protobuf::RepeatedPtrField<pb::Tensor>*>
        lists[] = {{tl::GroupedTensor::kX, &g.x()},
                   {tl::GroupedTensor::kWeight, &g.weight()},
                   {tl::GroupedTensor::kBias, &g.bias()},
                   {tl::GroupedTensor::kScale, &g.scale()},
                   {tl::GroupedTensor::kOffset, &g.offset()},
                   {tl::GroupedTensor::kAntiquantScale, &g.antiquant_scale()},
                   {tl::GroupedTensor::kAntiquantOffset, &g.antiquant_offset()},
                   {tl::GroupedTensor::kGroupList, &g.group_list()},
                   {tl::GroupedTensor::kPerTokenScale, &g.per_token_scale()}};
    for (const auto& [list, given] : lists) {
      for (const pb::Tensor& tensor : *given) {
        tensors.grouped[static_cast<size_t>(list)].push_back(convert(tensor));
      }
    }
  }
  return tensors;
}

namespace {

// The fields only Execute has.
absl::Status CheckExecuteFields(const pb::ExecuteRequest& request) {
  if (request.has_kernel_schedule()) {
    if (request.has_tiling()) {
      return FieldError(
          "kernel_schedule",
          "exclusive with tiling: give a CANN tiling or a kernel's schedule, not both");
    }
    if (!request.forced_strategy().empty()) {
      return FieldError("kernel_schedule",
                        "exclusive with forced_strategy: a kernel's schedule is not decided by "
                        "a strategy");
    }
  }
  if (request.has_tiling() && !request.forced_strategy().empty()) {
    return FieldError("forced_strategy", "not with an explicit tiling");
  }
  if (request.threads() > kMaxExecuteThreads) {
    return FieldError("threads",
                      absl::StrCat("at most ", kMaxExecuteThreads, ", got ", request.threads()));
  }
  if (request.timing_only() && request.return_c()) {
    return FieldError("return_c", "there is no C with timing_only");
  }
  return absl::OkStatus();
}

// What the emulator does not model of a valid problem.
absl::Status CheckEmulated(const tl::MatmulProblem& problem, bool kernel_schedule) {
  if (kernel_schedule && problem.format_b != tl::Format::kNd) {
    return FieldError("problem.format_b",
                      "must be ND with a kernel_schedule: B's values travel in ND layout, and "
                      "kernel_schedule.b_format says how the kernel stores it");
  }
  RETURN_IF_ERROR(emu::CheckModelled(problem));
  if (kernel_schedule && problem.op != tl::MatmulOp::kMatMulV3 &&
      problem.op != tl::MatmulOp::kQuantBatchMatmulV3) {
    return FieldError("kernel_schedule", "runs MatMulV3 and QuantBatchMatmulV3 problems only");
  }
  if (kernel_schedule && tl::BatchProduct(tl::OutputBatchDims(problem)) > 1) {
    return FieldError("kernel_schedule", "runs problems without batch dims only");
  }
  return absl::OkStatus();
}

// The limits of a run with numerics: its multiply-adds, each operand's
// elements and the bytes of a returned C.
absl::Status CheckNumericLimits(const tl::MatmulProblem& problem, bool return_c,
                                const ExecuteOptions& options) {
  if (problem.op == tl::MatmulOp::kGroupedMatmul) {
    // GroupedMatmul: its groups' multiply-adds, and each of x, the weight
    // and y whole.
    const uint64_t macs = emu::GroupedUsefulMacs(problem);
    if (options.max_numeric_macs != 0 && macs > options.max_numeric_macs) {
      return absl::ResourceExhaustedError(
          absl::StrCat("problem: the numerics need sum m_g * n_g * k_g = ", macs,
                       " MACs over the groups, above the server's limit of ",
                       options.max_numeric_macs, " (--max_execute_work); use timing_only"));
    }
    const emu::OperandShapes shapes = emu::ShapesOf(problem);
    for (const auto& [name, shape] : {std::pair{"x", &shapes.a}, std::pair{"weight", &shapes.b},
                                      std::pair{"y", &shapes.c}}) {
      uint64_t elements = 1;
      for (int64_t dim : *shape) elements = SatMul(elements, static_cast<uint64_t>(dim));
      if (elements > options.max_operand_elements) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "problem: grouped.", name, " has ", elements, " elements, above the limit of ",
            options.max_operand_elements, " per operand for a run with numerics; use timing_only"));
      }
    }
    if (return_c) {
      uint64_t elements = 1;
      for (int64_t dim : shapes.c) elements = SatMul(elements, static_cast<uint64_t>(dim));
      const uint64_t bytes = SatMul(elements, tl::DataTypeBytes(
                                                  problem.grouped[tl::GroupedTensor::kY].dtype));
      if (bytes > options.max_returned_c_bytes) {
        return absl::ResourceExhaustedError(
            absl::StrCat("return_c: y is ", bytes, " bytes, above the limit of ",
                         options.max_returned_c_bytes, " bytes per response"));
      }
    }
    return absl::OkStatus();
  }
  const uint64_t m = problem.m, n = problem.n, k = problem.k;
  // Every batch counts (A, B and C with their batch dims).
  const emu::OperandShapes shapes = emu::ShapesOf(problem);
  const auto elements_of = [](const std::vector<int64_t>& shape) {
    uint64_t count = 1;
    for (int64_t dim : shape) count = SatMul(count, static_cast<uint64_t>(dim));
    return count;
  };
  const uint64_t batches = elements_of(shapes.c) / std::max<uint64_t>(1, m * n);
  const uint64_t macs = SatMul(SatMul(SatMul(m, n), k), batches);
  if (options.max_numeric_macs != 0 && macs > options.max_numeric_macs) {
    return absl::ResourceExhaustedError(
        absl::StrCat("problem: the numerics need m * n * k", batches > 1 ? " * batches" : "", " = ",
                     macs, " MACs, above the server's limit of ", options.max_numeric_macs,
                     " (--max_execute_work); use timing_only"));
  }
  const struct {
    const char* name;
    uint64_t elements;
  } operands[] = {
      {"A", elements_of(shapes.a)}, {"B", elements_of(shapes.b)}, {"C", elements_of(shapes.c)}};
  for (const auto& operand : operands) {
    if (operand.elements > options.max_operand_elements) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "problem: ", operand.name, " has ", operand.elements, " elements, above the limit of ",
          options.max_operand_elements, " per operand for a run with numerics; use timing_only"));
    }
  }
  if (return_c) {
    const uint64_t c_bytes = SatMul(elements_of(shapes.c), tl::DataTypeBytes(problem.dtype_c));
    if (c_bytes > options.max_returned_c_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("return_c: C is ", c_bytes, " bytes, above the limit of ",
                       options.max_returned_c_bytes, " bytes per response"));
    }
  }
  return absl::OkStatus();
}

// Where the operands come from, checked against the limits: none for
// timing_only, the request's inline tensors, or the seed.
absl::Status PrepareInputs(const pb::ExecuteRequest& request, const ExecuteOptions& options,
                           PreparedExecute* prepared) {
  if (prepared->timing_only) {
    prepared->input_source = pb::INPUT_SOURCE_NONE;
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckNumericLimits(prepared->problem, prepared->return_c, options));
  if (request.has_inputs()) {
    RETURN_IF_ERROR(CheckInputs(request.inputs(), prepared->problem));
    prepared->inputs = &request.inputs();
    prepared->input_source = pb::INPUT_SOURCE_INLINE;
  } else {
    prepared->input_source = pb::INPUT_SOURCE_SEED;
    prepared->seed = request.seed();
  }
  return absl::OkStatus();
}

// The tiling to run: the request's explicit one, or the engine's decision.
absl::StatusOr<tl::TilingDecision> TilingFor(const pb::ExecuteRequest& request,
                                             const tl::StrategyRegistry& registry,
                                             const PreparedExecute& prepared) {
  tl::TilingDecision decision;
  if (request.has_tiling()) {
    ASSIGN_OR_RETURN(decision.plan,
                     PlanFromExplicitTiling(request.tiling(), prepared.problem, prepared.chip));
    return decision;
  }
  tl::DecideOptions decide;
  decide.forced_strategy = request.forced_strategy();
  absl::StatusOr<tl::TilingDecision> decided =
      registry.Decide(prepared.problem, prepared.chip, decide);
  if (!decided.ok()) return DecisionError(decided.status(), !request.forced_strategy().empty());
  decision.plan = std::move(decided->plan);
  return decision;
}

// A kernel schedule checked against the problem and the chip by the
// emulator, then against the work limit by the estimate CANN's plans get.
absl::Status PrepareKernel(const emu::KernelSchedule& kernel, const ExecuteOptions& options,
                           PreparedExecute* prepared) {
  absl::Status valid = emu::ValidateKernelSchedule(kernel, prepared->problem, prepared->chip);
  switch (valid.code()) {
    case absl::StatusCode::kOk:
      break;
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kResourceExhausted:
      return valid;
    default:
      // A schedule that does not fit the problem or the chip is a bad
      // request, whatever code the check picked.
      return absl::InvalidArgumentError(valid.message());
  }
  RETURN_IF_ERROR(UnderField(CheckEmulationWork(WorkEstimatePlan(kernel, prepared->problem),
                                                prepared->problem, options.max_simulated_ops),
                             "kernel_schedule"));
  prepared->kernel = kernel;
  prepared->kernel_schedule = KernelScheduleToProto(kernel);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PreparedExecute> PrepareExecute(const pb::ExecuteRequest& request,
                                               const tl::StrategyRegistry& registry,
                                               const ExecuteOptions& options) {
  // GetTiling's pipeline, with Execute's own checks at its fixed points. A
  // kernel schedule's own fields are checked with the other wire fields,
  // before the problem; it runs on any architecture.
  const RequestParts parts = PartsOf(request);
  const bool has_kernel = request.has_kernel_schedule();
  std::optional<emu::KernelSchedule> kernel;
  RequestSteps steps;
  steps.check_fields = [&request, &kernel, has_kernel]() -> absl::Status {
    RETURN_IF_ERROR(CheckExecuteFields(request));
    if (has_kernel) {
      ASSIGN_OR_RETURN(kernel, KernelScheduleFromProto(request.kernel_schedule()));
    }
    return absl::OkStatus();
  };
  steps.check_problem = [has_kernel](const tl::MatmulProblem& problem) {
    return CheckEmulated(problem, has_kernel);
  };
  steps.resolve_chip = [&request, &parts] { return ResolveExecuteChip(request, parts); };
  steps.any_arch = has_kernel;
  ResolvedRequest resolved;
  RETURN_IF_ERROR(ResolveRequest(parts, steps, &resolved));

  PreparedExecute prepared;
  prepared.id = request.id();
  prepared.problem = resolved.inputs.TakeProblem();
  prepared.chip = resolved.inputs.TakeChip();
  prepared.timing_only = request.timing_only();
  prepared.return_c = request.return_c();
  prepared.threads = ThreadsFor(request.threads(), options);
  RETURN_IF_ERROR(PrepareInputs(request, options, &prepared));
  if (kernel.has_value()) {
    RETURN_IF_ERROR(PrepareKernel(*kernel, options, &prepared));
    return prepared;
  }

  ASSIGN_OR_RETURN(tl::TilingDecision decision, TilingFor(request, registry, prepared));
  prepared.explicit_tiling = request.has_tiling();
  if (!prepared.explicit_tiling) {
    // CANN's plan overflows a buffer of this chip (GetTiling answers it with
    // a warning): the kernel would run past the buffer, so nothing is run.
    RETURN_IF_ERROR(
        tl::PlanHazard(decision.plan, "; the emulator does not run a kernel past a buffer"));
  }
  RETURN_IF_ERROR(
      UnderField(CheckEmulationWork(decision.plan, prepared.problem, options.max_simulated_ops),
                 WorkField(prepared)));
  DecisionToProto(decision, prepared.chip, &prepared.tiling);
  prepared.tiling.set_id(request.id());
  prepared.plan = std::move(decision.plan);
  return prepared;
}

absl::Status RunExecute(const PreparedExecute& prepared, const ExecuteOptions& options,
                        const std::atomic<bool>* cancelled, pb::ExecuteResponse* response) {
  const auto start = std::chrono::steady_clock::now();
  emu::Tensors inputs;
  if (prepared.input_source == pb::INPUT_SOURCE_INLINE) {
    inputs = TensorsFromProto(*prepared.inputs);
  } else if (prepared.input_source == pb::INPUT_SOURCE_SEED) {
    inputs = emu::RandomInputs(prepared.problem, prepared.seed);
  }

  emu::EmulatorOptions emulator;
  emulator.threads = prepared.threads;
  emulator.timing_only = prepared.timing_only;
  emulator.cancelled = cancelled;
  emulator.max_simulated_ops = options.max_simulated_ops;
  emulator.max_numeric_macs = options.max_numeric_macs;
  if (auto it = options.arch_timing.find(prepared.chip.npu_arch); it != options.arch_timing.end()) {
    emulator.arch_timing = it->second;
  }
  absl::StatusOr<emu::EmulationResult> result =
      prepared.kernel.has_value()
          ? emu::EmulateKernel(*prepared.kernel, prepared.problem, prepared.chip, inputs, emulator)
          : emu::Emulate(prepared.plan, prepared.problem, prepared.chip, inputs, emulator);
  if (!result.ok()) return EmulatorError(result.status(), prepared);

  response->Clear();
  if (!prepared.timing_only) {
    absl::StatusOr<emu::AccuracyReport> accuracy = emu::CompareWithReference(
        prepared.problem, inputs, result->c, prepared.threads, cancelled,
        prepared.kernel.has_value() ? prepared.kernel->epilogue : emu::Epilogue::kNone);
    if (!accuracy.ok()) {
      if (accuracy.status().code() == absl::StatusCode::kCancelled) return accuracy.status();
      return absl::InternalError(absl::StrCat("reference check: ", accuracy.status().message()));
    }
    pb::AccuracyReport* out = response->mutable_accuracy();
    out->set_max_abs_error(accuracy->max_abs_error);
    out->set_max_rel_error(accuracy->max_rel_error);
    out->set_error_bound(accuracy->error_bound);
    out->set_worst_bound_ratio(accuracy->worst_bound_ratio);
    out->set_passed(accuracy->passed);
    out->set_elements_over_bound(accuracy->elements_over_bound);
    if (prepared.problem.op == tl::MatmulOp::kGroupedMatmul) {
      // GroupedMatmul: the group that holds it and its place in the group's y.
      const emu::GroupedElement worst =
          emu::GroupedElementOf(prepared.problem, accuracy->worst_index);
      out->set_worst_row(static_cast<int64_t>(worst.row));
      out->set_worst_col(static_cast<int64_t>(worst.col));
      out->set_worst_batch(static_cast<int64_t>(worst.group));
    } else {
      // The index runs over the stacked batches of C.
      const uint64_t n = static_cast<uint64_t>(prepared.problem.n);
      const uint64_t m = static_cast<uint64_t>(prepared.problem.m);
      out->set_worst_row(static_cast<int64_t>(accuracy->worst_index / n % m));
      out->set_worst_col(static_cast<int64_t>(accuracy->worst_index % n));
      out->set_worst_batch(static_cast<int64_t>(accuracy->worst_index / n / m));
    }
    out->set_output_unit_roundoff(accuracy->output_unit_roundoff);
    out->set_accumulation_unit_roundoff(accuracy->accumulation_unit_roundoff);
    out->set_bound_rule(accuracy->bound_rule);
    if (prepared.return_c) {
      pb::Tensor* c = response->mutable_c();
      c->set_dtype(DataTypeToProto(result->c.dtype));
      for (int64_t dim : result->c.shape) c->add_shape(dim);
      c->set_data(result->c.bytes.data(), result->c.bytes.size());
    }
  }
  response->set_id(prepared.id);
  if (prepared.kernel.has_value()) {
    *response->mutable_kernel_schedule() = prepared.kernel_schedule;
  } else {
    *response->mutable_tiling() = prepared.tiling;
  }
  *response->mutable_platform() = ChipToProto(prepared.chip);
  response->set_explicit_tiling(prepared.explicit_tiling);
  response->set_input_source(prepared.input_source);
  response->set_seed(prepared.seed);
  TimingToProto(*result, response->mutable_timing());
  if (prepared.problem.op == tl::MatmulOp::kGroupedMatmul) {
    // How the groups were split: the histogram given or the even spread.
    response->add_notes(emu::GroupedNote(prepared.problem));
    if (absl::StatusOr<tl::grouped::GmmGroups> groups =
            tl::grouped::GroupsOf(prepared.problem.grouped);
        groups.ok()) {
      for (int64_t rows : groups->histogram) response->add_token_histogram(rows);
    }
  }
  response->set_threads_used(static_cast<uint32_t>(prepared.threads));
  response->set_host_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return absl::OkStatus();
}

}  // namespace npu::server
