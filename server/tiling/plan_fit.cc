#include "server/tiling/plan_fit.h"

namespace npu::tiling {

std::string_view CubeBufferName(CubeBuffer buffer) {
  switch (buffer) {
    case CubeBuffer::kL0a:
      return "L0A";
    case CubeBuffer::kL0b:
      return "L0B";
    case CubeBuffer::kL0c:
      return "L0C";
    case CubeBuffer::kBiasTable:
      return "BT";
    case CubeBuffer::kL1:
      return "L1";
  }
  return "?";
}

}  // namespace npu::tiling
