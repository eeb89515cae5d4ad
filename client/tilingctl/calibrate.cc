#include "client/tilingctl/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "client/tilingctl/cli.h"
#include "client/tilingctl/format.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;
using Json = nlohmann::json;

std::string KeyPath(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

absl::Status BadKey(absl::string_view path, absl::string_view key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(KeyPath(path, key), ": ", what));
}

// The value of `key`, or nullptr when it is absent or null.
const Json* Value(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// A non-negative integer of at most `max`, or nullopt when absent or null.
absl::StatusOr<std::optional<uint64_t>> OptionalCount(const Json& object, const char* key,
                                                      absl::string_view path, uint64_t max) {
  const Json* value = Value(object, key);
  if (value == nullptr) return std::optional<uint64_t>();
  if (!value->is_number_integer()) {
    return BadKey(path, key, absl::StrCat("not an integer: ", value->dump()));
  }
  if (!value->is_number_unsigned() && value->get<int64_t>() < 0) {
    return BadKey(path, key, absl::StrCat("negative: ", value->dump()));
  }
  const uint64_t v = value->get<uint64_t>();
  if (v > max) return BadKey(path, key, absl::StrCat("at most ", max, ", got ", v));
  return std::optional<uint64_t>(v);
}

absl::StatusOr<std::optional<bool>> OptionalBool(const Json& object, const char* key,
                                                 absl::string_view path) {
  const Json* value = Value(object, key);
  if (value == nullptr) return std::optional<bool>();
  if (!value->is_boolean()) {
    return BadKey(path, key, absl::StrCat("not a boolean: ", value->dump()));
  }
  return std::optional<bool>(value->get<bool>());
}

absl::StatusOr<std::optional<std::string>> OptionalString(const Json& object, const char* key,
                                                          absl::string_view path) {
  const Json* value = Value(object, key);
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) return BadKey(path, key, absl::StrCat("not a string: ", value->dump()));
  return std::optional<std::string>(value->get<std::string>());
}

// One of `names` (the wire enum values listed with them), by its file name.
template <typename Enum>
absl::StatusOr<Enum> NamedValue(const std::string& name,
                                std::initializer_list<std::pair<const char*, Enum>> names,
                                absl::string_view path, const char* key) {
  std::vector<std::string> known;
  for (const auto& [file_name, value] : names) {
    if (name == file_name) return value;
    known.push_back(file_name);
  }
  return BadKey(
      path, key,
      absl::StrCat("unknown value \"", name, "\"; expected ", absl::StrJoin(known, ", ")));
}

// The integer keys of a kernel object and their fields (exactly one setter
// is set); a value must fit the field (the server checks it against the
// problem and the chip).
struct CountKey {
  const char* key;
  void (pb::KernelSchedule::*set32)(uint32_t);
  void (pb::KernelSchedule::*set64)(uint64_t);
};
constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
const CountKey kCountKeys[] = {
    {"block_dim", &pb::KernelSchedule::set_block_dim, nullptr},
    {"base_m", nullptr, &pb::KernelSchedule::set_base_m},
    {"base_n", nullptr, &pb::KernelSchedule::set_base_n},
    {"base_k", nullptr, &pb::KernelSchedule::set_base_k},
    {"l1_m", nullptr, &pb::KernelSchedule::set_l1_m},
    {"l1_n", nullptr, &pb::KernelSchedule::set_l1_n},
    {"l1_k", nullptr, &pb::KernelSchedule::set_l1_k},
    {"l1_kb", nullptr, &pb::KernelSchedule::set_l1_kb},
    {"depth_a1", &pb::KernelSchedule::set_depth_a1, nullptr},
    {"depth_b1", &pb::KernelSchedule::set_depth_b1, nullptr},
    {"single_core_m", nullptr, &pb::KernelSchedule::set_single_core_m},
    {"single_core_n", nullptr, &pb::KernelSchedule::set_single_core_n},
    {"swizzle_offset", &pb::KernelSchedule::set_swizzle_offset, nullptr},
    {"swizzle_direction", &pb::KernelSchedule::set_swizzle_direction, nullptr},
    {"aswt_window", &pb::KernelSchedule::set_aswt_window, nullptr},
    {"sk_k_splits", &pb::KernelSchedule::set_sk_k_splits, nullptr},
    {"l2_split_rounds", &pb::KernelSchedule::set_l2_split_rounds, nullptr},
};

