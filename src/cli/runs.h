// `normtool runs [DIR...] [--format table|csv|json]`: the run directories under each DIR (default
// runs/), sweeps' jobs included, one row each, sorted by path (io/run_index.h):
//   path           relative to DIR ("." for DIR itself; DIR/relative with several DIRs)
//   status         completed, diverged, interrupted, failed (summary.json's), running (its lock
//                  held), stopped (it says running, or has no summary, and no process holds it),
//                  unreadable (config.json or summary.json cannot be read: a note on stderr says why)
//   steps_done, steps_total, final_train_loss, final_val_loss
//   then one column per config key (dotted) whose value differs among the runs listed
// --format: table (aligned text; the default on a terminal), csv (RFC 4180; the default
// otherwise), json (an array of objects). A DIR that is missing, not a directory or unreadable is exit
// 2 naming it; a directory under it that cannot be read is a note on stderr naming it.
#pragma once
#include <CLI/CLI.hpp>

namespace nt::cli {

void setup_runs(CLI::App& app, int& exit_code);

}  // namespace nt::cli
