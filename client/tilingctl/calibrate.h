// `tilingctl calibrate FILE`: published measurements against the emulator.
//
// A file of schema "npu-measured-matmul/1" (tests/data/calibration/README.md)
// holds msprof op_summary figures of matmul kernels measured on real chips,
// each with the kernel's schedule. Every row becomes a timing-only Execute
// request with that schedule (`kernel_schedule`) on the row's chip, and the
// report sets the prediction (TimingReport.msprof) next to the measurement:
// task duration and the per-pipe AIC times the row publishes, with the signed
// error of each, then the largest error per pipe and the median and largest
// task-duration error over the rows. A row that cannot be read or run is a
// failure naming the row and the field; a large error is not (it is what
// the report measures).
//
// This file reads, runs (through a callback) and formats; it does no I/O of
// its own, so each step is unit-tested without a server
// (tests/client/calibrate_test.cc).
#ifndef NPU_CLIENT_TILINGCTL_CALIBRATE_H_
#define NPU_CLIENT_TILINGCTL_CALIBRATE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::client {

inline constexpr char kCalibrationSchema[] = "npu-measured-matmul/1";
// Schema /2: a superset of /1 with quantized, grouped and mix kernels.
inline constexpr char kCalibrationSchemaQuant[] = "npu-measured-matmul/2";
// The schema of `calibrate --json`'s document.
inline constexpr char kCalibrationReportSchema[] = "npu-calibration-report/1";

// The per-pipe figures a row may publish under "measured", in report order:
// the AIC's, then (mix kernels) the AIV's.
inline constexpr const char* kCalibrationPipes[] = {
    "aic_mac_time_us", "aic_mte1_time_us", "aic_mte2_time_us", "aic_fixpipe_time_us",
    "aiv_vec_time_us", "aiv_mte2_time_us", "aiv_mte3_time_us"};

// The keys of a row's `kernel` object (and of a `--kernel-schedule` file).
inline constexpr const char* kKernelScheduleKeys[] = {
    "schedule", "block_dim", "base_m", "base_n", "base_k", "l1_m", "l1_n", "l1_k", "depth_a1",
    "depth_b1", "single_core_m", "single_core_n", "inner_order", "swizzle_offset",
    "swizzle_direction", "aswt_window", "sk_k_splits", "l0_double_buffer", "l0c_double_buffer",
    "unit_flag", "mdl", "l2_split_rounds", "b_format", "epilogue", "batch", "notes",
    // schema /2
    "kernel_type", "mix_ratio", "tile_numbering", "tail_split", "full_load_a", "l1_k_b",
    "scale_l1_k", "scale_factor_k", "scale_l1_buffers", "l1_bank_split", "l1_offsets",
    "fixpipe_dst", "fixpipe_dtype", "workspace_slots", "aiv_tile", "aiv_split"};

// The wire schedule of a `kernel` object: "schedule" (single_core,
// static_grid, round_robin_tiles, identity_swizzle, aswt, stream_k_dp) is
// required; null or absent values leave their field unset (the server's
// default); "notes" is free text and "batch" must be null or 1 (batched
// kernels are not modelled). kInvalidArgument names the key as
// "<path>.<key>" ("kernel.base_k: not an integer"), or just "<key>" when
// `path` is empty; a key outside kKernelScheduleKeys is an error.
absl::StatusOr<npu::tiling::v1::KernelSchedule> KernelScheduleFromJson(const nlohmann::json& kernel,
                                                                       absl::string_view path);

// One row of the file, read.
struct CalibrationRow {
  std::string id;
  std::string schema;  // the file's
  // The Execute request of the row, or why the row cannot be read: the
  // message names the row and the field ("row s3-streamk: kernel.base_k: not
  // an integer").
  absl::StatusOr<npu::tiling::v1::ExecuteRequest> request;
  // measured.task_duration_us, and the per-pipe figures the row publishes
  // (name from kCalibrationPipes, microseconds).
  double measured_us = 0;
  std::vector<std::pair<std::string, double>> measured_pipes;
};

// Reads a whole file of schema /1 or /2. A /2 row's "quant" makes the
// problem a QuantBatchMatmulV3 one (MX: float8_e8m0 scales on both
// operands; perchannel_pertoken: a float32 scale per column and, with
// "pertoken", one per row), its "groups" become the kernel's group_m and
// b_per_group, and float4_e1m2 operands are timed as float4_e2m1.
// `platforms` are the server's profiles (ListPlatforms):
// the row's "chip" names one ("ascend950pr" and "ascend950" the 950PR
// profile, "ascend910b1" the Atlas A2 one), and "aic", "aiv" and "freq_mhz",
// when given and different from the profile's, become platform overrides.
// kInvalidArgument when the text is not JSON, names another schema or has no
// rows; a malformed row is reported in its own `request`, so the others
// still run.
absl::StatusOr<std::vector<CalibrationRow>> ParseCalibrationFile(
    absl::string_view json_text, const npu::tiling::v1::ListPlatformsResponse& platforms);

// A measured figure and its prediction.
struct PipeComparison {
  std::string name;  // from kCalibrationPipes
  double measured_us = 0;
  double predicted_us = 0;
  double error_pct = 0;  // (predicted - measured) / measured * 100
};

// One row of the report.
struct CalibrationResult {
  std::string id;
  // Set when the row could not be read or run (then only `id` is valid).
  std::string error;
  std::string platform;  // the chip it ran on
  double measured_us = 0;
  double predicted_us = 0;  // TimingReport.msprof.task_duration_us
  double error_pct = 0;
  std::vector<PipeComparison> pipes;
  npu::tiling::v1::MsprofSummary msprof;
};

// The median and largest |error| of one pipe over the rows that publish
// it.
struct PipeSummary {
  std::string name;
  int rows = 0;
  double median_abs_error_pct = 0;
  double max_abs_error_pct = 0;
};

struct CalibrationReport {
  std::string source_schema = kCalibrationSchema;  // the file's
  std::vector<CalibrationResult> rows;
  int ran = 0;
  int failed = 0;
  // Over the task durations of the rows that ran (0 when none ran).
  double median_abs_error_pct = 0;
  double max_abs_error_pct = 0;
  std::vector<PipeSummary> pipes;  // one per kCalibrationPipes entry
};

// Runs every readable row through `execute` and compares.
CalibrationReport RunCalibration(
    const std::vector<CalibrationRow>& rows,
    const std::function<absl::StatusOr<npu::tiling::v1::ExecuteResponse>(
        const npu::tiling::v1::ExecuteRequest&)>& execute);

// The report for people: one line per row (id, measured and predicted us,
// signed error, and measured / predicted / error of each published pipe, or
// the row's failure), a line with the median and largest error per pipe,
// and last exactly "N rows: median |error| X%, max |error| Y%" over the N
// rows that ran.
std::string FormatCalibration(const CalibrationReport& report);

// The last line of FormatCalibration(), without its newline.
std::string CalibrationSummaryLine(const CalibrationReport& report);

// The report as one JSON document (schema kCalibrationReportSchema): every
// row's figures (with the whole predicted msprof summary) or its error, and
// the summary.
std::string CalibrationJson(const CalibrationReport& report);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_CALIBRATE_H_
