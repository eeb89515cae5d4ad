// tilingctl: command-line client of the tiling service.
//
//   tilingctl tile --m 4096 --n 1280 --k 8192 --dtype float16 --trans-b --format-b FRACTAL_NZ
//   tilingctl batch problems.json        many problems over one GetTilingBatch stream
//   tilingctl conform cases.json         runs a cann950-tiling-cases/1 or
//                                        cann950-ut-decoded/1 file
//   tilingctl calibrate measured.json    npu-measured-matmul/1 rows against the emulator
//   tilingctl graph model.onnx [batch=1,8 seq=128] [--emulate]
//                                        every matmul of an ONNX model (GetGraphTiling)
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
//
// This file holds the flags (so that --help lists them), the command line's
// normalization and the choice of the service; requests.cc builds the
// requests from the flags, commands.cc runs each subcommand and
// local_service.cc (its own target) starts the in-process service.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/tiling_client.h"
#include "client/tilingctl/cli.h"
#include "client/tilingctl/commands.h"
#include "client/tilingctl/flags.h"
#include "client/tilingctl/local_service.h"

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

// graph.
ABSL_FLAG(std::string, dims, "",
          "graph: values of the model's symbolic dims, \"name=v1,v2 name2=v3\" (also as operands "
          "after MODEL).");
ABSL_FLAG(std::string, gears, "zip",
          "graph: zip (gear i takes each dim's i-th value) or product (every combination).");
ABSL_FLAG(std::string, compute_dtype, "",
          "graph: float16 or bfloat16 to run a float32 export in (default: the model's dtypes).");
ABSL_FLAG(bool, emulate, false, "graph: emulate each distinct problem and report times.");
ABSL_FLAG(bool, fuse_epilogues, false,
          "graph: fuse Relu / Gelu / Add / Mul after a matmul into FusedMatMul.");

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
ABSL_FLAG(std::string, op, "matmul_v3",
          "Operator: matmul_v3, batch_matmul_v3, fused_matmul, quant_batch_matmul_v3, "
          "transpose_batch_matmul or transpose_quant_batch_matmul (CANN's names also work).");
ABSL_FLAG(std::vector<std::string>, batch_a, {},
          "Batch dims of A, outermost first, comma-separated (e.g. 10,10).");
ABSL_FLAG(std::vector<std::string>, batch_b, {}, "Batch dims of B, comma-separated.");
ABSL_FLAG(std::vector<std::string>, batch_c, {},
          "Batch dims of C, comma-separated (default: the broadcast of A's and B's).");
ABSL_FLAG(std::vector<std::string>, batch_bias, {},
          "batch_matmul_v3: batch dims of a per-batch bias, comma-separated.");
ABSL_FLAG(std::string, fused_op, "none",
          "fused_matmul epilogue: none, relu, add, mul, gelu_erf, gelu_tanh or 16cast32.");
ABSL_FLAG(std::vector<std::string>, x3_shape, {},
          "fused_matmul add/mul: shape of x3, m,n or b,m,n (default: m,n).");
ABSL_FLAG(int32_t, inner_precise, 0, "fused_matmul: 0 high precision, 1 high performance.");
ABSL_FLAG(bool, a_batch_interleaved, false,
          "batch_matmul_v3: A is a {1,0,2} view, stored [rows, batch, cols].");
ABSL_FLAG(bool, b_batch_interleaved, false,
          "batch_matmul_v3: B is a {1,0,2} view, stored [rows, batch, cols].");
ABSL_FLAG(std::string, scale_dtype, "",
          "quant_batch_matmul_v3 and transpose_quant_batch_matmul: the (x2's) scale's dtype "
          "(uint64, int64, float32, bfloat16, float8_e8m0); required for them. "
          "transpose_batch_matmul: its int8 y's scale (int64, uint64).");
ABSL_FLAG(std::vector<std::string>, scale_shape, {},
          "quant_batch_matmul_v3, transpose_*: the scale's shape, comma-separated ([1], [n], "
          "per-block or MX; transpose_batch_matmul: [batch * n]).");
ABSL_FLAG(std::string, pertoken_dtype, "",
          "quant_batch_matmul_v3, transpose_quant_batch_matmul: the pertoken (x1's) scale's dtype; "
          "empty: no pertoken scale.");
ABSL_FLAG(std::vector<std::string>, pertoken_shape, {},
          "quant_batch_matmul_v3, transpose_quant_batch_matmul: the pertoken (x1's) scale's shape, "
          "comma-separated.");
