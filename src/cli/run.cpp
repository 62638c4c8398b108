// `normtool run`: resolve the config, load the data, create the run directory, train.
// Exit status: 0 completed; 1 diverged or failed (files still written); 2 bad usage, config or
// data, found before anything is written (main.cpp); 130 interrupted (summary says "interrupted").
#include "cli/run.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/machine.h"
#include "core/threads.h"
#include "io/console.h"
#include "io/paths.h"
#include "io/run_files.h"
#include "train/memory.h"
#include "train/session.h"
#include "train/trainer.h"

namespace nt::cli {

namespace {

struct RunOptions {
  std::string config;
  std::vector<std::string> sets;       // --set key.path=value
  std::vector<std::string> positional; // key.path=value
  std::string out;
  bool print_config = false;
};

int run(const RunOptions& o) {
  std::vector<std::string> overrides = o.sets;
  overrides.insert(overrides.end(), o.positional.begin(), o.positional.end());
  const RunConfig config = load_config_file(find_config(o.config), overrides);
  if (o.print_config) {
    fmt::print("{}\n", config_to_json(config).dump(2));
    return 0;
  }
  check_memory(config);     // refused with the figures, before anything is allocated
  if (config.train.threads > max_math_threads())
    fmt::print(stderr, "warning: train.threads = {} is more than 4 per core on this {}-core machine; using {}\n",
               config.train.threads, cpu_cores(), max_math_threads());
  Session session(config);  // the data and the model, before anything is written
  RunFiles files(o.out.empty() ? default_run_dir(config.name) : o.out);
  files.write_config(config_to_json(config));
  install_interrupt_handlers();
  Progress progress(config.name, config.train.steps, config.train.log_every);
  const TrainOutcome r = train(config, session, files, progress);
  const auto& s = r.summary;
  if (!r.error.empty()) {
    fmt::print(stderr, "error: {}: run failed at step {}: {}\n", files.dir(), s["steps_completed"].get<int>(), r.error);
    return r.exit_code;
  }
  auto num = [&](const char* k) { return s[k].is_number() ? fmt::format("{:.4f}", s[k].get<double>()) : "n/a"; };
  fmt::print("{}: {} after {} steps: train loss {}, val loss {}{}, {} steps/s -> {}\n", config.name,
             s["status"].get<std::string>(), s["steps_completed"].get<int>(), num("final_train_loss"),
             num("final_val_loss"), s.contains("final_val_acc") ? ", val acc " + num("final_val_acc") : "",
             s["steps_per_s"].is_number() ? fmt::format("{:.1f}", s["steps_per_s"].get<double>()) : "n/a", files.dir());
  return r.exit_code;
}

}  // namespace

void setup_run(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Train one model from a JSON config and record the run");
  sub->add_option("-c,--config", o->config, "JSON config file (every key has a default; see configs/)");
  sub->add_option("-s,--set", o->sets, "override a key: --set model.norm.type=rmsnorm (value parsed as JSON)")
      ->allow_extra_args(false);
  sub->add_option("overrides", o->positional, "overrides as key.path=value (Hydra style)");
  sub->add_option("-o,--out", o->out, "run directory (default runs/<name>-<YYYYmmdd-HHMMSS>)");
  sub->add_flag("--print-config", o->print_config, "print the resolved config and exit");
  sub->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace nt::cli
