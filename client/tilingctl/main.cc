// tilingctl: command-line client of the tiling service.
//
//   tilingctl tile --m 4096 --n 1280 --k 8192 --dtype float16 --trans-b --format-b FRACTAL_NZ
//   tilingctl batch problems.json        many problems over one GetTilingBatch stream
//   tilingctl conform cases.json         runs a cann950-tiling-cases/1 file
//   tilingctl platforms                  lists the platform profiles
//   tilingctl health                     asks grpc.health.v1.Health
//   tilingctl execute --m 512 --n 512 --k 512 [--a A.npy --b B.npy --out C.npy]
//                                        emulates the tiling (or --tiling FILE)
//   tilingctl advise --m 4097 --n 777 --k 1999 [--max-candidates 8] [--budget-ms 2000]
//                    [--no-verify]       ranks every applicable tiling (ADVISE mode);
//                                        `tile --mode advise` is the same
//
// It talks to --server (default localhost:50051) through npu::client::
// TilingClient, or, with --local, to the same service started inside this
// process on an in-process channel (no port). Output is a table by default
// and the proto's JSON mapping with --json. Flag names accept '-' or '_'
// (--trans-b == --trans_b). Exit status: 0 success, 1 the request or a case
// failed, 2 bad usage.
#include <grpcpp/support/channel_arguments.h>

#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/npy.h"
#include "client/tiling_client.h"
#include "client/tilingctl/conform.h"
#include "client/tilingctl/execute.h"
#include "client/tilingctl/format.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"
#include "server/metrics/service_metrics.h"
#include "server/service/server.h"
#include "server/tiling/builtin_strategies.h"

// Connection and output.
ABSL_FLAG(std::string, server, "localhost:50051",
          "Server to talk to: host:port, or dns:///host:port to balance over all its addresses.");
ABSL_FLAG(bool, local, false, "Run the service inside this process instead of calling --server.");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(10), "Deadline of each call, e.g. 10s, 500ms.");
ABSL_FLAG(bool, json, false, "Print the proto JSON mapping instead of tables.");
ABSL_FLAG(bool, tls, false,
          "Talk TLS to --server, trusting the system's roots (implied by the --tls_* flags).");
ABSL_FLAG(std::string, tls_ca, "", "TLS: PEM CA bundle that signed the server's certificate.");
ABSL_FLAG(std::string, tls_cert, "",
          "TLS: PEM client certificate chain, for servers that require one (mutual TLS).");
ABSL_FLAG(std::string, tls_key, "", "TLS: PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_server_name, "",
          "TLS: name to check the server's certificate against instead of --server's host.");

// The problem (tile; the defaults of problems in a batch file).
ABSL_FLAG(std::optional<int64_t>, m, std::nullopt, "Rows of A and C.");
ABSL_FLAG(std::optional<int64_t>, n, std::nullopt, "Columns of B and C.");
ABSL_FLAG(std::optional<int64_t>, k, std::nullopt, "Reduction dimension (0 allowed).");
ABSL_FLAG(std::string, dtype, "float16", "Dtype of A, B and C: float16, bfloat16, float32.");
ABSL_FLAG(std::optional<std::string>, dtype_a, std::nullopt, "Dtype of A (overrides --dtype).");
ABSL_FLAG(std::optional<std::string>, dtype_b, std::nullopt, "Dtype of B (overrides --dtype).");
ABSL_FLAG(std::optional<std::string>, dtype_c, std::nullopt, "Dtype of C (overrides --dtype).");
ABSL_FLAG(bool, trans_a, false, "A is stored [k, m].");
ABSL_FLAG(bool, trans_b, false, "B is stored [n, k].");
ABSL_FLAG(std::string, format_a, "ND", "Layout of A: ND.");
ABSL_FLAG(std::string, format_b, "ND", "Layout of B: ND or FRACTAL_NZ.");
ABSL_FLAG(std::string, format_c, "ND", "Layout of C: ND.");
ABSL_FLAG(std::vector<std::string>, storage_shape_b, {},
          "Storage shape of an NZ B, comma-separated (default: canonical).");
