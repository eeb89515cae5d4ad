// tilingctl's subcommands, one function each: they build the request from the
// flags (requests.h), call the service through `client` and print the answer
// as a table, or as the proto's JSON mapping with --json. Each returns the
// process's exit status (cli.h).
#ifndef NPU_CLIENT_TILINGCTL_COMMANDS_H_
#define NPU_CLIENT_TILINGCTL_COMMANDS_H_

#include <string>

#include "client/tiling_client.h"

namespace npu::client {

// `tile`: CANN's decision for one problem.
int RunTile(TilingClient& client);

// `advise`, or `tile --mode advise`: every applicable tiling, ranked.
int RunAdvise(TilingClient& client);

// `batch FILE`: the problems of FILE over one GetTilingBatch stream.
int RunBatch(TilingClient& client, const std::string& path);

// `conform FILE`: the cases of a cann950-tiling-cases/1 file.
int RunConform(TilingClient& client, const std::string& path);

// `execute`: emulates the tiling of one problem (or, with
// --kernel-schedule, a hand-written kernel's schedule) on the server.
int RunExecute(TilingClient& client);

// `calibrate FILE`: the rows of an npu-measured-matmul/1 file, measured
// against the emulator's prediction (calibrate.h).
int RunCalibrate(TilingClient& client, const std::string& path);

// `graph MODEL [name=values...]`: every matmul of an ONNX model
// (GetGraphTiling); `dim_specs` are the operands after MODEL.
int RunGraph(TilingClient& client, const std::string& path,
             const std::vector<std::string>& dim_specs);

// `platforms`: the platform profiles the server knows.
int RunPlatforms(TilingClient& client);

// `health`: grpc.health.v1.Health of the server and the tiling service (or
// of --service).
int RunHealth(TilingClient& client);

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_COMMANDS_H_
