#include "client/tilingctl/commands.h"

#include <iostream>
#include <optional>
#include <set>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/npy.h"
#include "client/tilingctl/calibrate.h"
#include "client/tilingctl/cli.h"
#include "client/tilingctl/conform.h"
#include "client/tilingctl/execute.h"
#include "client/tilingctl/flags.h"
#include "client/tilingctl/format.h"
#include "client/tilingctl/graph.h"
#include "client/tilingctl/requests.h"

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

// Graphs this large get a progress line on stderr.
constexpr int kGraphProgressNodes = 1000;

}  // namespace

int RunTile(TilingClient& client) {
  absl::StatusOr<pb::TilingRequest> request = RequestFromFlags();
  if (!request.ok()) return Usage(request.status().message());
  absl::StatusOr<pb::TilingResponse> response = client.GetTiling(*request);
  if (!response.ok()) return Failed(response.status());
  std::cout << (absl::GetFlag(FLAGS_json) ? ToJson(*response) + "\n" : FormatTiling(*response));
  return kExitOk;
}

int RunAdvise(TilingClient& client) {
  absl::StatusOr<pb::TilingRequest> request = RequestFromFlags();
  if (!request.ok()) return Usage(request.status().message());
  absl::Status advise = ApplyAdviseFlags(&*request);
  if (!advise.ok()) return Usage(advise.message());
  absl::StatusOr<pb::TilingResponse> response = client.GetTiling(*request);
  if (!response.ok()) return Failed(response.status());
  std::cout << (absl::GetFlag(FLAGS_json) ? ToJson(*response) + "\n" : FormatAdvice(*response));
  return kExitOk;
}

int RunBatch(TilingClient& client, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return Failed(text.status());
  absl::StatusOr<std::vector<pb::TilingRequest>> requests = ParseBatchFile(*text);
  if (!requests.ok()) return Usage(absl::StrCat(path, ": ", requests.status().message()));
  absl::StatusOr<std::vector<pb::TilingResponse>> responses = client.GetTilingBatch(*requests);
  if (!responses.ok()) return Failed(responses.status());
  int failed = 0;
  for (const pb::TilingResponse& response : *responses) {
    if (response.has_status() && response.status().code() != 0) ++failed;
  }
  if (absl::GetFlag(FLAGS_json)) {
    for (const pb::TilingResponse& response : *responses) std::cout << ToJson(response) << "\n";
  } else {
    std::cout << FormatBatch(*responses) << responses->size() - failed << " answered, " << failed
              << " failed\n";
  }
  return failed == 0 ? kExitOk : kExitFailed;
}

int RunConform(TilingClient& client, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return Failed(text.status());
  std::vector<std::string> ignored;
  absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(*text, &ignored);
  if (!cases.ok()) return Usage(absl::StrCat(path, ": ", cases.status().message()));
  for (const std::string& key : std::set<std::string>(ignored.begin(), ignored.end())) {
    std::cerr << "tilingctl: note: ignoring " << key << " (not in the file's schema)\n";
  }
  ConformanceSummary summary = RunConformance(
      *cases,
      [&](pb::TilingRequest request) {
        request.set_client_id(kClientId);
        return client.GetTiling(request);
      },
      std::cout);
  return summary.failed == 0 ? kExitOk : kExitFailed;
}

int RunExecute(TilingClient& client) {
  absl::StatusOr<pb::ExecuteRequest> request = ExecuteRequestFromFlags();
  if (!request.ok()) return Usage(request.status().message());
  absl::StatusOr<pb::ExecuteResponse> response = client.Execute(*request);
  if (!response.ok()) return Failed(response.status());
  const bool json = absl::GetFlag(FLAGS_json);
  const std::string out_path = absl::GetFlag(FLAGS_out);
  if (!out_path.empty()) {
    absl::StatusOr<NpyArray> c = NpyFromTensor(response->c());
    if (!c.ok()) return Failed(c.status());
    absl::Status written = WriteNpyFile(out_path, *c);
    if (!written.ok()) return Failed(written);
    response->clear_c();  // in the file, not on the terminal
  }
  std::cout << (json ? ToJson(*response) + "\n" : FormatExecute(*response));
  if (!out_path.empty() && !json) std::cout << "C written to " << out_path << "\n";
  if (response->has_accuracy() && !response->accuracy().passed()) {
    std::cerr << "tilingctl: C differs from the fp64 reference beyond the bound\n";
    return kExitFailed;
  }
  return kExitOk;
}