ABSL_FLAG(bool, bias, false, "Add a bias row.");
ABSL_FLAG(std::optional<std::string>, bias_dtype, std::nullopt,
          "Dtype of the bias (default: C's).");
ABSL_FLAG(bool, hf32, false, "Allow HF32 for float32 inputs (opImplMode 0x40).");
ABSL_FLAG(bool, force_grp_acc_fp32, false, "Force fp32 group accumulation (opImplMode 0x4).");
ABSL_FLAG(int32_t, deterministic_level, 0, "0..3; above 1 forbids cross-core K split.");
ABSL_FLAG(bool, avoid_tensor_api, false, "Do not use the tensor-level API (offset_x == 0x80).");
ABSL_FLAG(std::optional<int32_t>, slice_rank, std::nullopt,
          "A is a non-contiguous view of this rank (2 or 3).");
ABSL_FLAG(int64_t, slice_batch, 1, "Batches of a rank-3 slice view.");
ABSL_FLAG(int64_t, slice_batch_stride, 0, "Elements between batches of a rank-3 slice view.");
ABSL_FLAG(int64_t, slice_row_stride, 0, "Elements between rows of a slice view.");

// The platform and the decision.
ABSL_FLAG(std::string, platform, "", "Platform profile (default: the server's, ascend950pr).");
ABSL_FLAG(std::optional<uint32_t>, aic_num, std::nullopt, "Override: cube cores.");
ABSL_FLAG(std::optional<uint32_t>, aiv_num, std::nullopt, "Override: vector cores.");
ABSL_FLAG(std::optional<uint64_t>, l1_bytes, std::nullopt, "Override: L1 bytes per core.");
ABSL_FLAG(std::optional<uint64_t>, l0a_bytes, std::nullopt, "Override: L0A bytes per core.");
ABSL_FLAG(std::optional<uint64_t>, l0b_bytes, std::nullopt, "Override: L0B bytes per core.");
ABSL_FLAG(std::optional<uint64_t>, l0c_bytes, std::nullopt, "Override: L0C bytes per core.");
ABSL_FLAG(std::optional<uint64_t>, ub_bytes, std::nullopt, "Override: UB bytes per core.");
ABSL_FLAG(std::optional<uint64_t>, l2_bytes, std::nullopt, "Override: L2 bytes (chip).");
ABSL_FLAG(std::optional<uint64_t>, bt_bytes, std::nullopt, "Override: bias-table bytes per core.");
ABSL_FLAG(std::optional<uint32_t>, cube_freq_mhz, std::nullopt, "Override: cube clock, MHz.");
ABSL_FLAG(std::optional<uint32_t>, ddr_bytes_per_cycle, std::nullopt,
          "Override: DDR bytes per cycle per cube core.");
ABSL_FLAG(std::optional<uint32_t>, l2_bytes_per_cycle, std::nullopt,
          "Override: L2 bytes per cycle per cube core.");
ABSL_FLAG(std::string, strategy, "", "Force this strategy, e.g. BASIC_STREAM_K.");
ABSL_FLAG(bool, trace, true, "Ask for the decision trace (--notrace to omit it).");
ABSL_FLAG(std::string, id, "", "Request id, echoed by the server.");
ABSL_FLAG(std::string, view, "full",
          "Tile, batch: full (every field by name, the default) or compact (key, raw words, "
          "block dim, workspace: what a launcher needs).");
ABSL_FLAG(std::string, mode, "cann",
          "Tile: cann (CANN's decision, the default) or advise (the same as `tilingctl advise`).");

// advise
ABSL_FLAG(uint32_t, max_candidates, 0,
          "Advise: candidates to list, best first (0: the server's default; capped by it).");
ABSL_FLAG(uint32_t, budget_ms, 0,
          "Advise: wall-clock budget of the advice, ms (0: the server's cap; capped by it).");
ABSL_FLAG(bool, no_verify, false, "Advise: skip the numerics check of the recommended tiling.");

// execute
ABSL_FLAG(std::string, a, "", "Execute: A as a .npy file ([m, k], or [k, m] with --trans-a).");
ABSL_FLAG(std::string, b, "", "Execute: B as a .npy file ([k, n], or [n, k] with --trans-b).");
ABSL_FLAG(std::string, bias_npy, "",
          "Execute: the bias as a .npy file of n elements; `--bias X.npy` is the same.");
