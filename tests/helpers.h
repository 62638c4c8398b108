// Shared helpers for the end-to-end tests: temporary directories, running the normtool
// binary, reading JSON-lines files.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "paths.h"

namespace nt::test {

// A fresh, empty path under the system's temporary folder, removed at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("normtool-test-" + std::to_string(rd()) + std::to_string(rd()));
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
  std::string operator/(const std::string& s) const { return (path / s).string(); }
};

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

// Runs `script` through sh, stdout and stderr together; a signal's death is 128 + its number.
inline CommandResult run_shell(const std::string& script) {
  const std::string cmd = script + " 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  CommandResult r{-1, ""};
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// The smallest smoke config, and four steps of it logging every step: a run that writes every file.
inline const std::string& smoke_config() {
  static const std::string path = source_dir() + "/configs/smoke/lm-none-pre.json";
  return path;
}
inline const std::string& four_step_run() {
  static const std::string args =
      " --config " + smoke_config() + " --set train.steps=4 --set train.eval_every=2 --set train.log_every=1";
  return args;
}

// A transformer small enough to train in a blink (synthetic LM data, d 16), as `--set` arguments.
inline const std::string kTinyModel =
    "--set data.dataset=synthetic-lm --set data.seq_len=16 --set model.d_model=16 --set model.n_heads=2 "
    "--set model.d_ff=32 --set train.batch_size=8 --set train.threads=1 ";

// Runs `normtool <args>` through the shell; args are pasted as written.
inline CommandResult run_normtool(const std::string& args) { return run_shell(binary() + " " + args); }

inline std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace nt::test
