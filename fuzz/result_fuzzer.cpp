// libFuzzer target: a claim's result.json as reproduce reads its report directory back
// (claims/report.h: load_results, then write_report, which reproduce calls with what it read).
// Input: the file's bytes, written as <dir>/<id>-<slug>/result.json of the first claim in a
// report directory of the target's own. Properties: a result that cannot be used is an
// InputError naming the file, and nothing else (no other exception, crash, sanitizer report,
// hang or huge allocation); an accepted one is that claim's, at most one, each measure's values
// finite or NaN (null), and REPORT.md and verdicts.json are written from it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "claims/claim.h"
#include "claims/report.h"
#include "core/errors.h"
#include "fuzz_dir.h"

namespace {
[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "result_fuzzer: %s\n", why.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = nt_fuzz::fuzz_dir("result");
  const nt::Claim& claim = nt::all_claims().front();
  const std::string file = dir + "/" + claim.id + "-" + claim.slug + "/result.json";
  static const bool made = std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  (void)made;
  nt_fuzz::write_input(file, data, size);
  std::vector<std::pair<const nt::Claim*, nt::ClaimResult>> results;
  try {
    results = nt::load_results(dir);
  } catch (const nt::InputError& e) {
    if (std::string(e.what()).find(file) == std::string::npos)
      fail(std::string("an error that does not name the file: ") + e.what());
    return 0;
  } catch (const std::exception& e) {
    fail(std::string("not an InputError: ") + e.what());
  }
  if (results.size() > 1 || (results.size() == 1 && results[0].first != &claim)) fail("a result not of the file's claim");
  for (const auto& [c, r] : results)
    for (const nt::Measure& m : r.measures)
      for (double v : m.values)
        if (std::isinf(v)) fail("an infinite value in " + m.name);
  try {
    nt::write_report(dir, results);
  } catch (const std::exception& e) {
    fail(std::string("write_report failed on an accepted result: ") + e.what());
  }
  return 0;
}