ABSL_FLAG(std::string, out, "", "Execute: write the emulated C to this .npy file.");
ABSL_FLAG(uint64_t, seed, 0, "Execute: seed of the generated operands (without --a / --b).");
ABSL_FLAG(bool, timing_only, false, "Execute: only predict the timing (no numerics).");
ABSL_FLAG(uint32_t, threads, 0, "Execute: host threads for the numerics on the server.");
ABSL_FLAG(std::string, tiling, "",
          "Execute: emulate this tiling (JSON of `tile --json`, possibly edited) instead of "
          "the engine's.");
ABSL_FLAG(absl::Duration, execute_timeout, absl::Minutes(5),
          "Execute: deadline of the call; the server stops the emulation when it passes.");

// health
ABSL_FLAG(std::optional<std::string>, service, std::nullopt,
          "Health: service name to check (default: the server and npu.tiling.v1.TilingService).");

namespace npu::client {
namespace {

namespace pb = ::npu::tiling::v1;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
// Sent as TilingRequest.client_id; the server logs it at debug level.
constexpr char kClientId[] = "tilingctl";

int Usage(absl::string_view message) {
  std::cerr << "tilingctl: " << message << "\n"
            << "usage: tilingctl tile|advise|batch FILE|conform FILE|platforms|health|execute "
               "[flags]; "
               "see --help\n";
  return kExitUsage;
}

int Failed(const absl::Status& status) {
  std::cerr << "tilingctl: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
            << "\n";
  return kExitFailed;
}

// Abseil flag names cannot contain '-'; accept "--trans-b" for "--trans_b".
std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") break;  // the rest is positional
    if (!absl::StartsWith(arg, "-")) continue;
    const size_t name_start = arg.find_first_not_of('-');
    const size_t name_end = std::min(arg.find('='), arg.size());
    for (size_t c = name_start; c < name_end && name_start != std::string::npos; ++c) {
      if (arg[c] == '-') arg[c] = '_';
    }
  }
  return args;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<pb::DataType> DtypeFlag(const std::optional<std::string>& specific,
                                       const char* flag) {
  const std::string name = specific.value_or(absl::GetFlag(FLAGS_dtype));
  absl::StatusOr<pb::DataType> dtype = DataTypeFromName(name);
  if (!dtype.ok())
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", dtype.status().message()));
  return dtype;
}

// Applies --platform, the override flags, --strategy, --trace, --view and
// --id.
absl::Status ApplyDecisionFlags(pb::TilingRequest* request) {
  request->set_platform(absl::GetFlag(FLAGS_platform));
  pb::PlatformOverrides* o = request->mutable_platform_overrides();
  if (auto v = absl::GetFlag(FLAGS_aic_num)) o->set_aic_num(*v);
  if (auto v = absl::GetFlag(FLAGS_aiv_num)) o->set_aiv_num(*v);
  if (auto v = absl::GetFlag(FLAGS_l1_bytes)) o->set_l1_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l0a_bytes)) o->set_l0a_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l0b_bytes)) o->set_l0b_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l0c_bytes)) o->set_l0c_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_ub_bytes)) o->set_ub_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_l2_bytes)) o->set_l2_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_bt_bytes)) o->set_bt_bytes(*v);
  if (auto v = absl::GetFlag(FLAGS_cube_freq_mhz)) o->set_cube_freq_mhz(*v);
  if (auto v = absl::GetFlag(FLAGS_ddr_bytes_per_cycle)) o->set_ddr_bytes_per_cycle(*v);
  if (auto v = absl::GetFlag(FLAGS_l2_bytes_per_cycle)) o->set_l2_bytes_per_cycle(*v);
  request->set_forced_strategy(absl::GetFlag(FLAGS_strategy));
  request->set_include_trace(absl::GetFlag(FLAGS_trace));
  request->set_id(absl::GetFlag(FLAGS_id));
  request->set_client_id(kClientId);
  const std::string view = absl::GetFlag(FLAGS_view);
  if (view == "full") {
    request->set_view(pb::RESPONSE_VIEW_FULL);
  } else if (view == "compact") {
    request->set_view(pb::RESPONSE_VIEW_COMPACT);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--view: unknown view \"", view, "\"; expected full or compact"));
  }
  return absl::OkStatus();
}

