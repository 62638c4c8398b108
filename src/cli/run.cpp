// `normtool run`: resolve the config, load the data, create the run directory, train.
// `normtool run --resume DIR`: continue a stopped run from its checkpoint (train/checkpoint.h).
// Exit status: 0 completed (or, resumed, already finished); 1 diverged or failed (files still
// written); 2 bad usage, config or data, found before anything is written (main.cpp), or a
// checkpoint that does not fit; 130 interrupted by SIGINT or SIGTERM (summary says
// "interrupted", a checkpoint is written).
#include "cli/run.h"
#include "cli/directory_option.h"
#include "norms/norms.h"

#include <cstdio>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "config/arch.h"
#include "config/config.h"
#include "norms/norm_kind.h"
#include "core/errors.h"
#include "core/machine.h"
#include "core/threads.h"
#include "io/console.h"
#include "io/files.h"
#include "io/paths.h"
#include "io/run_files.h"
#include "train/checkpoint.h"
#include "train/memory.h"
#include "train/session.h"
#include "train/trainer.h"

namespace nt::cli {

namespace {

struct RunOptions {
  std::vector<std::string> configs;     // --config, in order, later files winning key by key
  std::vector<std::string> sets;        // --set key.path=value
  std::vector<std::string> positional;  // key.path=value
  std::string out;
  std::string resume;         // a run directory to continue
  bool resume_given = false;  // --resume was on the command line (even as '')
  bool print_config = false;
  bool sources = false;  // --print-config --sources
};

// The status summary.json gives the run in dir ("" when there is none or it does not parse).
std::string recorded_status(const std::string& dir, int& steps) {
  const nlohmann::json s = read_summary(dir);
  if (!s.is_object()) return "";
  steps = s.value("steps_completed", 0);
  return s.value("status", "");
}

// A line on stdout that does not decide the exit code: a run's record is its directory, so a
// console that cannot be written (>/dev/full) loses the line and nothing else (main.cpp).
void advise(const std::string& line) { print_advice(line); }

// Prints the run's one-line result; returns its exit code.
int report(const RunConfig& config, const RunFiles& files, const TrainOutcome& r) {
  const auto& s = r.summary;
  if (!r.error.empty()) {
    eprint("error: {}: run failed at step {}: {}\n", printable(files.dir()), s["steps_completed"].get<int>(),
           printable(r.error));
    return r.exit_code;
  }
  auto num = [&](const char* k) { return s[k].is_number() ? fmt::format("{:.4f}", s[k].get<double>()) : "n/a"; };
  const int steps = s["steps_completed"].get<int>();
  advise(fmt::format("{}: {} after {} step{}: train loss {}, val loss {}{}, {} steps/s -> {}\n", config.name,
                     s["status"].get<std::string>(), steps, steps == 1 ? "" : "s", num("final_train_loss"),
                     num("final_val_loss"), s.contains("final_val_acc") ? ", val acc " + num("final_val_acc") : "",
                     s["steps_per_s"].is_number() ? fmt::format("{:.1f}", s["steps_per_s"].get<double>()) : "n/a",
                     printable(files.dir())));
  return r.exit_code;
}

void warn_threads(const RunConfig& config) {
  if (config.train.threads > max_math_threads())
    eprint("warning: train.threads = {} is more than 4 per core on this {}-core machine; using {}\n",
           config.train.threads, cpu_cores(), max_math_threads());
}

// The resolved config, and under "derived" what it resolves to beyond its own keys: DeepNorm's
// constants per stack (an encoder-decoder has two pairs, model.norm.alpha / beta one).
nlohmann::json with_derived(const RunConfig& c) {
  nlohmann::json j = config_to_json(c);
  if (!norm_desc(c.model.norm.type).scaled_residual) return j;
  auto pair = [](DeepNorm d) { return nlohmann::json{{"alpha", d.alpha}, {"beta", d.beta}}; };
  const Stacks stacks = arch_desc(c.model.arch).stacks;
  if (stacks == Stacks::encoder_decoder)
    j["derived"]["deepnorm"] = {{"encoder", pair(c.deepnorm(StackRole::encoder))},
                                {"decoder", pair(c.deepnorm(StackRole::decoder))}};
  else
    j["derived"]["deepnorm"] = {{stacks == Stacks::encoder ? "encoder" : "decoder", pair(c.deepnorm())}};
  return j;
}

// A SIGINT or SIGTERM while the data and the model were made: nothing was written (or changed)
int stopped_before_start(const std::string& run) {
  eprint("{}: stopped before training (SIGINT or SIGTERM); nothing written\n", printable(run));
  return 130;
}

// `run --resume DIR`: the run in DIR continues from its checkpoint, with DIR/config.json.
int resume(const RunOptions& o) {
  const std::string& dir = o.resume;
  if (!o.configs.empty() || !o.out.empty() || !o.sets.empty() || !o.positional.empty())
    throw UsageError(
        fmt::format("--resume {}: takes no --config, --out or overrides (the run continues with its own "
                    "config.json; start a new run to change it)",
                    dir));
  std::error_code ec;
  if (dir.empty()) throw UsageError("--resume: an empty directory name (give the run directory to continue)");
  if (!std::filesystem::is_directory(dir, ec)) throw UsageError(fmt::format("--resume {}: no such run directory", dir));
  const std::string config_file = (std::filesystem::path(dir) / "config.json").string();
  if (!std::filesystem::exists(std::filesystem::symlink_status(config_file, ec)))
    throw UsageError(fmt::format("--resume {}: no config.json there: not a run directory", dir));
  if (o.print_config) {  // what the run resumes with; nothing trains, nothing is written, no lock
    fmt::print("{}\n", with_derived(load_config_file(config_file, {})).dump(2));
    return 0;
  }
  // one normtool at a time in a run directory: a second --resume (or a sweep) is refused
  const DirectoryLock lock(dir, "--resume " + dir);
  const RunConfig config = load_config_file(config_file, {});
  int steps = 0;
  const std::string status = recorded_status(dir, steps);
  if (status == "completed" || status == "diverged") {
    advise(fmt::format("{}: already {} after {} step{}; nothing to resume\n", printable(dir), status, steps,
                       steps == 1 ? "" : "s"));
    return 0;
  }
  if (!has_checkpoint(dir))
    throw UsageError(
        fmt::format("--resume {}: no {} there: the run stopped before its first checkpoint "
                    "(train.checkpoint_every = {}; 0 writes one only when the run stops by itself, "
                    "by SIGINT or by SIGTERM); start it again",
                    dir, kCheckpointFile, config.train.checkpoint_every));
  check_memory(config);
  warn_threads(config);
  install_interrupt_handlers();  // from here a SIGINT or SIGTERM is exit 130, whenever it comes
  Session session(config);
  RunRecords records;
  const LogSizes sizes = load_checkpoint(dir, config_to_json(config), session, records);
  if (interrupt_requested()) return stopped_before_start(dir);
  ++records.resumes;
  std::optional<RunFiles> opened;
  try {
    opened.emplace(dir, sizes);
  } catch (const WriteError& e) {  // a read-only mount, a planted symlink: the directory cannot take the run
    throw UsageError(fmt::format("--resume {}: cannot write the run directory: {}", dir, e.what()));
  }
  RunFiles& files = *opened;
  eprint("{}: resuming at step {} of {}\n", printable(dir), session.steps_done(), config.train.steps);
  Progress progress(config.name, config.train.steps, config.train.log_every);
  return report(config, files, train(config, session, files, progress, std::move(records)));
}

int run(const RunOptions& o) {
  if (o.resume_given) return resume(o);
  ConfigInputs in{{}, o.positional, o.sets};
  for (const std::string& f : o.configs) in.files.push_back(find_config(f));
  ConfigOrigins origins;
  const RunConfig config = load_configs(in, &origins);
  if (o.print_config) {
    nlohmann::json j = with_derived(config);
    if (o.sources) j["sources"] = origins;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  check_memory(config);  // refused with the figures, before anything is allocated
  warn_threads(config);
  install_interrupt_handlers();  // from here a SIGINT or SIGTERM is exit 130, whenever it comes
  Session session(config);       // the data and the model, before anything is written
  if (interrupt_requested()) return stopped_before_start(o.out.empty() ? config.name : o.out);
  RunFiles files(o.out.empty() ? make_new_directory(default_run_dir(config.name)) : o.out);  // never an earlier's
  files.write_config(config_to_json(config));
  Progress progress(config.name, config.train.steps, config.train.log_every);
  return report(config, files, train(config, session, files, progress));
}

}  // namespace

void setup_run(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Train one model from a JSON config and record the run");
  sub->footer(
      "Precedence, later winning key by key: the defaults, each --config file in order, the positional "
      "overrides, then --set.");
  sub->add_option("-c,--config", o->configs,
                  "JSON config file (every key has a default; see configs/); repeat it to "
                  "layer files, a later one overriding an earlier one key by key")
      ->allow_extra_args(false);
  sub->add_option("-s,--set", o->sets,
                  "override a key: --set model.norm.type=rmsnorm (value parsed as JSON); wins "
                  "over the files and the positional overrides")
      ->allow_extra_args(false);
  sub->add_option("overrides", o->positional, "overrides as key.path=value (Hydra style), over the files");
  sub->add_option("-o,--out", o->out,
                  "run directory (default runs/<name>-<YYYYmmdd-HHMMSS>, with -2, -3, ... when that is taken)")
      ->check(non_empty_directory);
  CLI::Option* resume_option = sub->add_option(
      "--resume", o->resume, "continue the stopped run in this directory from its checkpoint (train.checkpoint_every)");
  CLI::Option* print_config =
      sub->add_flag("--print-config", o->print_config,
                    "print the resolved config (with \"derived\": the DeepNorm constants it resolves to) and exit");
  sub->add_flag("--sources", o->sources,
                "with --print-config: add \"sources\", where each key that is not a default "
                "got its value (a file, \"override\" or \"--set\")")
      ->needs(print_config);
  sub->callback([o, resume_option, &exit_code] {
    o->resume_given = resume_option->count() > 0;
    exit_code = run(*o);
  });
}

}  // namespace nt::cli
