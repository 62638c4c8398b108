// What `normtool compare` compares (cli/compare.h): the runs its arguments name, read from their
// files, labelled by the config keys in which they differ, and, when an argument is a sweep
// directory, grouped by grid point with the mean over seeds and its 95% t band per step.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analysis/seed_band.h"
#include "io/run_index.h"

namespace nt::cli {

struct Run {
  std::string dir;
  std::string name;   // the folder's name, numbered when two agree: the table's "run" column
  std::string label;  // the curves': the differing keys' values ("norm.type=rmsnorm seed=2"), else the name
  nlohmann::json config, summary;
  RunEntry record;  // the config flattened
  std::vector<std::pair<double, double>> train, val;
};

// The runs of one grid point (every differing key but seed the same): the mean over its seeds.
struct Group {
  std::string label;
  std::vector<std::size_t> runs;
  SeedBand train, val;
};

// The runs the arguments name: a run directory is one; any other directory (a sweep's, a folder of
// runs) stands for the run directories under it (io/run_index.h) and makes `grouped` true. A
// missing directory, or one without runs, is a UsageError naming it; so is a run directory named
// twice (by device and inode).
std::vector<Run> read_runs(const std::vector<std::string>& args, bool& grouped);
// Each run's label: the values of the keys in which the runs differ and that every run has (a
// foreign tool's run may lack most), under their shortest unambiguous names; the folder's name
// when there is no such key or more than four; numbered when two agree.
void label_runs(std::vector<Run>& runs);
// The grid points: runs equal in every differing key but seed, in the order of their first run.
// Two runs of one point with the same seed are a UsageError naming both.
std::vector<Group> make_groups(const std::vector<Run>& runs);

}  // namespace nt::cli