// The request the `tile` flags describe.
absl::StatusOr<pb::TilingRequest> RequestFromFlags() {
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  const std::optional<int64_t> m = absl::GetFlag(FLAGS_m);
  const std::optional<int64_t> n = absl::GetFlag(FLAGS_n);
  const std::optional<int64_t> k = absl::GetFlag(FLAGS_k);
  if (!m || !n || !k) return absl::InvalidArgumentError("--m, --n and --k are required");
  p->set_m(*m);
  p->set_n(*n);
  p->set_k(*k);

  absl::StatusOr<pb::DataType> a = DtypeFlag(absl::GetFlag(FLAGS_dtype_a), "--dtype-a");
  absl::StatusOr<pb::DataType> b = DtypeFlag(absl::GetFlag(FLAGS_dtype_b), "--dtype-b");
  absl::StatusOr<pb::DataType> c = DtypeFlag(absl::GetFlag(FLAGS_dtype_c), "--dtype-c");
  for (const auto* dtype : {&a, &b, &c}) {
    if (!dtype->ok()) return dtype->status();
  }
  p->set_dtype_a(*a);
  p->set_dtype_b(*b);
  p->set_dtype_c(*c);
  p->set_has_bias(absl::GetFlag(FLAGS_bias));
  if (p->has_bias()) {
    const std::optional<std::string> bias_dtype = absl::GetFlag(FLAGS_bias_dtype);
    if (bias_dtype.has_value()) {
      absl::StatusOr<pb::DataType> dtype = DataTypeFromName(*bias_dtype);
      if (!dtype.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--bias-dtype: ", dtype.status().message()));
      }
      p->set_dtype_bias(*dtype);
    } else {
      p->set_dtype_bias(p->dtype_c());
    }
  }
  p->set_trans_a(absl::GetFlag(FLAGS_trans_a));
  p->set_trans_b(absl::GetFlag(FLAGS_trans_b));

  struct FormatFlag {
    const char* name;
    std::string value;
    void (pb::MatmulProblem::*set)(pb::Format);
  };
  for (const FormatFlag& flag :
       {FormatFlag{"--format-a", absl::GetFlag(FLAGS_format_a), &pb::MatmulProblem::set_format_a},
        FormatFlag{"--format-b", absl::GetFlag(FLAGS_format_b), &pb::MatmulProblem::set_format_b},
        FormatFlag{"--format-c", absl::GetFlag(FLAGS_format_c),
                   &pb::MatmulProblem::set_format_c}}) {
    absl::StatusOr<pb::Format> format = FormatFromName(flag.value);
    if (!format.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(flag.name, ": ", format.status().message()));
    }
    (p->*flag.set)(*format);
  }
  for (const std::string& dim : absl::GetFlag(FLAGS_storage_shape_b)) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(dim, &value)) {
      return absl::InvalidArgumentError(absl::StrCat("--storage-shape-b: not an integer: ", dim));
    }
    p->add_storage_shape_b(value);
  }
  p->set_hf32(absl::GetFlag(FLAGS_hf32));
  p->set_force_grp_acc_fp32(absl::GetFlag(FLAGS_force_grp_acc_fp32));
  p->set_deterministic_level(absl::GetFlag(FLAGS_deterministic_level));
  p->set_avoid_tensor_api(absl::GetFlag(FLAGS_avoid_tensor_api));
  if (const std::optional<int32_t> rank = absl::GetFlag(FLAGS_slice_rank)) {
    pb::SliceView* slice = p->mutable_a_slice();
    slice->set_enabled(true);
    slice->set_rank(*rank);
    slice->set_batch(absl::GetFlag(FLAGS_slice_batch));
    slice->set_batch_stride(absl::GetFlag(FLAGS_slice_batch_stride));
    slice->set_row_stride(absl::GetFlag(FLAGS_slice_row_stride));
  }
  if (absl::Status status = ApplyDecisionFlags(&request); !status.ok()) return status;
  return request;
}