struct BoolKey {
  const char* key;
  void (pb::KernelSchedule::*set)(bool);
};
const BoolKey kBoolKeys[] = {
    {"l0_double_buffer", &pb::KernelSchedule::set_l0_double_buffer},
    {"l0c_double_buffer", &pb::KernelSchedule::set_l0c_double_buffer},
    {"unit_flag", &pb::KernelSchedule::set_unit_flag},
    {"mdl", &pb::KernelSchedule::set_mdl},
};

// The enum-valued keys of a kernel object: schedule, inner_order, b_format,
// epilogue.
absl::Status SetKernelEnums(const Json& kernel, absl::string_view path, pb::KernelSchedule* out) {
  absl::StatusOr<std::optional<std::string>> schedule = OptionalString(kernel, "schedule", path);
  if (!schedule.ok()) return schedule.status();
  if (!schedule->has_value()) {
    return BadKey(path, "schedule",
                  "required: single_core, static_grid, round_robin_tiles, identity_swizzle, aswt "
                  "or stream_k_dp");
  }
  absl::StatusOr<pb::KernelScheduleKind> kind = NamedValue<pb::KernelScheduleKind>(
      **schedule,
      {{"single_core", pb::KERNEL_SCHEDULE_KIND_SINGLE_CORE},
       {"static_grid", pb::KERNEL_SCHEDULE_KIND_STATIC_GRID},
       {"round_robin_tiles", pb::KERNEL_SCHEDULE_KIND_ROUND_ROBIN_TILES},
       {"identity_swizzle", pb::KERNEL_SCHEDULE_KIND_IDENTITY_SWIZZLE},
       {"aswt", pb::KERNEL_SCHEDULE_KIND_ASWT},
       {"stream_k_dp", pb::KERNEL_SCHEDULE_KIND_STREAM_K_DP}},
      path, "schedule");
  if (!kind.ok()) return kind.status();
  out->set_kind(*kind);

  absl::StatusOr<std::optional<std::string>> text = OptionalString(kernel, "inner_order", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::TileOrder> order = NamedValue<pb::TileOrder>(
        **text, {{"row_major", pb::TILE_ORDER_ROW_MAJOR}, {"col_major", pb::TILE_ORDER_COL_MAJOR}},
        path, "inner_order");
    if (!order.ok()) return order.status();
    out->set_inner_order(*order);
  }
  text = OptionalString(kernel, "epilogue", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::Epilogue> epilogue =
        NamedValue<pb::Epilogue>(**text,
                                 {{"none", pb::EPILOGUE_NONE},
                                  {"relu_gm", pb::EPILOGUE_RELU_GM},
                                  {"relu_ub", pb::EPILOGUE_RELU_UB}},
                                 path, "epilogue");
    if (!epilogue.ok()) return epilogue.status();
    out->set_epilogue(*epilogue);
  }
  text = OptionalString(kernel, "b_format", path);
  if (!text.ok()) return text.status();
  if (text->has_value()) {
    absl::StatusOr<pb::Format> format = FormatFromName(**text);
    if (!format.ok()) return BadKey(path, "b_format", format.status().message());
    out->set_b_format(*format);
  }
  return absl::OkStatus();
}

// Keys of a row, and what goes wrong with them, named "row <id>: <key>".
absl::Status RowError(absl::string_view id, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("row ", id, ": ", status.message()));
}

absl::StatusOr<int64_t> RequiredInt(const Json& row, const char* key) {
  const Json* value = Value(row, key);
  if (value == nullptr) return BadKey("", key, "required");
  if (!value->is_number_integer()) {
    return BadKey("", key, absl::StrCat("not an integer: ", value->dump()));
  }
  return value->get<int64_t>();
}

absl::StatusOr<pb::DataType> RequiredDtype(const Json& row, const char* key) {
  absl::StatusOr<std::optional<std::string>> name = OptionalString(row, key, "");
  if (!name.ok()) return name.status();
  if (!name->has_value()) return BadKey("", key, "required");
  absl::StatusOr<pb::DataType> dtype = DataTypeFromName(**name);
  if (!dtype.ok()) return BadKey("", key, dtype.status().message());
  return dtype;
}

