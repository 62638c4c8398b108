// What load_config (config/config.h) says of a config made of overrides (over `file`): the ConfigError's
// message naming every problem, or "" when the config is valid. For the tests of refused combinations.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace nt {

inline std::string problems_of(std::vector<std::string> overrides, const std::string& file = "{}") {
  try {
    load_config(file, "t.json", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace nt