// `request` in ADVISE mode with the advise flags. --strategy is refused here
// (the server would refuse it too): the advice ranks every strategy.
absl::Status ApplyAdviseFlags(pb::TilingRequest* request) {
  if (!request->forced_strategy().empty()) {
    return absl::InvalidArgumentError("--strategy cannot be used with advise");
  }
  request->set_mode(pb::TILING_MODE_ADVISE);
  pb::AdviseOptions* advise = request->mutable_advise();
  advise->set_max_candidates(absl::GetFlag(FLAGS_max_candidates));
  advise->set_max_advisory_ms(absl::GetFlag(FLAGS_budget_ms));
  if (absl::GetFlag(FLAGS_no_verify)) advise->set_verify_recommendation(false);
  // The table shows no trace; --json still carries it unless --notrace.
  if (!absl::GetFlag(FLAGS_json)) request->set_include_trace(false);
  return absl::OkStatus();
}

// The requests of a batch file: a JSON list whose items are TilingRequests
// ({"problem": {...}, ...}) or bare MatmulProblems ({"m": ..., ...}), both
// in the proto JSON mapping. Bare problems take the platform, strategy and
// trace flags. Items without an id get their index.
absl::StatusOr<std::vector<pb::TilingRequest>> ParseBatchFile(const std::string& text) {
  nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_array()) return absl::InvalidArgumentError("the top level must be a list");
  std::vector<pb::TilingRequest> requests;
  requests.reserve(root.size());
  for (size_t i = 0; i < root.size(); ++i) {
    const nlohmann::json& item = root[i];
    if (!item.is_object())
      return absl::InvalidArgumentError(absl::StrCat("item ", i, ": not an object"));
    pb::TilingRequest request;
    google::protobuf::util::Status parsed;
    if (item.contains("problem")) {
      parsed = google::protobuf::util::JsonStringToMessage(item.dump(), &request);
    } else {
      if (absl::Status status = ApplyDecisionFlags(&request); !status.ok()) return status;
      parsed = google::protobuf::util::JsonStringToMessage(item.dump(), request.mutable_problem());
    }
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("item ", i, ": ", std::string(parsed.message())));
    }
    if (request.id().empty()) request.set_id(absl::StrCat(i));
    requests.push_back(std::move(request));
  }
  return requests;
}

