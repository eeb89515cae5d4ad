// ListPlatforms without the transport: the built-in chip profiles.
#ifndef NPU_SERVER_SERVICE_PLATFORM_LIST_H_
#define NPU_SERVER_SERVICE_PLATFORM_LIST_H_

#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::server {

// The answer to every ListPlatforms call: each built-in profile, in the
// engine's order, and the default one's name.
npu::tiling::v1::ListPlatformsResponse PlatformList();

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_PLATFORM_LIST_H_