ABSL_FLAG(std::string, offset_dtype, "",
          "quant_batch_matmul_v3: the offset's dtype (float32); empty: no offset.");
ABSL_FLAG(std::vector<std::string>, offset_shape, {},
          "quant_batch_matmul_v3: the offset's shape, comma-separated.");
ABSL_FLAG(std::vector<std::string>, bias_shape, {},
          "quant_batch_matmul_v3: the bias's shape, [n] (default) or batch,1,n.");
ABSL_FLAG(std::vector<std::string>, group_size, {},
          "quant_batch_matmul_v3: CANN's group sizes as m,n,k (0: inferred where CANN infers).");
ABSL_FLAG(std::string, quant_scale_dtype, "",
          "weight_quant_batch_matmul_v2: the int8 output's quant scale dtype (uint64); empty: "
          "none. (For that operator --scale-* is the antiquant scale, --offset-* its offset and "
          "--group-size its one group size.)");
ABSL_FLAG(std::vector<std::string>, quant_scale_shape, {},
          "weight_quant_batch_matmul_v2: the quant scale's shape, comma-separated.");
ABSL_FLAG(std::string, quant_offset_dtype, "",
          "weight_quant_batch_matmul_v2: the int8 output's quant offset dtype; empty: none.");
ABSL_FLAG(std::vector<std::string>, quant_offset_shape, {},
          "weight_quant_batch_matmul_v2: the quant offset's shape, comma-separated.");
ABSL_FLAG(bool, without_tensor_api, false,
          "quant_batch_matmul_v3: the runtime lacks the Tensor API (asc-devkit below 9.1.0).");
ABSL_FLAG(std::vector<std::string>, perm_x1, {},
          "transpose_*: x1's perm, comma-separated (default 1,0,2: x1 stored [m, batch, k]).");
ABSL_FLAG(std::vector<std::string>, perm_x2, {},
          "transpose_*: x2's perm (default 0,1,2; 0,2,1: x2 stored [batch, n, k]).");
ABSL_FLAG(std::vector<std::string>, perm_y, {},
          "transpose_*: y's perm (default 1,0,2: y stored [m, batch, n]).");
ABSL_FLAG(std::optional<int64_t>, batch, std::nullopt,
          "transpose_*: the batch of x1, x2 and y (MLA: the heads); required for them.");
ABSL_FLAG(std::optional<int64_t>, batch_split_factor, std::nullopt,
          "transpose_batch_matmul: y's batch written in this many parts (default 1).");
ABSL_FLAG(std::string, grouped, "",
          "grouped_matmul: the whole GroupedInputs message in the proto JSON mapping (its ten "
          "tensor lists and attributes), or @FILE holding it; the shape flags are then unused.");
ABSL_FLAG(int64_t, groups, 1, "grouped_matmul: the group (expert) count E.");
ABSL_FLAG(std::string, form, "single",
          "grouped_matmul: single (x [m, k], weight [E, k, n], y [m, n]), single_multi_single "
          "(E weights [k, n]) or multi (E each of x [m, k], weight [k, n], y [m, n]).");
ABSL_FLAG(std::optional<int64_t>, group_type, std::nullopt,
          "grouped_matmul: -1 no split, 0 split M, 2 split K (default 0; -1 for --form multi).");
ABSL_FLAG(int64_t, group_list_type, 0,
          "grouped_matmul: 0 cumulative, 1 counts, 2 sparse group_list.");
ABSL_FLAG(std::optional<int64_t>, split_item, std::nullopt,
          "grouped_matmul: CANN's split_item (default 3; 0 for --form multi).");
ABSL_FLAG(std::vector<std::string>, histogram, {},
          "grouped_matmul: the token histogram, rows per expert (split M) or K per group "
          "(split K), e.g. 10,0,300,...; one entry per group, summing to M (K). Without it and "
          "--skew, Execute spreads the rows evenly and says so.");
ABSL_FLAG(std::string, skew, "",
          "grouped_matmul: draw the token histogram instead: zipf:S routes the M rows (split "
          "K: the K) over the experts by a Zipf law of exponent S (S > 0; 1.0 to 1.5 is typical "
          "of MoE routers), the experts' ranks and the draw seeded by --seed.");

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
ABSL_FLAG(std::string, a, "",
          "Execute: A as a .npy file ([m, k], or [k, m] with --trans-a); quant_batch_matmul_v3's "
          "x1 (see --b for the quantized forms).");
