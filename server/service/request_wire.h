// A decoder for the common shape of a TilingRequest, without protobuf's
// parser.
//
// Nearly every GetTiling request is an id, a problem of scalar fields, a few
// strings and flags: a few dozen bytes. Under load, protobuf's generic parser
// costs several times the decision behind such a request (bench/RESULTS.md),
// so the service first tries this decoder, which knows exactly those fields.
// It accepts only bytes it can decode to the very message protobuf would
// build and declines everything else: other fields (platform overrides,
// ADVISE options, storage shapes, slice views, unknown fields), a repeated
// problem (protobuf merges the copies), unexpected wire types, strings that
// are not ASCII (protobuf checks their UTF-8), anything malformed. The
// caller then parses the bytes with protobuf, which also reports the errors.
// request_wire_test and the tiling_request fuzzer check that an accepted
// request equals protobuf's parse of the same bytes.
#ifndef NPU_SERVER_SERVICE_REQUEST_WIRE_H_
#define NPU_SERVER_SERVICE_REQUEST_WIRE_H_

#include <string_view>

#include "npu/tiling/v1/tiling_service.pb.h"

namespace npu::server {

// Sets `request` to the message `bytes` encode and returns true when they
// have the common shape; otherwise returns false, with `request` in an
// unspecified state (the caller parses it again).
bool DecodeCommonRequest(std::string_view bytes, npu::tiling::v1::TilingRequest* request);

}  // namespace npu::server

#endif  // NPU_SERVER_SERVICE_REQUEST_WIRE_H_
