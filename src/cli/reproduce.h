// `normtool reproduce [ID ...] [--quick] [--jobs N] [--out DIR] [--seeds a,b,c] [--sync-readmes]`
#pragma once
#include <CLI/CLI.hpp>

namespace nt::cli {

void setup_reproduce(CLI::App& app, int& exit_code);

}  // namespace nt::cli
