// `normtool sweep --config FILE key=v1,v2 other=a,b seed=1,2,3 [--jobs N] [--out DIR] [--dry-run]
//  [--launcher local|slurm|print [--partition P] [--time T] ...]`, `normtool sweep --status DIR`,
// `normtool sweep --aggregate DIR`
#pragma once
#include <CLI/CLI.hpp>

namespace nt::cli {

void setup_sweep(CLI::App& app, int& exit_code);

}  // namespace nt::cli