// m, n, k, dtype_in (A and B), dtype_out (C), trans_a, trans_b, bias.
absl::Status SetProblem(const Json& row, pb::MatmulProblem* p) {
  for (const auto& [key, set] : {std::make_pair("m", &pb::MatmulProblem::set_m),
                                 std::make_pair("n", &pb::MatmulProblem::set_n),
                                 std::make_pair("k", &pb::MatmulProblem::set_k)}) {
    absl::StatusOr<int64_t> value = RequiredInt(row, key);
    if (!value.ok()) return value.status();
    (p->*set)(*value);
  }
  absl::StatusOr<pb::DataType> in = RequiredDtype(row, "dtype_in");
  if (!in.ok()) return in.status();
  absl::StatusOr<pb::DataType> out = RequiredDtype(row, "dtype_out");
  if (!out.ok()) return out.status();
  p->set_dtype_a(*in);
  p->set_dtype_b(*in);
  p->set_dtype_c(*out);
  for (const auto& [key, set] : {std::make_pair("trans_a", &pb::MatmulProblem::set_trans_a),
                                 std::make_pair("trans_b", &pb::MatmulProblem::set_trans_b),
                                 std::make_pair("bias", &pb::MatmulProblem::set_has_bias)}) {
    absl::StatusOr<std::optional<bool>> value = OptionalBool(row, key, "");
    if (!value.ok()) return value.status();
    (p->*set)(value->value_or(false));
  }
  // The rows give no bias dtype; C's is one CANN accepts with every input.
  if (p->has_bias()) p->set_dtype_bias(*out);
  return absl::OkStatus();
}

// The profile of the row's "chip", and its "aic", "aiv" and "freq_mhz" as
// overrides where they differ from it.
absl::Status SetPlatform(const Json& row, const pb::ListPlatformsResponse& platforms,
                         pb::ExecuteRequest* request) {
  absl::StatusOr<std::optional<std::string>> chip = OptionalString(row, "chip", "");
  if (!chip.ok()) return chip.status();
  if (!chip->has_value()) return BadKey("", "chip", "required");
  std::string profile;
  if (**chip == "ascend950pr" || **chip == "ascend950") {
    profile = "ascend950pr";
  } else if (**chip == "ascend910b1") {
    profile = "ascend910b1";
  } else {
    return BadKey("", "chip",
                  absl::StrCat("unknown chip \"", **chip,
                               "\"; expected ascend950pr, ascend950 or ascend910b1"));
  }
  const pb::ChipSpec* spec = nullptr;
  for (const pb::ChipSpec& platform : platforms.platforms()) {
    if (platform.name() == profile) spec = &platform;
  }
  if (spec == nullptr) {
    return BadKey("", "chip", absl::StrCat("the server has no platform \"", profile, "\""));
  }
  request->set_platform(profile);
  pb::PlatformOverrides* overrides = request->mutable_platform_overrides();
  const struct {
    const char* key;
    uint32_t profile_value;
    void (pb::PlatformOverrides::*set)(uint32_t);
  } figures[] = {{"aic", spec->aic_num(), &pb::PlatformOverrides::set_aic_num},
                 {"aiv", spec->aiv_num(), &pb::PlatformOverrides::set_aiv_num},
                 {"freq_mhz", spec->cube_freq_mhz(), &pb::PlatformOverrides::set_cube_freq_mhz}};
  for (const auto& figure : figures) {
    absl::StatusOr<std::optional<uint64_t>> value =
        OptionalCount(row, figure.key, "", std::numeric_limits<uint32_t>::max());
    if (!value.ok()) return value.status();
    if (value->has_value() && **value != figure.profile_value) {
      (overrides->*figure.set)(static_cast<uint32_t>(**value));
    }
  }
  if (overrides->ByteSizeLong() == 0) request->clear_platform_overrides();
  return absl::OkStatus();
}