ABSL_FLAG(std::string, b, "",
          "Execute: B as a .npy file ([k, n], or [n, k] with --trans-b). quant_batch_matmul_v3's "
          "x1 / x2: int8 as '|i1'; float8 / hifloat8 as '|u1' codes; int4 / float4_e2m1 as '|u1' "
          "packed bytes (two codes per byte, element 2i in the low nibble; last dim halved) or "
          "unpacked in the full shape (int4 '|i1' values in [-8, 7], float4_e2m1 '|u1' codes "
          "0..15).");
ABSL_FLAG(std::string, bias_npy, "",
          "Execute: the bias as a .npy file of n elements; `--bias X.npy` is the same. "
          "quant_batch_matmul_v3: of --bias-shape, int32 '<i4' or float32 / bfloat16 (as "
          "'<u2' bits) / float16 as --bias-dtype says.");
ABSL_FLAG(
    std::string, scale_npy, "",
    "Execute, quant_batch_matmul_v3 and transpose_*: the scale as a .npy file of --scale-dtype and "
    "--scale-shape: uint64 '<u8' or int64 '<i8' (packed fixpipe words), float32 '<f4', "
    "bfloat16 '<u2' (the bits) or float8_e8m0 '|u1' (the codes).");
ABSL_FLAG(std::string, pertoken_npy, "",
          "Execute, quant_batch_matmul_v3, transpose_quant_batch_matmul: the pertoken scale as a "
          ".npy file of --pertoken-dtype "
          "and --pertoken-shape (float32 '<f4', float8_e8m0 '|u1' codes).");
ABSL_FLAG(std::string, offset_npy, "",
          "Execute, quant_batch_matmul_v3: the offset as a .npy file of --offset-dtype and "
          "--offset-shape (float32 '<f4').");
ABSL_FLAG(std::string, out, "",
          "Execute: write the emulated C to this .npy file (bfloat16 as '<u2' bits, int8 as "
          "'|i1', int32 as '<i4').");
ABSL_FLAG(uint64_t, seed, 0, "Execute: seed of the generated operands (without --a / --b).");
ABSL_FLAG(bool, timing_only, false, "Execute: only predict the timing (no numerics).");
ABSL_FLAG(uint32_t, threads, 0, "Execute: host threads for the numerics on the server.");
ABSL_FLAG(std::string, tiling, "",
          "Execute: emulate this tiling (JSON of `tile --json`, possibly edited) instead of "
          "the engine's.");
ABSL_FLAG(std::string, kernel_schedule, "",
          "Execute: emulate this hand-written kernel's schedule instead of a CANN tiling: a JSON "
          "object with the keys of a calibration row's `kernel` (null: the default); any "
          "built-in --platform.");
ABSL_FLAG(absl::Duration, execute_timeout, absl::Minutes(5),
          "Execute: deadline of the call; the server stops the emulation when it passes.");

// health
ABSL_FLAG(std::optional<std::string>, service, std::nullopt,
          "Health: service name to check (default: the server and npu.tiling.v1.TilingService).");

namespace npu::client {
namespace {

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

// The connection options of the flags; TLS files are read here, and a file
// that cannot be read is a usage error.
absl::StatusOr<ClientOptions> ClientOptionsFromFlags(const std::string& command) {
  ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  options.timeout = absl::GetFlag(FLAGS_timeout);
  if (command == "advise" || absl::GetFlag(FLAGS_mode) == "advise") {
    // An advice may wait for an emulation worker and then spend its whole
    // budget plus a numerics check: the budget comes on top of --timeout.
    options.timeout += absl::Milliseconds(absl::GetFlag(FLAGS_budget_ms));
  }
  options.execute_timeout = absl::GetFlag(FLAGS_execute_timeout);
  if (absl::GetFlag(FLAGS_local)) return options;
  options.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  options.use_tls = absl::GetFlag(FLAGS_tls) || !options.tls_server_name.empty();
  for (const auto& [flag, path, pem] :
       {std::make_tuple("--tls_ca", absl::GetFlag(FLAGS_tls_ca), &options.tls_root_ca_pem),
        std::make_tuple("--tls_cert", absl::GetFlag(FLAGS_tls_cert), &options.tls_cert_chain_pem),
        std::make_tuple("--tls_key", absl::GetFlag(FLAGS_tls_key), &options.tls_private_key_pem)}) {
    if (path.empty()) continue;
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": ", text.status().message()));
    }
    *pem = *std::move(text);
    options.use_tls = true;
  }
  return options;
}

