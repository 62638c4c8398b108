// The readers of run files (io/json_file.h, io/run_files.h) parse as a config is parsed
// (config/user_json.h): a value nested 100,000 deep in metrics.jsonl, summary.json or any JSON
// document overflowed the stack when it was copied or printed in a message (found by reading,
// replayed by fuzz/crashes-<target>); now it is an InputError naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "helpers.h"
#include "io/json_file.h"
#include "io/run_files.h"

namespace nt::test {
namespace {

const std::string kDeep = std::string(100000, '[') + std::string(100000, ']');

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The message of the InputError that `f` throws ("no error" when none).
template <typename F>
std::string message(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunFileNesting, AValueNestedTooDeepIsAnInputErrorNamingTheFile) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  // "<file>: <key>[0][0]...: nested deeper than 32 levels" (the path cut at 60 characters)
  auto refused = [](const std::string& m, const std::string& where) {
    const std::string tail = ": nested deeper than 32 levels";
    return m.rfind(where + "[0][0][0]", 0) == 0 && m.size() > tail.size() &&
           m.compare(m.size() - tail.size(), tail.size(), tail) == 0;
  };
  write(d / "metrics.jsonl", "{\"step\": 0, \"split\": \"train\", \"loss\": 1}\n{\"step\": " + kDeep + "}\n");
  const std::string metrics = message([&] { read_losses(d.str()); });
  EXPECT_TRUE(refused(metrics, d / "metrics.jsonl" + ":2: step")) << metrics;
  write(d / "summary.json", "{\"status\": " + kDeep + "}\n");
  const std::string summary = message([&] { read_summary(d.str()); });
  EXPECT_TRUE(refused(summary, d / "summary.json" + ": status")) << summary;
  write(d / "sweep.json", "{\"notes\": " + kDeep + "}\n");
  const std::string sweep = message([&] { read_json_file(d / "sweep.json"); });
  EXPECT_TRUE(refused(sweep, d / "sweep.json" + ": notes")) << sweep;
}

TEST(RunFileNesting, WhatARunWritesStillReads) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  write(d / "metrics.jsonl",
        "{\"step\": 0, \"split\": \"val\", \"loss\": 2.5, \"acc\": 0.25}\n{\"step\": 1, \"loss\": null}\n");
  const std::vector<LossPoint> points = read_losses(d.str());
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].step, 0);
  EXPECT_TRUE(points[0].val);
  EXPECT_EQ(points[0].loss, 2.5);
  EXPECT_EQ(points[0].acc, 0.25);
  write(d / "summary.json", "{\"status\": \"completed\", \"steps_completed\": 4, \"nested\": {\"a\": [[1]]}}\n");
  EXPECT_EQ(read_summary(d.str())["steps_completed"], 4);
  write(d / "summary.json", "{\"status\": \"runn");  // a run killed while it wrote its first summary
  EXPECT_TRUE(read_summary(d.str()).is_null());
  write(d / "summary.json", "{\"status\": \"completed\", \"status\": \"failed\"}\n");  // which one?
  EXPECT_EQ(message([&] { read_summary(d.str()); }), d / "summary.json" + ": status: the key appears twice");
}

}  // namespace
}  // namespace nt::test
