#include "client/tilingctl/cli.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace npu::client {

int Usage(absl::string_view message) {
  std::cerr << "tilingctl: " << message << "\n"
            << "usage: tilingctl tile|advise|batch FILE|conform FILE|calibrate FILE|graph MODEL|"
               "platforms|"
               "health|execute [flags]; "
               "see --help\n";
  return kExitUsage;
}

int Failed(const absl::Status& status) {
  std::cerr << "tilingctl: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
            << "\n";
  return kExitFailed;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace npu::client