// measured.task_duration_us and the published per-pipe figures.
absl::Status SetMeasured(const Json& row, CalibrationRow* out) {
  const Json* measured = Value(row, "measured");
  if (measured == nullptr) return BadKey("", "measured", "required");
  if (!measured->is_object()) return BadKey("", "measured", "not an object");
  auto positive = [&](const char* key, bool required) -> absl::StatusOr<std::optional<double>> {
    const Json* value = Value(*measured, key);
    if (value == nullptr) {
      if (required) return BadKey("measured", key, "required");
      return std::optional<double>();
    }
    if (!value->is_number() || !(value->get<double>() > 0)) {
      return BadKey("measured", key, absl::StrCat("not a positive number: ", value->dump()));
    }
    return std::optional<double>(value->get<double>());
  };
  absl::StatusOr<std::optional<double>> task = positive("task_duration_us", true);
  if (!task.ok()) return task.status();
  out->measured_us = **task;
  for (const char* pipe : kCalibrationPipes) {
    absl::StatusOr<std::optional<double>> value = positive(pipe, false);
    if (!value.ok()) return value.status();
    if (value->has_value()) out->measured_pipes.emplace_back(pipe, **value);
  }
  return absl::OkStatus();
}

absl::StatusOr<pb::ExecuteRequest> RequestFromRow(const Json& row,
                                                  const pb::ListPlatformsResponse& platforms,
                                                  const std::string& id) {
  pb::ExecuteRequest request;
  request.set_id(id);
  request.set_client_id(kClientId);
  request.set_timing_only(true);
  if (absl::Status status = SetProblem(row, request.mutable_problem()); !status.ok()) {
    return status;
  }
  if (absl::Status status = SetPlatform(row, platforms, &request); !status.ok()) return status;
  const Json* kernel = Value(row, "kernel");
  if (kernel == nullptr) return BadKey("", "kernel", "required");
  absl::StatusOr<pb::KernelSchedule> schedule = KernelScheduleFromJson(*kernel, "kernel");
  if (!schedule.ok()) return schedule.status();
  *request.mutable_kernel_schedule() = *std::move(schedule);
  return request;
}

double ErrorPct(double predicted, double measured) {
  return (predicted - measured) / measured * 100.0;
}

// msprof's name of a pipe figure, for the table: "aic_mac_time_us" -> "mac".
std::string PipeLabel(absl::string_view name) {
  absl::string_view label = name;
  if (absl::ConsumePrefix(&label, "aic_")) absl::ConsumeSuffix(&label, "_time_us");
  return std::string(label);
}

double PredictedPipe(const pb::MsprofSummary& msprof, absl::string_view name) {
  if (name == "aic_mac_time_us") return msprof.aic_mac_time_us();
  if (name == "aic_mte1_time_us") return msprof.aic_mte1_time_us();
  if (name == "aic_mte2_time_us") return msprof.aic_mte2_time_us();
  if (name == "aic_fixpipe_time_us") return msprof.aic_fixpipe_time_us();
  return 0;
}

}  // namespace

absl::StatusOr<pb::KernelSchedule> KernelScheduleFromJson(const Json& kernel,
                                                          absl::string_view path) {
  if (!kernel.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.empty() ? "the kernel schedule" : std::string(path), ": not an object"));
  }
  for (const auto& [key, value] : kernel.items()) {
    const bool known = std::any_of(std::begin(kKernelScheduleKeys), std::end(kKernelScheduleKeys),
                                   [&key = key](const char* name) { return key == name; });
    if (!known) {
      return BadKey(
          path, key,
          absl::StrCat("unknown key; expected ", absl::StrJoin(kKernelScheduleKeys, ", ")));
    }
  }
  pb::KernelSchedule out;
  if (absl::Status status = SetKernelEnums(kernel, path, &out); !status.ok()) return status;
  for (const CountKey& count : kCountKeys) {
    absl::StatusOr<std::optional<uint64_t>> value =
        OptionalCount(kernel, count.key, path, count.set32 != nullptr ? kMaxU32 : kMaxU64);
    if (!value.ok()) return value.status();
    if (!value->has_value()) continue;
    if (count.set32 != nullptr) {
      (out.*count.set32)(static_cast<uint32_t>(**value));
    } else {
      (out.*count.set64)(**value);
    }
  }
  for (const BoolKey& flag : kBoolKeys) {
    absl::StatusOr<std::optional<bool>> value = OptionalBool(kernel, flag.key, path);
    if (!value.ok()) return value.status();
    if (value->has_value()) (out.*flag.set)(**value);
  }
  absl::StatusOr<std::optional<uint64_t>> batch = OptionalCount(kernel, "batch", path, kMaxU64);
  if (!batch.ok()) return batch.status();
  if (batch->has_value() && **batch != 1) {
    return BadKey(path, "batch",
                  absl::StrCat(**batch, ": batched kernels are not modelled (null or 1)"));
  }
  absl::StatusOr<std::optional<std::string>> notes = OptionalString(kernel, "notes", path);
  if (!notes.ok()) return notes.status();
  return out;
}

