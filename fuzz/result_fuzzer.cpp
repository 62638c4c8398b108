// libFuzzer target: a claim's result.json as reproduce reads its report directory back
// (report/report.h: load_results, then write_report, which reproduce calls with what it read).
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
#include "report/report.h"
#include "core/errors.h"
#include "fuzz_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = nt_fuzz::fuzz_dir("result");
  const nt::Claim& claim = nt::all_claims().front();
  const std::string file = dir + "/" + claim.id + "-" + claim.slug + "/result.json";
  static const bool made = std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  (void)made;
  nt_fuzz::write_input(file, data, size);
  const auto read = nt_fuzz::read_or_refuse("result", file, [&] { return nt::load_results(dir); });
  if (!read) return 0;
  const auto& results = *read;
  if (results.size() > 1 || (results.size() == 1 && results[0].first != &claim)) nt_fuzz::fail("result", "a result not of the file's claim");
  for (const auto& [c, r] : results)
    for (const nt::Measure& m : r.measures)
      for (double v : m.values)
        if (std::isinf(v)) nt_fuzz::fail("result", "an infinite value in " + m.name);
  try {
    nt::write_report(dir, results);
  } catch (const std::exception& e) {
    nt_fuzz::fail("result", std::string("write_report failed on an accepted result: ") + e.what());
  }
  return 0;
}
