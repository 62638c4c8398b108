// `normtool invariance [--transform T] [--norm N] [--format table|json] [--delta D] [--seed S]
//                      [--explain] [--geometry] [--example] [--config FILE]`
#pragma once
#include <CLI/CLI.hpp>

namespace nt::cli {

void setup_invariance(CLI::App& app, int& exit_code);

}  // namespace nt::cli
