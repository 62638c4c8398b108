// libFuzzer target: a run's summary.json as resume, sweeps and compare read it
// (io/run_files.h: read_summary). Input: the file's bytes, written into a run directory of the
// target's own. Properties: a summary that cannot be used is an InputError naming the file, and
// nothing else (no other exception, crash, sanitizer report, hang or huge allocation); what it
// returns is null (none, or it does not parse: a run killed before its first summary) or an
// object whose keys keep read_summary's promise: status a string, steps_completed an integer,
// diverged true or false, final_train_loss, final_val_loss, final_val_acc and steps_per_s
// numbers or null, each when present.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "fuzz_dir.h"
#include "io/run_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = nt_fuzz::fuzz_dir("summary");
  nt_fuzz::write_input(dir + "/summary.json", data, size);
  const auto read = nt_fuzz::read_or_refuse("summary", dir + "/summary.json", [&] { return nt::read_summary(dir); });
  if (!read) return 0;
  const nlohmann::json& s = *read;
  if (s.is_null()) return 0;
  if (!s.is_object()) nt_fuzz::fail("summary", "accepted, and not an object");
  if (s.contains("status") && !s["status"].is_string()) nt_fuzz::fail("summary", "accepted with a status that is not a string");
  if (s.contains("steps_completed") && !s["steps_completed"].is_number_integer())
    nt_fuzz::fail("summary", "accepted with a steps_completed that is not an integer");
  if (s.contains("diverged") && !s["diverged"].is_boolean()) nt_fuzz::fail("summary", "accepted with a diverged that is not a boolean");
  for (const char* k : {"final_train_loss", "final_val_loss", "final_val_acc", "steps_per_s"})
    if (s.contains(k) && !s[k].is_number() && !s[k].is_null()) nt_fuzz::fail("summary", std::string("accepted with a ") + k + " of another type");
  return 0;
}