// The subcommand `command` with its FILE operand, if it takes one.
int RunCommand(const std::string& command, const std::vector<std::string>& operands,
               TilingClient& client) {
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode != "cann" && mode != "advise") {
    return Usage(absl::StrCat("--mode must be cann or advise, got \"", mode, "\""));
  }
  if (command == "advise" || (command == "tile" && mode == "advise")) return RunAdvise(client);
  if (command == "tile") return RunTile(client);
  if (command == "batch") return RunBatch(client, operands[0]);
  if (command == "conform") return RunConform(client, operands[0]);
  if (command == "calibrate") return RunCalibrate(client, operands[0]);
  if (command == "execute") return RunExecute(client);
  if (command == "graph") {
    return RunGraph(client, operands[0],
                    std::vector<std::string>(operands.begin() + 1, operands.end()));
  }
  if (command == "platforms") return RunPlatforms(client);
  if (command == "health") return RunHealth(client);
  return Usage(absl::StrCat("unknown command \"", command, "\""));
}

// Checks the operands, connects to --server or starts the service in this
// process (--local), then runs the subcommand.
int Run(const std::vector<char*>& positional) {
  if (positional.size() < 2) return Usage("missing command");
  const std::string command = positional[1];
  const std::vector<std::string> operands(positional.begin() + 2, positional.end());
  const bool takes_file = command == "batch" || command == "conform" || command == "calibrate";
  if (takes_file && operands.size() != 1) return Usage(absl::StrCat(command, " needs one FILE"));
  if (command == "graph" && operands.empty()) return Usage("graph needs a MODEL file");
  if (!takes_file && command != "graph" && !operands.empty()) {
    return Usage(absl::StrCat("unexpected argument \"", operands.front(), "\""));
  }
  absl::StatusOr<ClientOptions> options = ClientOptionsFromFlags(command);
  if (!options.ok()) return Usage(options.status().message());
  // Declared before the client, so the client goes first.
  std::unique_ptr<LocalService> local;
  std::unique_ptr<TilingClient> client;
  if (absl::GetFlag(FLAGS_local)) {
    absl::StatusOr<std::unique_ptr<LocalService>> started = LocalService::Start();
    if (!started.ok()) return Failed(started.status());
    local = *std::move(started);
    client = std::make_unique<TilingClient>(local->Channel(), *options);
  } else {
    absl::StatusOr<std::unique_ptr<TilingClient>> connected = TilingClient::Connect(*options);
    if (!connected.ok()) return Failed(connected.status());
    client = *std::move(connected);
  }
  return RunCommand(command, operands, *client);
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
      "  tilingctl conform FILE    cann950-tiling-cases/1 or cann950-ut-decoded/1 file; ends\n"
      "                    with \"N passed, M failed\"\n"
      "  tilingctl calibrate FILE  npu-measured-matmul/1 file: each row's kernel emulated, the\n"
      "                    predicted msprof figures against the measured ones; ends with\n"
      "                    \"N rows: median |error| X%, max |error| Y%\"\n"
      "  tilingctl advise [tile flags] [--max-candidates N] [--budget-ms MS] [--no-verify]\n"
      "                    ranks every applicable tiling by predicted time (ADVISE mode;\n"
      "                    `tile --mode advise` is the same)\n"
      "  tilingctl graph MODEL.onnx [name=v1,v2 ...] [--gears zip|product] [--emulate]\n"
      "                    [--fuse-epilogues] [--compute-dtype float16]  every matmul of an\n"
      "                    ONNX model: CANN's operator, tiling and (--emulate) time per gear\n"
      "  tilingctl platforms | health\n"
      "  tilingctl execute [tile flags] [--a A.npy --b B.npy [--bias X.npy] --out C.npy | --seed "
      "N]\n"
      "                    [--scale_npy S.npy] [--pertoken_npy P.npy] [--offset_npy O.npy]\n"
      "                    [--timing-only] [--threads N] [--tiling FILE | --kernel-schedule FILE]\n"
      "                    [--histogram 10,0,300,... | --skew zipf:S]  (grouped_matmul)\n"
      "                    emulate on the server\n"
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
