// The check of an option that names a directory: an empty name is refused. Without it `--out ''`
// fell back to the default directory and `--write-report ''` ran as if it were not given: a whole
// reproduction.
#pragma once
#include <string>

namespace nt::cli {

inline std::string non_empty_directory(const std::string& name) {
  return name.empty() ? "an empty directory name" : "";
}

}  // namespace nt::cli
