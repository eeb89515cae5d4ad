#include "client/tilingctl/execute.h"

#include <cinttypes>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

absl::string_view DtypeName(pb::DataType dtype) {
  switch (dtype) {
    case pb::DATA_TYPE_FLOAT16:
      return "float16";
    case pb::DATA_TYPE_BFLOAT16:
      return "bfloat16";
    case pb::DATA_TYPE_FLOAT32:
      return "float32";
    default:
      return "unspecified";
  }
}

NpyDtype NpyDtypeFor(pb::DataType dtype) {
  switch (dtype) {
    case pb::DATA_TYPE_FLOAT32:
      return NpyDtype::kFloat32;
    case pb::DATA_TYPE_BFLOAT16:
      return NpyDtype::kUint16;
    default:
      return NpyDtype::kFloat16;
  }
}

absl::string_view NpyDtypeName(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kFloat16:
      return "float16";
    case NpyDtype::kFloat32:
      return "float32";
    case NpyDtype::kUint16:
      return "uint16";
    default:  // the quantized types: the float paths never see them
      break;
  }
  return "?";
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return absl::StrFormat("%.2f GiB", bytes / 1073741824.0);
  if (bytes >= (uint64_t{1} << 20)) return absl::StrFormat("%.2f MiB", bytes / 1048576.0);
  if (bytes >= 1024) return absl::StrFormat("%.2f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

uint64_t FieldValue(const pb::TilingResponse& tiling, absl::string_view name, bool* found) {
  for (const pb::TilingField& field : tiling.fields()) {
    if (field.name() == name) {
      *found = true;
      return field.value();
    }
  }
  *found = false;
  return 0;
}

}  // namespace

absl::StatusOr<pb::Tensor> TensorFromNpy(const NpyArray& array, pb::DataType dtype, int rank,
                                         absl::string_view what) {
  const NpyDtype want = NpyDtypeFor(dtype);
  if (array.dtype != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the file holds ", NpyDtypeName(array.dtype), " ('", NpyDescr(array.dtype),
        "'), but the operand is ", DtypeName(dtype), ", which needs ", NpyDtypeName(want), " ('",
        NpyDescr(want), "')",
        dtype == pb::DATA_TYPE_BFLOAT16 ? " holding the bfloat16 bits"
                                        : "; pass --dtype (or --dtype-a / -b) to match"));
  }
  if (static_cast<int>(array.shape.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape (", absl::StrJoin(array.shape, ", "), ") has ",
                     array.shape.size(), " dimensions, expected ", rank));
  }
  pb::Tensor tensor;
  tensor.set_dtype(dtype);
  for (int64_t dim : array.shape) tensor.add_shape(dim);
  tensor.set_data(array.data);
  return tensor;
}

absl::StatusOr<NpyArray> NpyFromTensor(const pb::Tensor& tensor) {
  NpyArray array;
  array.dtype = NpyDtypeFor(tensor.dtype());
  array.shape.assign(tensor.shape().begin(), tensor.shape().end());
  uint64_t elements = 1;
  for (int64_t dim : array.shape) {
    if (dim < 0) return absl::InvalidArgumentError("C has a negative dimension");
    elements *= static_cast<uint64_t>(dim);
  }
  if (tensor.data().size() != elements * NpyItemBytes(array.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("C has ", tensor.data().size(),
                                                   " bytes, its shape needs ",
                                                   elements * NpyItemBytes(array.dtype)));
  }
  array.data = tensor.data();
  return array;
}

absl::StatusOr<pb::TilingResponse> ParseTilingFile(absl::string_view json_text) {
  nlohmann::json root = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_object()) return absl::InvalidArgumentError("the top level must be an object");
  // `tilingctl execute --json` output: its tiling is the one to rerun.
  if (root.contains("tiling") && root["tiling"].is_object()) root = root["tiling"];
  pb::TilingResponse tiling;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(root.dump(), &tiling, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a TilingResponse in the proto JSON mapping: ", std::string(status.message())));
  }
  return tiling;
}