absl::StatusOr<std::vector<CalibrationRow>> ParseCalibrationFile(
    absl::string_view json_text, const pb::ListPlatformsResponse& platforms) {
  const Json root = Json::parse(json_text.begin(), json_text.end(), nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_object()) return absl::InvalidArgumentError("the top level must be an object");
  const Json* schema = Value(root, "schema");
  if (schema == nullptr || !schema->is_string() ||
      schema->get<std::string>() != kCalibrationSchema) {
    return absl::InvalidArgumentError(absl::StrCat("schema: expected \"", kCalibrationSchema,
                                                   "\", got ",
                                                   schema == nullptr ? "none" : schema->dump()));
  }
  const Json* rows = Value(root, "rows");
  if (rows == nullptr || !rows->is_array() || rows->empty()) {
    return absl::InvalidArgumentError("rows: expected a non-empty list of rows");
  }
  std::vector<CalibrationRow> out;
  out.reserve(rows->size());
  for (size_t i = 0; i < rows->size(); ++i) {
    const Json& row = (*rows)[i];
    CalibrationRow parsed;
    parsed.id = absl::StrCat("#", i);
    if (!row.is_object()) {
      parsed.request = RowError(parsed.id, absl::InvalidArgumentError("not an object"));
      out.push_back(std::move(parsed));
      continue;
    }
    absl::StatusOr<std::optional<std::string>> id = OptionalString(row, "id", "");
    if (!id.ok() || !id->has_value() || (*id)->empty()) {
      parsed.request = RowError(parsed.id, id.ok() ? BadKey("", "id", "required") : id.status());
      out.push_back(std::move(parsed));
      continue;
    }
    parsed.id = **id;
    absl::Status measured = SetMeasured(row, &parsed);
    if (!measured.ok()) {
      parsed.request = RowError(parsed.id, measured);
    } else {
      parsed.request = RequestFromRow(row, platforms, parsed.id);
      if (!parsed.request.ok()) parsed.request = RowError(parsed.id, parsed.request.status());
    }
    out.push_back(std::move(parsed));
  }
  return out;
}

CalibrationReport RunCalibration(
    const std::vector<CalibrationRow>& rows,
    const std::function<absl::StatusOr<pb::ExecuteResponse>(const pb::ExecuteRequest&)>& execute) {
  CalibrationReport report;
  for (const char* pipe : kCalibrationPipes) report.pipes.push_back({pipe, 0, 0});
  std::vector<double> abs_errors;
  for (const CalibrationRow& row : rows) {
    CalibrationResult result;
    result.id = row.id;
    if (!row.request.ok()) {
      result.error = std::string(row.request.status().message());
      ++report.failed;
      report.rows.push_back(std::move(result));
      continue;
    }
    absl::StatusOr<pb::ExecuteResponse> response = execute(*row.request);
    if (!response.ok()) {
      result.error = absl::StrCat("row ", row.id,
                                  ": Execute: ", absl::StatusCodeToString(response.status().code()),
                                  ": ", response.status().message());
      ++report.failed;
      report.rows.push_back(std::move(result));
      continue;
    }
    result.platform = response->platform().name();
    result.msprof = response->timing().msprof();
    result.measured_us = row.measured_us;
    result.predicted_us = result.msprof.task_duration_us();
    result.error_pct = ErrorPct(result.predicted_us, result.measured_us);
    abs_errors.push_back(std::fabs(result.error_pct));
    for (const auto& [name, measured] : row.measured_pipes) {
      PipeComparison pipe;
      pipe.name = name;
      pipe.measured_us = measured;
      pipe.predicted_us = PredictedPipe(result.msprof, name);
      pipe.error_pct = ErrorPct(pipe.predicted_us, measured);
      for (PipeSummary& summary : report.pipes) {
        if (summary.name != name) continue;
        ++summary.rows;
        summary.max_abs_error_pct = std::max(summary.max_abs_error_pct, std::fabs(pipe.error_pct));
      }
      result.pipes.push_back(std::move(pipe));
    }
    ++report.ran;
    report.rows.push_back(std::move(result));
  }
  if (!abs_errors.empty()) {
    std::sort(abs_errors.begin(), abs_errors.end());
    const size_t n = abs_errors.size();
    report.median_abs_error_pct =
        n % 2 == 1 ? abs_errors[n / 2] : (abs_errors[n / 2 - 1] + abs_errors[n / 2]) / 2;
    report.max_abs_error_pct = abs_errors.back();
  }
  return report;
}

