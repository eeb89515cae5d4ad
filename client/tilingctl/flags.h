// The command-line flags of tilingctl, declared for the files that read them.
//
// They are defined in main.cc, the file whose flags `tilingctl --help` lists
// (see main()'s usage config); the request builders (requests.cc), the
// subcommands (commands.cc) and the connection read them through this
// header. Flag names accept '-' or '_' on the command line.
#ifndef NPU_CLIENT_TILINGCTL_FLAGS_H_
#define NPU_CLIENT_TILINGCTL_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/time/time.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(std::string, dims);
ABSL_DECLARE_FLAG(std::string, gears);
ABSL_DECLARE_FLAG(std::string, compute_dtype);
ABSL_DECLARE_FLAG(bool, emulate);
ABSL_DECLARE_FLAG(bool, fuse_epilogues);
ABSL_DECLARE_FLAG(bool, local);
ABSL_DECLARE_FLAG(absl::Duration, timeout);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(bool, tls);
ABSL_DECLARE_FLAG(std::string, tls_ca);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
ABSL_DECLARE_FLAG(std::string, tls_server_name);
ABSL_DECLARE_FLAG(std::optional<int64_t>, m);
ABSL_DECLARE_FLAG(std::optional<int64_t>, n);
ABSL_DECLARE_FLAG(std::optional<int64_t>, k);
ABSL_DECLARE_FLAG(std::string, dtype);
ABSL_DECLARE_FLAG(std::optional<std::string>, dtype_a);
ABSL_DECLARE_FLAG(std::optional<std::string>, dtype_b);
ABSL_DECLARE_FLAG(std::optional<std::string>, dtype_c);
ABSL_DECLARE_FLAG(bool, trans_a);
ABSL_DECLARE_FLAG(bool, trans_b);
ABSL_DECLARE_FLAG(std::string, format_a);
ABSL_DECLARE_FLAG(std::string, format_b);
ABSL_DECLARE_FLAG(std::string, format_c);
ABSL_DECLARE_FLAG(std::vector<std::string>, storage_shape_b);
ABSL_DECLARE_FLAG(bool, bias);
ABSL_DECLARE_FLAG(std::optional<std::string>, bias_dtype);
ABSL_DECLARE_FLAG(bool, hf32);
ABSL_DECLARE_FLAG(bool, force_grp_acc_fp32);
ABSL_DECLARE_FLAG(int32_t, deterministic_level);
ABSL_DECLARE_FLAG(bool, avoid_tensor_api);
ABSL_DECLARE_FLAG(std::optional<int32_t>, slice_rank);
ABSL_DECLARE_FLAG(int64_t, slice_batch);
ABSL_DECLARE_FLAG(int64_t, slice_batch_stride);
ABSL_DECLARE_FLAG(int64_t, slice_row_stride);
ABSL_DECLARE_FLAG(std::string, op);
ABSL_DECLARE_FLAG(std::vector<std::string>, batch_a);
ABSL_DECLARE_FLAG(std::vector<std::string>, batch_b);
ABSL_DECLARE_FLAG(std::vector<std::string>, batch_c);
ABSL_DECLARE_FLAG(std::vector<std::string>, batch_bias);
ABSL_DECLARE_FLAG(std::string, fused_op);
ABSL_DECLARE_FLAG(std::vector<std::string>, x3_shape);
ABSL_DECLARE_FLAG(int32_t, inner_precise);
ABSL_DECLARE_FLAG(bool, a_batch_interleaved);
ABSL_DECLARE_FLAG(bool, b_batch_interleaved);
ABSL_DECLARE_FLAG(std::string, scale_dtype);
ABSL_DECLARE_FLAG(std::vector<std::string>, scale_shape);
ABSL_DECLARE_FLAG(std::string, pertoken_dtype);
ABSL_DECLARE_FLAG(std::vector<std::string>, pertoken_shape);
ABSL_DECLARE_FLAG(std::string, offset_dtype);
ABSL_DECLARE_FLAG(std::vector<std::string>, offset_shape);
ABSL_DECLARE_FLAG(std::vector<std::string>, bias_shape);
ABSL_DECLARE_FLAG(std::vector<std::string>, group_size);
ABSL_DECLARE_FLAG(bool, without_tensor_api);
ABSL_DECLARE_FLAG(std::vector<std::string>, perm_x1);
ABSL_DECLARE_FLAG(std::vector<std::string>, perm_x2);
ABSL_DECLARE_FLAG(std::vector<std::string>, perm_y);
ABSL_DECLARE_FLAG(std::optional<int64_t>, batch);
ABSL_DECLARE_FLAG(std::optional<int64_t>, batch_split_factor);
ABSL_DECLARE_FLAG(std::string, platform);
ABSL_DECLARE_FLAG(std::optional<uint32_t>, aic_num);
ABSL_DECLARE_FLAG(std::optional<uint32_t>, aiv_num);
ABSL_DECLARE_FLAG(std::optional<uint64_t>, l1_bytes);
ABSL_DECLARE_FLAG(std::optional<uint64_t>, l0a_bytes);
ABSL_DECLARE_FLAG(std::optional<uint64_t>, l0b_bytes);
ABSL_DECLARE_FLAG(std::optional<uint64_t>, l0c_bytes);
ABSL_DECLARE_FLAG(std::optional<uint64_t>, ub_bytes);
ABSL_DECLARE_FLAG(std::optional<uint64_t>, l2_bytes);
ABSL_DECLARE_FLAG(std::optional<uint64_t>, bt_bytes);
ABSL_DECLARE_FLAG(std::optional<uint32_t>, cube_freq_mhz);
ABSL_DECLARE_FLAG(std::optional<uint32_t>, ddr_bytes_per_cycle);
ABSL_DECLARE_FLAG(std::optional<uint32_t>, l2_bytes_per_cycle);
ABSL_DECLARE_FLAG(std::string, strategy);
ABSL_DECLARE_FLAG(bool, trace);
ABSL_DECLARE_FLAG(std::string, id);
ABSL_DECLARE_FLAG(std::string, view);
ABSL_DECLARE_FLAG(std::string, mode);
ABSL_DECLARE_FLAG(uint32_t, max_candidates);
ABSL_DECLARE_FLAG(uint32_t, budget_ms);
ABSL_DECLARE_FLAG(bool, no_verify);
ABSL_DECLARE_FLAG(std::string, a);
ABSL_DECLARE_FLAG(std::string, b);
ABSL_DECLARE_FLAG(std::string, bias_npy);
ABSL_DECLARE_FLAG(std::string, scale_npy);
ABSL_DECLARE_FLAG(std::string, pertoken_npy);
ABSL_DECLARE_FLAG(std::string, offset_npy);
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(bool, timing_only);
ABSL_DECLARE_FLAG(uint32_t, threads);
ABSL_DECLARE_FLAG(std::string, tiling);
ABSL_DECLARE_FLAG(std::string, kernel_schedule);
ABSL_DECLARE_FLAG(absl::Duration, execute_timeout);
ABSL_DECLARE_FLAG(std::optional<std::string>, service);

#endif  // NPU_CLIENT_TILINGCTL_FLAGS_H_