// The Execute request of the `execute` flags: the `tile` flags plus the
// operand files, seed, options and an explicit tiling. Without --m / --n /
// --k the sizes come from the shapes of --a and --b.
absl::StatusOr<pb::ExecuteRequest> ExecuteRequestFromFlags() {
  const std::string a_path = absl::GetFlag(FLAGS_a);
  const std::string b_path = absl::GetFlag(FLAGS_b);
  const std::string bias_path = absl::GetFlag(FLAGS_bias_npy);
  const bool timing_only = absl::GetFlag(FLAGS_timing_only);
  const std::string out_path = absl::GetFlag(FLAGS_out);
  if (a_path.empty() != b_path.empty()) {
    return absl::InvalidArgumentError("--a and --b go together");
  }
  if (!bias_path.empty() && a_path.empty()) {
    return absl::InvalidArgumentError("--bias FILE needs --a and --b");
  }
  if (timing_only && !out_path.empty()) {
    return absl::InvalidArgumentError("--out needs the numerics; drop --timing-only");
  }
  std::optional<NpyArray> a, b, bias;
  if (!a_path.empty()) {
    absl::StatusOr<NpyArray> read_a = ReadNpyFile(a_path);
    if (!read_a.ok()) return read_a.status();
    absl::StatusOr<NpyArray> read_b = ReadNpyFile(b_path);
    if (!read_b.ok()) return read_b.status();
    a = *std::move(read_a);
    b = *std::move(read_b);
    if (a->shape.size() != 2 || b->shape.size() != 2) {
      return absl::InvalidArgumentError("--a and --b must be 2-D arrays");
    }
    // A is [m, k] ([k, m] transposed), B is [k, n] ([n, k] transposed).
    const bool trans_a = absl::GetFlag(FLAGS_trans_a), trans_b = absl::GetFlag(FLAGS_trans_b);
    if (!absl::GetFlag(FLAGS_m)) absl::SetFlag(&FLAGS_m, a->shape[trans_a ? 1 : 0]);
    if (!absl::GetFlag(FLAGS_k)) absl::SetFlag(&FLAGS_k, a->shape[trans_a ? 0 : 1]);
    if (!absl::GetFlag(FLAGS_n)) absl::SetFlag(&FLAGS_n, b->shape[trans_b ? 0 : 1]);
  }
  if (!bias_path.empty()) {
    absl::StatusOr<NpyArray> read = ReadNpyFile(bias_path);
    if (!read.ok()) return read.status();
    bias = *std::move(read);
    absl::SetFlag(&FLAGS_bias, true);
  }
  absl::StatusOr<pb::TilingRequest> tiling_request = RequestFromFlags();
  if (!tiling_request.ok()) return tiling_request.status();

  pb::ExecuteRequest request;
  request.set_id(tiling_request->id());
  *request.mutable_problem() = tiling_request->problem();
  request.set_platform(tiling_request->platform());
  *request.mutable_platform_overrides() = tiling_request->platform_overrides();
  request.set_forced_strategy(tiling_request->forced_strategy());
  request.set_client_id(tiling_request->client_id());
  if (const std::string path = absl::GetFlag(FLAGS_tiling); !path.empty()) {
    if (!request.forced_strategy().empty()) {
      return absl::InvalidArgumentError("--tiling and --strategy exclude each other");
    }
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) return text.status();
    absl::StatusOr<pb::TilingResponse> tiling = ParseTilingFile(*text);
    if (!tiling.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", tiling.status().message()));
    }
    *request.mutable_tiling() = *std::move(tiling);
  }
  if (a.has_value() && !timing_only) {
    const pb::MatmulProblem& p = request.problem();
    pb::ExecuteInputs* inputs = request.mutable_inputs();
    absl::StatusOr<pb::Tensor> tensor =
        TensorFromNpy(*a, p.dtype_a(), 2, absl::StrCat("--a ", a_path));
    if (!tensor.ok()) return tensor.status();
    *inputs->mutable_a() = *std::move(tensor);
    tensor = TensorFromNpy(*b, p.dtype_b(), 2, absl::StrCat("--b ", b_path));
    if (!tensor.ok()) return tensor.status();
    *inputs->mutable_b() = *std::move(tensor);
    if (bias.has_value()) {
      tensor = TensorFromNpy(*bias, p.dtype_bias(), 1, absl::StrCat("--bias ", bias_path));
      if (!tensor.ok()) return tensor.status();
      *inputs->mutable_bias() = *std::move(tensor);
    }
  }
  request.set_seed(absl::GetFlag(FLAGS_seed));
  request.set_timing_only(timing_only);
  request.set_return_c(!out_path.empty());
  request.set_threads(absl::GetFlag(FLAGS_threads));
  return request;
}

// `--bias X.npy` names the bias operand of `execute`, while a bare `--bias`
// (a bool flag of `tile`) only asks for a bias: the file form becomes
// `--bias --bias_npy=X.npy` before the flags are parsed.
void RewriteBiasFile(std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--bias" && i + 1 < args.size() && absl::EndsWith(args[i + 1], ".npy")) {
      args[i + 1] = absl::StrCat("--bias_npy=", args[i + 1]);
    } else if (absl::StartsWith(args[i], "--bias=") && absl::EndsWith(args[i], ".npy")) {
      args[i] = absl::StrCat("--bias_npy=", args[i].substr(7));
      args.insert(args.begin() + i, "--bias");
      ++i;
    }
  }
}

// Keeps an in-process server alive for --local.
struct LocalService {
  npu::tiling::StrategyRegistry registry = npu::tiling::MakeBuiltinRegistry();
  std::shared_ptr<prometheus::Registry> prometheus = std::make_shared<prometheus::Registry>();
  npu::server::ServiceMetrics metrics{*prometheus};
  std::unique_ptr<npu::server::TilingServer> server;
};

