#include "server/service/platform_list.h"

#include <string>

#include "server/service/convert.h"
#include "server/service/provenance.h"
#include "server/tiling/types.h"

namespace npu::server {

namespace pb = ::npu::tiling::v1;
namespace tl = ::npu::tiling;

pb::ListPlatformsResponse PlatformList() {
  pb::ListPlatformsResponse response;
  for (const tl::ChipSpec& chip : tl::BuiltinPlatforms()) {
    *response.add_platforms() = ChipToProto(chip);
    (*response.mutable_chip_fingerprints())[chip.name] = ChipFingerprint(chip);
  }
  *response.mutable_provenance() = EngineProvenance();
  response.set_default_platform(std::string(tl::kDefaultPlatform));
  return response;
}

}  // namespace npu::server
