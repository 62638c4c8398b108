#include "paths.h"

namespace nt::test {

const std::string& source_dir() {
  static const std::string dir = NORMTOOL_SOURCE_DIR;
  return dir;
}

const std::string& binary() {
  static const std::string path = NORMTOOL_BINARY;
  return path;
}

const std::string& golden_dir() {
  static const std::string dir = NORMTOOL_GOLDEN_DIR;
  return dir;
}

const std::string& output_dir() {
  static const std::string dir = NORMTOOL_TEST_OUTPUT_DIR;
  return dir;
}

}  // namespace nt::test