int Run(const std::vector<char*>& positional) {
  if (positional.size() < 2) return Usage("missing command");
  const std::string command = positional[1];
  const bool json = absl::GetFlag(FLAGS_json);
  const std::vector<std::string> operands(positional.begin() + 2, positional.end());
  const bool takes_file = command == "batch" || command == "conform";
  if (takes_file && operands.size() != 1) return Usage(absl::StrCat(command, " needs one FILE"));
  if (!takes_file && !operands.empty()) {
    return Usage(absl::StrCat("unexpected argument \"", operands.front(), "\""));
  }

  ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.timeout = absl::GetFlag(FLAGS_timeout);
  if (command == "advise" || absl::GetFlag(FLAGS_mode) == "advise") {
    // An advice may wait for an emulation worker and then spend its whole
    // budget plus a numerics check: the budget comes on top of --timeout.
    options.timeout += absl::Milliseconds(absl::GetFlag(FLAGS_budget_ms));
  }
  options.execute_timeout = absl::GetFlag(FLAGS_execute_timeout);
  LocalService local;
  std::unique_ptr<TilingClient> client;
  if (absl::GetFlag(FLAGS_local)) {
    npu::server::ServerOptions server_options;
    server_options.listen = false;
    // In-process calls have no network to protect: let Execute carry whole
    // .npy operands and C.
    server_options.max_message_bytes = std::numeric_limits<int>::max();
    absl::StatusOr<std::unique_ptr<npu::server::TilingServer>> server =
        npu::server::TilingServer::Start(server_options, local.registry, local.metrics);
    if (!server.ok()) return Failed(server.status());
    local.server = *std::move(server);
    grpc::ChannelArguments channel_args;
    channel_args.SetMaxReceiveMessageSize(-1);
    client = std::make_unique<TilingClient>(local.server->InProcessChannel(channel_args), options);
  } else {
    options.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
    options.use_tls = absl::GetFlag(FLAGS_tls) || !options.tls_server_name.empty();
    for (const auto& [flag, path, pem] :
         {std::make_tuple("--tls_ca", absl::GetFlag(FLAGS_tls_ca), &options.tls_root_ca_pem),
          std::make_tuple("--tls_cert", absl::GetFlag(FLAGS_tls_cert), &options.tls_cert_chain_pem),
          std::make_tuple("--tls_key", absl::GetFlag(FLAGS_tls_key),
                          &options.tls_private_key_pem)}) {
      if (path.empty()) continue;
      absl::StatusOr<std::string> text = ReadFile(path);
      if (!text.ok()) return Usage(absl::StrCat(flag, ": ", text.status().message()));
      *pem = *std::move(text);
      options.use_tls = true;
    }
    absl::StatusOr<std::unique_ptr<TilingClient>> connected = TilingClient::Connect(options);
    if (!connected.ok()) return Failed(connected.status());
    client = *std::move(connected);
  }

  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode != "cann" && mode != "advise") {
    return Usage(absl::StrCat("--mode must be cann or advise, got \"", mode, "\""));
  }
  if (command == "advise" || (command == "tile" && mode == "advise")) {
    absl::StatusOr<pb::TilingRequest> request = RequestFromFlags();
    if (!request.ok()) return Usage(request.status().message());
    absl::Status advise = ApplyAdviseFlags(&*request);
    if (!advise.ok()) return Usage(advise.message());
    absl::StatusOr<pb::TilingResponse> response = client->GetTiling(*request);
    if (!response.ok()) return Failed(response.status());
    std::cout << (json ? ToJson(*response) + "\n" : FormatAdvice(*response));
    return kExitOk;
  }

  if (command == "tile") {
    absl::StatusOr<pb::TilingRequest> request = RequestFromFlags();
    if (!request.ok()) return Usage(request.status().message());
    absl::StatusOr<pb::TilingResponse> response = client->GetTiling(*request);
    if (!response.ok()) return Failed(response.status());
    std::cout << (json ? ToJson(*response) + "\n" : FormatTiling(*response));
    return kExitOk;
  }

  if (command == "batch") {
    absl::StatusOr<std::string> text = ReadFile(operands[0]);
    if (!text.ok()) return Failed(text.status());
    absl::StatusOr<std::vector<pb::TilingRequest>> requests = ParseBatchFile(*text);
    if (!requests.ok()) return Usage(absl::StrCat(operands[0], ": ", requests.status().message()));
    absl::StatusOr<std::vector<pb::TilingResponse>> responses = client->GetTilingBatch(*requests);
    if (!responses.ok()) return Failed(responses.status());
    int failed = 0;
    for (const pb::TilingResponse& response : *responses) {
      if (response.has_status() && response.status().code() != 0) ++failed;
    }
    if (json) {
      for (const pb::TilingResponse& response : *responses) std::cout << ToJson(response) << "\n";
    } else {
      std::cout << FormatBatch(*responses) << responses->size() - failed << " answered, " << failed
                << " failed\n";
    }
    return failed == 0 ? kExitOk : kExitFailed;
  }

  if (command == "conform") {
    absl::StatusOr<std::string> text = ReadFile(operands[0]);
    if (!text.ok()) return Failed(text.status());
    std::vector<std::string> ignored;
    absl::StatusOr<std::vector<ConformanceCase>> cases = ParseConformanceFile(*text, &ignored);
    if (!cases.ok()) return Usage(absl::StrCat(operands[0], ": ", cases.status().message()));
    for (const std::string& key : std::set<std::string>(ignored.begin(), ignored.end())) {
      std::cerr << "tilingctl: note: ignoring " << key << " (not in " << kConformanceSchema
                << ")\n";
    }
    ConformanceSummary summary = RunConformance(
        *cases,
        [&](pb::TilingRequest request) {
          request.set_client_id(kClientId);
          return client->GetTiling(request);
        },
        std::cout);
    return summary.failed == 0 ? kExitOk : kExitFailed;
  }

  if (command == "execute") {
    absl::StatusOr<pb::ExecuteRequest> request = ExecuteRequestFromFlags();
    if (!request.ok()) return Usage(request.status().message());
    absl::StatusOr<pb::ExecuteResponse> response = client->Execute(*request);
    if (!response.ok()) return Failed(response.status());
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

  if (command == "platforms") {
    absl::StatusOr<pb::ListPlatformsResponse> response = client->ListPlatforms();
    if (!response.ok()) return Failed(response.status());
    std::cout << (json ? ToJson(*response) + "\n" : FormatPlatforms(*response));
    return kExitOk;
  }

  if (command == "health") {
    std::vector<std::string> services = {"", npu::server::kTilingServiceName};
    if (const std::optional<std::string> service = absl::GetFlag(FLAGS_service)) {
      services = {*service};
    }
    bool all_serving = true;
    for (const std::string& service : services) {
      absl::StatusOr<ServingStatus> status = client->CheckHealth(service);
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

  return Usage(absl::StrCat("unknown command \"", command, "\""));
}

}  // namespace
}  // namespace npu::client