std::string CalibrationSummaryLine(const CalibrationReport& report) {
  return absl::StrFormat("%d rows: median |error| %.1f%%, max |error| %.1f%%", report.ran,
                         report.median_abs_error_pct, report.max_abs_error_pct);
}

std::string FormatCalibration(const CalibrationReport& report) {
  size_t id_width = 2;
  for (const CalibrationResult& row : report.rows) id_width = std::max(id_width, row.id.size());
  std::string out;
  absl::StrAppendFormat(&out, "%-*s %14s %14s %8s  %s\n", id_width, "id", "measured us",
                        "predicted us", "error", "pipes: measured / predicted us (error)");
  for (const CalibrationResult& row : report.rows) {
    if (!row.error.empty()) {
      absl::StrAppendFormat(&out, "%-*s FAILED: %s\n", id_width, row.id, row.error);
      continue;
    }
    absl::StrAppendFormat(&out, "%-*s %14.3f %14.3f %+7.1f%%", id_width, row.id, row.measured_us,
                          row.predicted_us, row.error_pct);
    for (const PipeComparison& pipe : row.pipes) {
      absl::StrAppendFormat(&out, "  %s %.3f / %.3f (%+.1f%%)", PipeLabel(pipe.name),
                            pipe.measured_us, pipe.predicted_us, pipe.error_pct);
    }
    out += "\n";
  }
  std::vector<std::string> pipes;
  for (const PipeSummary& pipe : report.pipes) {
    pipes.push_back(pipe.rows == 0 ? absl::StrCat(PipeLabel(pipe.name), " - (0 rows)")
                                   : absl::StrFormat("%s %.1f%% (%d rows)", PipeLabel(pipe.name),
                                                     pipe.max_abs_error_pct, pipe.rows));
  }
  absl::StrAppend(&out, "per pipe, max |error|: ", absl::StrJoin(pipes, ", "), "\n");
  absl::StrAppend(&out, CalibrationSummaryLine(report), "\n");
  return out;
}

std::string CalibrationJson(const CalibrationReport& report) {
  using Ordered = nlohmann::ordered_json;
  Ordered root;
  root["schema"] = kCalibrationReportSchema;
  root["source_schema"] = kCalibrationSchema;
  Ordered rows = Ordered::array();
  for (const CalibrationResult& row : report.rows) {
    Ordered item;
    item["id"] = row.id;
    if (!row.error.empty()) {
      item["error"] = row.error;
      rows.push_back(std::move(item));
      continue;
    }
    item["platform"] = row.platform;
    item["measured_us"] = row.measured_us;
    item["predicted_us"] = row.predicted_us;
    item["error_pct"] = row.error_pct;
    Ordered pipes = Ordered::object();
    for (const PipeComparison& pipe : row.pipes) {
      pipes[pipe.name] = {{"measured_us", pipe.measured_us},
                          {"predicted_us", pipe.predicted_us},
                          {"error_pct", pipe.error_pct}};
    }
    item["pipes"] = std::move(pipes);
    item["msprof"] = Ordered::parse(ToJson(row.msprof));
    rows.push_back(std::move(item));
  }
  root["rows"] = std::move(rows);
  Ordered summary;
  summary["rows"] = report.rows.size();
  summary["ran"] = report.ran;
  summary["failed"] = report.failed;
  summary["median_abs_error_pct"] = report.median_abs_error_pct;
  summary["max_abs_error_pct"] = report.max_abs_error_pct;
  Ordered pipes = Ordered::object();
  for (const PipeSummary& pipe : report.pipes) {
    pipes[pipe.name] = {{"rows", pipe.rows}, {"max_abs_error_pct", pipe.max_abs_error_pct}};
  }
  summary["pipes"] = std::move(pipes);
  summary["line"] = CalibrationSummaryLine(report);
  root["summary"] = std::move(summary);
  return root.dump(1);
}

}  // namespace npu::client
