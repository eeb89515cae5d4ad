// Test support: a file's bytes, for the tests that read committed data
// (tests/data/...).
#ifndef NPU_TESTS_TESTING_FILES_H_
#define NPU_TESTS_TESTING_FILES_H_

#include <fstream>
#include <sstream>
#include <string>

namespace npu::testing {

// The whole file at `path`; empty when it cannot be read.
inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

}  // namespace npu::testing

#endif  // NPU_TESTS_TESTING_FILES_H_