int RunCalibrate(TilingClient& client, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return Failed(text.status());
  // The rows name chips; the server's profiles say which overrides a row's
  // core count and clock need.
  absl::StatusOr<pb::ListPlatformsResponse> platforms = client.ListPlatforms();
  if (!platforms.ok()) return Failed(platforms.status());
  absl::StatusOr<std::vector<CalibrationRow>> rows = ParseCalibrationFile(*text, *platforms);
  if (!rows.ok()) return Usage(absl::StrCat(path, ": ", rows.status().message()));
  const CalibrationReport report = RunCalibration(
      *rows, [&](const pb::ExecuteRequest& request) { return client.Execute(request); });
  for (const CalibrationResult& row : report.rows) {
    if (!row.error.empty()) std::cerr << "tilingctl: " << row.error << "\n";
  }
  std::cout << (absl::GetFlag(FLAGS_json) ? CalibrationJson(report) + "\n"
                                          : FormatCalibration(report));
  return report.failed == 0 ? kExitOk : kExitFailed;
}

int RunPlatforms(TilingClient& client) {
  absl::StatusOr<pb::ListPlatformsResponse> response = client.ListPlatforms();
  if (!response.ok()) return Failed(response.status());
  std::cout << (absl::GetFlag(FLAGS_json) ? ToJson(*response) + "\n" : FormatPlatforms(*response));
  return kExitOk;
}

int RunHealth(TilingClient& client) {
  std::vector<std::string> services = {"", pb::TilingService::service_full_name()};
  if (const std::optional<std::string> service = absl::GetFlag(FLAGS_service)) {
    services = {*service};
  }
  bool all_serving = true;
  for (const std::string& service : services) {
    absl::StatusOr<ServingStatus> status = client.CheckHealth(service);
    const std::string label = service.empty() ? "(server)" : service;
    if (!status.ok()) {
      all_serving = false;
      std::cout << label << " " << absl::StatusCodeToString(status.status().code()) << ": "
                << status.status().message() << "\n";
      continue;
    }
    all_serving = all_serving && *status == ServingStatus::kServing;
    std::cout << label << " " << ServingStatusName(*status) << "\n";
  }
  return all_serving ? kExitOk : kExitFailed;
}

int RunGraph(TilingClient& client, const std::string& path,
             const std::vector<std::string>& dim_specs) {
  absl::StatusOr<ModelFile> model = ReadModel(path);
  if (!model.ok()) return Failed(model.status());
  pb::GraphTilingRequest request;
  request.set_model(std::move(model->bytes));
  std::vector<std::string> specs = dim_specs;
  if (!absl::GetFlag(FLAGS_dims).empty()) specs.push_back(absl::GetFlag(FLAGS_dims));
  absl::Status dims = AddDimSpecs(specs, &request);
  if (!dims.ok()) return Usage(dims.message());
  const std::string gears = absl::GetFlag(FLAGS_gears);
  if (gears == "zip") {
    request.set_gears(pb::GEAR_POLICY_ZIP);
  } else if (gears == "product") {
    request.set_gears(pb::GEAR_POLICY_PRODUCT);
  } else {
    return Usage(absl::StrCat("--gears must be zip or product, got \"", gears, "\""));
  }
  if (!absl::GetFlag(FLAGS_compute_dtype).empty()) {
    absl::StatusOr<pb::DataType> dtype = DataTypeFromName(absl::GetFlag(FLAGS_compute_dtype));
    if (!dtype.ok()) return Usage(absl::StrCat("--compute_dtype: ", dtype.status().message()));
    request.set_compute_dtype(*dtype);
  }
  request.set_emulate(absl::GetFlag(FLAGS_emulate));
  request.set_fuse_epilogues(absl::GetFlag(FLAGS_fuse_epilogues));
  request.set_platform(absl::GetFlag(FLAGS_platform));
  request.set_id(path);
  // A large graph takes a while (shape inference per gear, then the
  // decisions and emulations): say what is being waited for.
  if (model->nodes >= kGraphProgressNodes) {
    std::cerr << "graph " << path << ": " << model->nodes << " nodes, " << request.model().size()
              << " bytes sent (" << model->stripped_initializers
              << " initializers without their data); waiting for the answer..." << std::endl;
  }
  absl::StatusOr<pb::GraphTilingResponse> response = client.GetGraphTiling(request);
  if (!response.ok()) return Failed(response.status());
  std::cout << (absl::GetFlag(FLAGS_json) ? ToJson(*response) + "\n" : FormatGraph(*response, path));
  return kExitOk;
}

}  // namespace npu::client
