// libFuzzer target: config loading and override parsing (src/config).
//
// Input: a config file's text, then any number of overrides, each after a NUL byte
// ("{...}\0train.lr=3e-4\0model.norm.type=rmsnorm"). Properties checked on every input:
//   - bad input is an InputError and nothing else: any other exception escapes and is a finding
//     (a library exception with no key path, as json.exception.out_of_range.406 was)
//   - no crash, no sanitizer report (the fuzz build has ASan and UBSan: a value nested 100,000
//     deep overflowed the stack)
//   - an accepted config prints as JSON (valid UTF-8), and that JSON loads without a problem
//     and gives the same config
//   - its memory estimate is positive
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/errors.h"
#include "train/memory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts(1);
  for (char ch : input) {
    if (ch == '\0') parts.emplace_back();
    else parts.back() += ch;
  }
  const std::vector<std::string> overrides(parts.begin() + 1, parts.end());
  nt::RunConfig c;
  try {
    c = nt::load_config(parts[0], "fuzz.json", overrides);
  } catch (const nt::InputError&) {
    return 0;  // refused with a message: what bad input must get
  }
  const nlohmann::json resolved = nt::config_to_json(c);
  const std::string text = resolved.dump(2);  // throws on invalid UTF-8
  try {  // an accepted config always reloads to itself (a value wrapped past INT_MAX would not)
    if (nt::config_to_json(nt::load_config(text, "resolved.json", {})) != resolved) std::abort();
  } catch (const nt::InputError&) {
    std::abort();
  }
  if (nt::estimate_memory(c).total() <= 0) std::abort();
  return 0;
}