namespace {

// "static_grid" for KERNEL_SCHEDULE_KIND_STATIC_GRID: the calibration
// files' names.
std::string KindLabel(pb::KernelScheduleKind kind) {
  std::string name = pb::KernelScheduleKind_Name(kind);
  absl::string_view label = name;
  absl::ConsumePrefix(&label, "KERNEL_SCHEDULE_KIND_");
  return absl::AsciiStrToLower(label);
}

// The kernel schedule line of a report: the schedule that ran instead of a
// CANN tiling.
void AppendKernelSchedule(const pb::KernelSchedule& k, std::string& out) {
  absl::StrAppendFormat(&out, "%-14s %s, block_dim %u, base %ux%ux%u, L1 %ux%ux%u\n", "kernel",
                        KindLabel(k.kind()), k.block_dim(), k.base_m(), k.base_n(), k.base_k(),
                        k.l1_m(), k.l1_n(), k.l1_k());
  std::string options = absl::StrFormat(
      "depth %u/%u, L0 %s, L0C %s, unit_flag %s, B %s", k.depth_a1(), k.depth_b1(),
      k.l0_double_buffer() ? "double" : "single", k.l0c_double_buffer() ? "double" : "single",
      k.unit_flag() ? "on" : "off", k.b_format() == pb::FORMAT_FRACTAL_NZ ? "FRACTAL_NZ" : "ND");
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_STATIC_GRID) {
    absl::StrAppendFormat(&options, ", block %ux%u, %s", k.single_core_m(), k.single_core_n(),
                          k.inner_order() == pb::TILE_ORDER_COL_MAJOR ? "col_major" : "row_major");
    if (k.l2_split_rounds() > 1)
      absl::StrAppendFormat(&options, ", %u L2 rounds", k.l2_split_rounds());
  }
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_ASWT) {
    absl::StrAppendFormat(&options, ", window %u", k.aswt_window());
  }
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP) {
    absl::StrAppendFormat(&options, ", %u K splits", k.sk_k_splits());
  }
  if (k.kind() == pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE) {
    absl::StrAppendFormat(&options, ", swizzle <%u, %u>", k.swizzle_offset(),
                          k.swizzle_direction());
  }
  if (k.epilogue() == pb::EPILOGUE_RELU_GM) absl::StrAppend(&options, ", ReLU in FIXPIPE");
  if (k.epilogue() == pb::EPILOGUE_RELU_UB) absl::StrAppend(&options, ", ReLU on the AIV");
  absl::StrAppendFormat(&out, "%-14s %s\n", "", options);
}

// The tiling lines of a report: the CANN tiling that ran.
void AppendTilingLines(const pb::ExecuteResponse& r, std::string& out) {
  const pb::TilingResponse& t = r.tiling();
  absl::StrAppendFormat(&out, "%-14s %s%s, key %u (%s, %s, %s), block_dim %u, %s\n", "tiling",
                        t.strategy(), r.explicit_tiling() ? " (explicit, from --tiling)" : "",
                        t.tiling_key(), t.key().model_name(), t.key().full_load_name(),
                        t.key().l0c2out_name(), t.block_dim(), t.kernel_type_name());
  std::string blocks;
  for (const char* name : {"baseM", "baseN", "baseK", "mL1", "nL1", "kL1", "skSingleCoreK",
                           "usedCoreNum", "baseMN", "aivNum"}) {
    bool found = false;
    const uint64_t value = FieldValue(t, name, &found);
    if (found) absl::StrAppend(&blocks, blocks.empty() ? "" : " ", name, "=", value);
  }
  absl::StrAppendFormat(&out, "%-14s %s (%s)\n", "", blocks, t.tiling_struct());
}

// The inputs line of a report.
void AppendInputs(const pb::ExecuteResponse& r, std::string& out) {
  switch (r.input_source()) {
    case pb::INPUT_SOURCE_INLINE:
      absl::StrAppendFormat(&out, "%-14s inline (.npy files)\n", "inputs");
      break;
    case pb::INPUT_SOURCE_SEED:
      absl::StrAppendFormat(&out, "%-14s generated from seed %u, uniform in [-1, 1)\n", "inputs",
                            r.seed());
      break;
    default:
      absl::StrAppendFormat(&out, "%-14s none (timing only)\n", "inputs");
      break;
  }
}

// The tiling (or kernel schedule), platform and inputs lines of an Execute
// report. The platform is the response's (the tiling's, from a server that
// does not send it).
void AppendRunSummary(const pb::ExecuteResponse& r, std::string& out) {
  if (r.has_kernel_schedule()) {
    AppendKernelSchedule(r.kernel_schedule(), out);
  } else {
    AppendTilingLines(r, out);
  }
  const pb::ChipSpec& chip = r.has_platform() ? r.platform() : r.tiling().platform();
  absl::StrAppendFormat(&out, "%-14s %s%s: %u AIC, %u AIV, %u MHz\n", "platform", chip.name(),
                        chip.npu_arch().empty() ? "" : absl::StrCat(" (", chip.npu_arch(), ")"),
                        chip.aic_num(), chip.aiv_num(), chip.cube_freq_mhz());
  AppendInputs(r, out);
}

// The accuracy section: the emulated C against the fp64 reference.
void AppendAccuracy(const pb::AccuracyReport& a, std::string& out) {
  absl::StrAppendFormat(&out, "\naccuracy vs fp64 reference: %s\n", a.passed() ? "PASS" : "FAIL");
  absl::StrAppendFormat(&out, "  %-20s %.6g\n", "max abs error", a.max_abs_error());
  absl::StrAppendFormat(&out, "  %-20s %.6g\n", "max rel error", a.max_rel_error());
  absl::StrAppendFormat(&out, "  %-20s C[%d, %d]: bound %.6g, error / bound %.4g\n",
                        "worst element", a.worst_row(), a.worst_col(), a.error_bound(),
                        a.worst_bound_ratio());
  absl::StrAppendFormat(&out, "  %-20s %u\n", "elements over bound", a.elements_over_bound());
  absl::StrAppendFormat(&out, "  %-20s %.3g * |ref| + 2 (k + 2) %.3g * sum|a b| + subnormal of C\n",
                        "bound per element", a.output_unit_roundoff(),
                        a.accumulation_unit_roundoff());
}

