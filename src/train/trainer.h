// The training loop of `normtool run`: the Session's steps (train/session.h), with evaluation,
// statistics and records (io/run_files.h).
#pragma once
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "io/console.h"
#include "io/run_files.h"
#include "train/session.h"

namespace nt {

struct TrainOutcome {
  nlohmann::json summary;  // what summary.json holds
  int exit_code;           // 0 completed, 1 diverged or failed, 130 interrupted
};

TrainOutcome train(const RunConfig& config, Session& session, RunFiles& files, Progress& progress);

// SIGINT/SIGTERM set a flag the loop checks after each step; the run then writes its summary
// with status "interrupted".
void install_interrupt_handlers();

}  // namespace nt
