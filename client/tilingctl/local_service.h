// The in-process tiling service behind `tilingctl --local`.
//
// It lives in its own target, npu_tilingctl_local, the only part of tilingctl
// that links the server (service, engine, emulator, metrics): the client
// library and the rest of tilingctl link the generated API and gRPC only.
// This header names no server type.
#ifndef NPU_CLIENT_TILINGCTL_LOCAL_SERVICE_H_
#define NPU_CLIENT_TILINGCTL_LOCAL_SERVICE_H_

#include <grpcpp/channel.h>

#include <memory>

#include "absl/status/statusor.h"

namespace npu::client {

// A tiling service with the built-in strategies, running inside this process
// until the object is destroyed. Destroy the clients of Channel() first.
class LocalService {
 public:
  virtual ~LocalService() = default;

  // Starts the service on an in-process channel (no port). In-process calls
  // have no network to protect, so messages of any size pass both ways
  // (Execute carries whole .npy operands and C).
  static absl::StatusOr<std::unique_ptr<LocalService>> Start();

  // Returns a channel to the service.
  virtual std::shared_ptr<grpc::Channel> Channel() = 0;
};

}  // namespace npu::client

#endif  // NPU_CLIENT_TILINGCTL_LOCAL_SERVICE_H_
