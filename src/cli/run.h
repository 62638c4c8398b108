// `normtool run --config FILE [--set key.path=value ...] [key.path=value ...] [--out DIR]`
#pragma once
#include <CLI/CLI.hpp>

namespace nt::cli {

void setup_run(CLI::App& app, int& exit_code);

}  // namespace nt::cli