int main(int argc, char** argv) {
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "tilingctl/main.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(
      "Client of the NPU tiling service.\n"
      "  tilingctl tile --m M --n N --k K [--dtype float16] [--trans-b] [--format-b FRACTAL_NZ] "
      "[--bias] ...\n"
      "  tilingctl batch FILE      JSON list of TilingRequests or MatmulProblems, one stream\n"
      "  tilingctl conform FILE    cann950-tiling-cases/1 file; ends with \"N passed, M failed\"\n"
      "  tilingctl advise [tile flags] [--max-candidates N] [--budget-ms MS] [--no-verify]\n"
      "                    ranks every applicable tiling by predicted time (ADVISE mode;\n"
      "                    `tile --mode advise` is the same)\n"
      "  tilingctl platforms | health\n"
      "  tilingctl execute [tile flags] [--a A.npy --b B.npy [--bias X.npy] --out C.npy | --seed "
      "N]\n"
      "                    [--timing-only] [--threads N] [--tiling FILE]   emulate on the server\n"
      "Common: --server host:port (default localhost:50051) | --local, --json, --timeout 10s\n"
      "TLS:    --tls_ca CA.pem [--tls_cert CLIENT.pem --tls_key CLIENT.key] [--tls_server_name N]");
  std::vector<std::string> args = npu::client::NormalizeFlagNames(argc, argv);
  npu::client::RewriteBiasFile(args);
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  return npu::client::Run(positional);
}