// The msprof columns: task duration, and per AIC (AIV, when any ran) pipe
// its average busy time over the cores that ran and its ratio to their
// average time, as msprof's op_summary shows them.
void AppendMsprof(const pb::MsprofSummary& m, std::string& out) {
  absl::StrAppendFormat(&out, "  %-20s %.3f us\n", "msprof task duration", m.task_duration_us());
  absl::StrAppendFormat(&out,
                        "  %-20s time %.3f us, mac %.3f us (%.3f), mte1 %.3f us (%.3f), "
                        "mte2 %.3f us (%.3f), fixpipe %.3f us (%.3f)\n",
                        absl::StrCat("aic (", m.aic_cores(), " cores)"), m.aic_time_us(),
                        m.aic_mac_time_us(), m.aic_mac_ratio(), m.aic_mte1_time_us(),
                        m.aic_mte1_ratio(), m.aic_mte2_time_us(), m.aic_mte2_ratio(),
                        m.aic_fixpipe_time_us(), m.aic_fixpipe_ratio());
  if (m.aiv_cores() == 0) return;
  absl::StrAppendFormat(&out,
                        "  %-20s time %.3f us, vec %.3f us (%.3f), mte2 %.3f us (%.3f), "
                        "mte3 %.3f us (%.3f)\n",
                        absl::StrCat("aiv (", m.aiv_cores(), " cores)"), m.aiv_time_us(),
                        m.aiv_vec_time_us(), m.aiv_vec_ratio(), m.aiv_mte2_time_us(),
                        m.aiv_mte2_ratio(), m.aiv_mte3_time_us(), m.aiv_mte3_ratio());
}

// The timing section: totals, traffic, the msprof columns and one row per
// core.
void AppendTiming(const pb::TimingReport& tm, std::string& out) {
  absl::StrAppendFormat(&out, "\ntiming (simulated)\n");
  absl::StrAppendFormat(&out, "  %-20s %u cycles = %.3f us\n", "predicted", tm.predicted_cycles(),
                        tm.predicted_time_us());
  absl::StrAppendFormat(&out, "  %-20s %.1f %%\n", "cube utilization",
                        100.0 * tm.cube_utilization());
  absl::StrAppendFormat(&out, "  %-20s %s\n", "bound by", tm.bound_resource());
  absl::StrAppendFormat(&out, "  %-20s %u AIC, %u AIV, %u rounds, %u simulated ops\n", "cores",
                        tm.aic_cores(), tm.aiv_cores(), tm.rounds(), tm.simulated_ops());
  const pb::TrafficBytes& b = tm.traffic();
  absl::StrAppendFormat(&out,
                        "  %-20s DDR read %s, L2 read %s, GM write %s, L1->L0 %s, L0C out %s, "
                        "UB in %s, UB out %s, workspace %s\n",
                        "bytes", Bytes(b.ddr_read_bytes()), Bytes(b.l2_read_bytes()),
                        Bytes(b.gm_write_bytes()), Bytes(b.l1_to_l0_bytes()),
                        Bytes(b.l0c_out_bytes()), Bytes(b.ub_in_bytes()), Bytes(b.ub_out_bytes()),
                        Bytes(b.workspace_bytes()));
  absl::StrAppendFormat(&out, "  %-20s DDR %u, L2 %u cycles\n", "channels busy",
                        tm.ddr_busy_cycles(), tm.l2_busy_cycles());
  AppendMsprof(tm.msprof(), out);
  absl::StrAppendFormat(&out, "\n  %-8s %6s %12s %12s %12s %12s %12s %12s %12s\n", "core", "units",
                        "finish", "MTE2", "MTE1", "CUBE", "FIXPIPE", "VEC", "MTE3");
  for (const pb::CoreTiming& core : tm.cores()) {
    const pb::PipeCycles& p = core.busy_cycles();
    const std::string name =
        absl::StrCat(core.kind() == pb::CORE_KIND_AIV ? "AIV " : "AIC ", core.core());
    absl::StrAppendFormat(&out, "  %-8s %6u %12u %12u %12u %12u %12u %12u %12u\n", name,
                          core.units(), core.finish_cycle(), p.mte2(), p.mte1(), p.cube(),
                          p.fixpipe(), p.vec(), p.mte3());
  }
  const pb::PipeCycles& total = tm.busy_cycles();
  absl::StrAppendFormat(&out, "  %-8s %6s %12s %12u %12u %12u %12u %12u %12u\n", "all", "", "",
                        total.mte2(), total.mte1(), total.cube(), total.fixpipe(), total.vec(),
                        total.mte3());
}

}  // namespace

std::string FormatExecute(const pb::ExecuteResponse& r) {
  std::string out;
  AppendRunSummary(r, out);
  if (r.has_accuracy()) AppendAccuracy(r.accuracy(), out);
  AppendTiming(r.timing(), out);
  absl::StrAppendFormat(&out, "\n%-14s %.3f s on %u thread%s (server)\n", "host time",
                        r.host_seconds(), r.threads_used(), r.threads_used() == 1 ? "" : "s");
  return out;
}

}  // namespace npu::client
