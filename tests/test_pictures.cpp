// The pictures of a run (stats.png, layers.png, ranges.png), of a sweep (sweep.png) and of
// `normtool compare` (loss.png, std.png): each exists and is not empty, and the data beside it
// (<stem>.tsv) holds the values of the run files it was drawn from.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "helpers.h"
#include "io/palette.h"
#include "io/plot.h"
#include "io/run_plots.h"
#include "norms/norms.h"

namespace nt {
namespace {

namespace fs = std::filesystem;
using test::run_normtool;
using test::TempDir;

// gnuplot runs in a process group of its own: a terminal's Ctrl-C, sent to normtool's group while
// the finished run draws its pictures, killed gnuplot with it and lost loss.png for good (the run
// was complete, so --resume had nothing to do). A stub gnuplot records its group and its parent's.
TEST(Pictures, GnuplotRunsInAProcessGroupOfItsOwn) {
  TempDir d;
  fs::create_directories(d / "bin");
  {
    std::ofstream stub(d / "bin/gnuplot");
    stub << "#!/bin/sh\necho \"$(cut -d' ' -f5 /proc/$$/stat) $(cut -d' ' -f5 /proc/$PPID/stat)\" >> " << (d / "groups")
         << "\nexit 1\n";
  }
  fs::permissions(d / "bin/gnuplot", fs::perms::owner_all);
  const auto r = test::run_shell("PATH=" + (d / "bin") + ":$PATH " + test::binary() + " run" + test::four_step_run() +
                                 " --out " + (d / "run"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(d / "groups");
  int lines = 0;
  for (long own, parent; in >> own >> parent; ++lines) EXPECT_NE(own, parent) << "gnuplot in normtool's group";
  EXPECT_GT(lines, 0) << "the stub never ran";
}

// <stem>.tsv: "# title" then rows of numbers, blocks apart by blank lines
std::map<std::string, std::vector<std::vector<double>>> read_tsv(const std::string& path) {
  std::map<std::string, std::vector<std::vector<double>>> blocks;
  std::ifstream in(path);
  std::string title;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) {
      title = line.substr(2);
      blocks[title];
    } else if (!line.empty()) {
      std::stringstream ss(line);
      std::vector<double> row;
      for (double v; ss >> v;) row.push_back(v);
      blocks[title].push_back(row);
    }
  }
  return blocks;
}

bool gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

void expect_picture(const fs::path& png) {
  if (!gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  ASSERT_TRUE(fs::exists(png)) << png;
  EXPECT_GT(fs::file_size(png), 2000u) << png;
}

std::string smoke(const std::string& name) { return test::source_dir() + "/configs/smoke/" + name; }

TEST(Pictures, AnMlpRunDrawsItsStatisticsByLayer) {
  TempDir tmp;
  const std::string run = tmp / "run";
  const auto r = run_normtool("run --config " + smoke("mlp-batchnorm.json") + " --out " + run);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_picture(fs::path(run) / "stats.png");
  const auto tsv = read_tsv(run + "/stats.tsv");
  ASSERT_TRUE(tsv.count("std leaving the norm (out): hidden")) << "an mlp's curve is one site by layer";
  EXPECT_EQ(tsv.at("std leaving the norm (out): hidden").size(), 2u);  // n_layers points
}

// A plain CSV file read here, apart from the code that draws: header -> column, then the rows.
struct Csv {
  std::map<std::string, std::size_t> column;
  std::vector<std::vector<std::string>> rows;
  double num(const std::vector<std::string>& row, const std::string& name) const {
    return std::stod(row.at(column.at(name)));
  }
};
Csv read_plain_csv(const std::string& path) {
  Csv t;
  std::ifstream in(path);
  std::string line;
  auto split = [](const std::string& l) {
    std::vector<std::string> cells;
    std::stringstream ss(l);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    return cells;
  };
  std::getline(in, line);
  const auto header = split(line);
  for (std::size_t i = 0; i < header.size(); ++i) t.column[header[i]] = i;
  while (std::getline(in, line))
    if (!line.empty()) t.rows.push_back(split(line));
  return t;
}

// the drawn data: (x, y) rows, to the printed precision (6 significant digits)
void expect_points(const std::vector<std::vector<double>>& drawn, const std::map<double, double>& want,
                   const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(drawn.size(), want.size());
  auto it = want.begin();
  for (const auto& row : drawn) {
    ASSERT_GE(row.size(), 2u);
    EXPECT_EQ(row[0], it->first);
    EXPECT_NEAR(row[1], it->second, 1e-5 * std::max(1.0, std::abs(it->second)));
    ++it;
  }
}

// Every transformer picture's data (stats.tsv, layers.tsv, ranges.tsv) against the run files it
// was drawn from, recomputed here: layers.jsonl's per-parameter gradient norms combined per layer,
// ranges.csv's largest |x| over positions and its mean SNR, stats.csv's std by position.
TEST(Pictures, ATransformerRunsPicturesHoldItsRunFilesValues) {
  TempDir tmp;
  const std::string run = tmp / "run";
  ASSERT_EQ(run_normtool("run --config " + smoke("lm-layernorm-pre.json") + " --out " + run).exit_code, 0);

  std::map<int, std::map<double, double>> layer_sq;  // layer -> step -> sum of squared gradient norms
  for (const auto& j : test::read_jsonl(run + "/layers.jsonl"))
    if (j["grad_norm"].is_number())
      layer_sq[j["layer"].get<int>()][j["step"].get<double>()] += std::pow(j["grad_norm"].get<double>(), 2);
  const auto layers = read_tsv(run + "/layers.tsv");
  ASSERT_EQ(layer_sq.size(), 3u);  // two blocks and the output layer
  for (auto& [layer, steps] : layer_sq) {
    for (auto& [step, sq] : steps) sq = std::sqrt(sq);
    expect_points(layers.at(fmt::format("gradient norm of each layer's parameters: layer {}", layer)), steps,
                  fmt::format("layers.tsv, layer {}", layer));
  }

  const Csv ranges = read_plain_csv(run + "/ranges.csv");
  double last = 0;
  for (const auto& r : ranges.rows) last = std::max(last, ranges.num(r, "step"));
  std::map<std::string, std::map<double, double>> largest, snr;  // site -> layer -> value
  std::map<std::string, std::map<double, int>> positions;
  for (const auto& r : ranges.rows) {
    if (ranges.num(r, "step") != last) continue;
    const std::string site = r.at(ranges.column.at("site"));
    const double layer = ranges.num(r, "layer");
    double& m = largest[site].try_emplace(layer, 0.0).first->second;
    m = std::max(m, ranges.num(r, "max_abs"));
    snr[site][layer] += ranges.num(r, "int8_snr_db");
    ++positions[site][layer];
  }
  ASSERT_TRUE(largest.count("ffn.out"));
  const auto drawn = read_tsv(run + "/ranges.tsv");
  for (auto& [site, by_layer] : largest) {
    expect_points(drawn.at("largest |x|: " + site), by_layer, "ranges.tsv, largest |x| at " + site);
    if (site == "final.in") continue;  // a zero-variance position has no finite SNR: checked where all are finite
    for (auto& [layer, sum] : snr[site]) sum /= positions[site][layer];
    expect_points(drawn.at("int8 SNR, one absmax scale per token: " + site), snr[site], "ranges.tsv, SNR at " + site);
  }

  const Csv stats = read_plain_csv(run + "/stats.csv");
  last = 0;
  for (const auto& r : stats.rows) last = std::max(last, stats.num(r, "step"));
  std::map<double, double> std_by_position;
  for (const auto& r : stats.rows)
    if (stats.num(r, "step") == last && stats.num(r, "layer") == 1 && r.at(stats.column.at("site")) == "ffn.out")
      std_by_position[stats.num(r, "position")] = stats.num(r, "std");
  ASSERT_EQ(std_by_position.size(), 32u);  // the smoke config's positions
  expect_points(read_tsv(run + "/stats.tsv").at("std leaving the norm (out): layer 1 ffn"), std_by_position,
                "stats.tsv, std leaving layer 1's ffn norm");

  for (const char* png : {"stats.png", "layers.png", "ranges.png"}) expect_picture(fs::path(run) / png);
}

// sweep.tsv: per grid point, the mean over its seeds' validation losses at each step, and the band
// of every picture, the 95% Student-t interval of that mean, recomputed from the jobs' metrics.jsonl.
TEST(Pictures, ASweepDrawsTheMeanAndItsIntervalOverSeedsOfItsRunsValidationLoss) {
  TempDir tmp;
  const std::string out = tmp / "sweep";
  const auto r = run_normtool("sweep --config " + smoke("lm-layernorm-pre.json") +
                              " model.norm.type=layernorm,rmsnorm seed=1,2 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<double, std::vector<double>> rms;  // step -> the rmsnorm jobs' validation losses
  const auto sweep = test::read_json(out + "/sweep.json");
  for (const auto& job : sweep["jobs"]) {
    if (job["overrides"]["model.norm.type"] != "rmsnorm") continue;
    for (const auto& m : test::read_jsonl(out + "/" + std::to_string(job["index"].get<int>()) + "/metrics.jsonl"))
      if (m["split"] == "val") rms[m["step"].get<double>()].push_back(m["loss"].get<double>());
  }
  ASSERT_EQ(rms.size(), 3u);  // steps 0, 30, 60
  std::map<double, double> mean, lo, hi;
  for (const auto& [step, v] : rms) {
    ASSERT_EQ(v.size(), 2u);
    const double m = (v[0] + v[1]) / 2, sd = std::abs(v[0] - v[1]) / std::sqrt(2.0);
    const double half = 12.706204736 * sd / std::sqrt(2.0);  // t_{0.975, 1 df} sd / sqrt(n)
    mean[step] = m, lo[step] = m - half, hi[step] = m + half;
  }
  const auto drawn = read_tsv(out + "/sweep.tsv");
  const auto& curve = drawn.at("model.norm.type=rmsnorm (2 runs)");
  expect_points(curve, mean, "sweep.tsv, mean");
  std::vector<std::vector<double>> lows, highs;
  for (const auto& row : curve) {
    ASSERT_EQ(row.size(), 4u);
    lows.push_back({row[0], row[2]});
    highs.push_back({row[0], row[3]});
  }
  expect_points(lows, lo, "sweep.tsv, the interval's low");
  expect_points(highs, hi, "sweep.tsv, the interval's high");
  expect_picture(fs::path(out) / "sweep.png");
}

TEST(Pictures, CompareLaysRunsSideBySide) {
  TempDir tmp;
  const std::string a = tmp / "ln", b = tmp / "rms", out = tmp / "cmp";
  ASSERT_EQ(run_normtool("run --config " + smoke("lm-layernorm-pre.json") + " --out " + a).exit_code, 0);
  ASSERT_EQ(
      run_normtool("run --config " + smoke("lm-layernorm-pre.json") + " model.norm.type=rmsnorm --out " + b).exit_code,
      0);
  const auto r = run_normtool("compare " + a + " " + b + " --site ffn.out --layer 1 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // the table: the differing key, each run's value of it, and the final figures
  EXPECT_NE(r.output.find("| run | model.norm.type |"), std::string::npos) << r.output;
  const auto summary = test::read_json(b + "/summary.json");
  EXPECT_NE(
      r.output.find(fmt::format("| rms | rmsnorm | completed | 60 | {:.4f} | {:.4f} |",
                                summary["final_train_loss"].get<double>(), summary["final_val_loss"].get<double>())),
      std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("seed"), std::string::npos) << "keys that agree are left out";
  expect_picture(fs::path(out) / "loss.png");
  expect_picture(fs::path(out) / "std.png");
  // loss.tsv: each run's validation losses; std.tsv: each run's std by position at layer 1 ffn.out
  const auto loss = read_tsv(out + "/loss.tsv");
  const auto& val = loss.at("validation loss: type=rmsnorm");  // curves labelled by the differing key
  ASSERT_FALSE(val.empty());
  EXPECT_EQ(val.back()[0], 60);
  EXPECT_NEAR(val.back()[1], summary["final_val_loss"].get<double>(), 1e-5);
  const CsvTable stats = read_csv(a + "/stats.csv");
  const auto profile = site_profiles(stats, last_step(stats), "std").at({1, "ffn.out"});
  const auto std_tsv = read_tsv(out + "/std.tsv");
  const auto& curve =
      std_tsv.at(fmt::format("std by position, layer 1 ffn.out: type=layernorm (step {})", last_step(stats)));
  ASSERT_EQ(curve.size(), profile.size());
  EXPECT_NEAR(curve[5][1], profile[5].second, 1e-5);
  std::ifstream md(fs::path(out) / "compare.md");
  EXPECT_TRUE(md.good());
}

TEST(Pictures, CompareReadsAnyToolsRunDirectoryAndRefusesAMissingOne) {
  TempDir tmp;
  // a run directory of another tool: config.json, metrics.jsonl, summary.json, no stats.csv
  const std::string other = tmp / "other", out = tmp / "cmp";
  fs::create_directories(other);
  std::ofstream(other + "/config.json") << R"({"name": "other", "model": {"norm": {"type": "rmsnorm"}}})";
  std::ofstream(other + "/metrics.jsonl") << R"({"step": 0, "split": "train", "loss": 5.5})"
                                          << "\n"
                                          << R"({"step": 10, "split": "val", "loss": 4.25})"
                                          << "\n";
  std::ofstream(other + "/summary.json") << R"({"status": "completed", "steps_completed": 10, "final_val_loss": 4.25})";
  const std::string ours = tmp / "ours";
  ASSERT_EQ(run_normtool("run --config " + smoke("lm-none-pre.json") + " --out " + ours).exit_code, 0);
  const auto r = run_normtool("compare " + ours + " " + other + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| other | -"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| rmsnorm | - |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("4.2500"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no stats.csv"), std::string::npos) << r.output;
  // labelled by the one key both runs have and differ in
  EXPECT_EQ(read_tsv(out + "/loss.tsv").at("validation loss: type=rmsnorm").at(0), (std::vector<double>{10, 4.25}));

  // runs that logged no statistics: said so, with the key that turns them on
  const std::string quiet = tmp / "quiet";
  ASSERT_EQ(
      run_normtool("run --config " + smoke("lm-none-pre.json") + " --set train.stats_every=0 --out " + quiet).exit_code,
      0);
  const auto none = run_normtool("compare " + quiet + " " + other + " --out " + (tmp / "cmp2"));
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_NE(none.output.find(quiet + ": stats.csv has no .out site at layer 0 (no such layer, or none logged: "
                                     "train.stats_every 0)"),
            std::string::npos)
      << none.output;

  const auto missing = run_normtool("compare " + ours + " " + (tmp / "nowhere") + " --out " + out);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find(tmp / "nowhere"), std::string::npos) << missing.output;
  fs::create_directories(tmp / "empty");
  const auto empty = run_normtool("compare " + (tmp / "empty") + " --out " + out);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.output.find("config.json"), std::string::npos) << empty.output;
}

// One colour-blind-safe palette (Okabe & Ito), a fixed colour per norm: LayerNorm is blue and
// RMSNorm vermillion in every plot, so that the two can be told apart at a glance.
TEST(Palette, EveryNormHasItsOwnColourOfThePalette) {
  const std::set<std::string> okabe_ito{"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                        "#0072B2", "#D55E00", "#CC79A7", "#999999"};
  std::set<std::string> seen;
  for (NormType k : all_norm_types()) {
    const NormDesc& d = norm_desc(k);
    ASSERT_NE(d.color, nullptr) << d.name << " has no colour (norms/norms.h: NormDesc::color)";
    EXPECT_TRUE(okabe_ito.count(d.color)) << d.name << ": " << d.color;
    EXPECT_TRUE(seen.insert(d.color).second) << d.name << " shares its colour " << d.color;
  }
  EXPECT_EQ(norm_desc(NormType::layernorm).color, std::string("#0072B2"));
  EXPECT_EQ(norm_desc(NormType::rmsnorm).color, std::string("#D55E00"));
}

TEST(Palette, ACurveNamingOneNormIsDrawnInItsColour) {
  EXPECT_EQ(norm_named_in("rmsnorm"), "rmsnorm");
  EXPECT_EQ(norm_named_in("model.norm.type=rmsnorm seed=2"), "rmsnorm");
  EXPECT_EQ(norm_named_in("none (3 runs)"), "none");
  EXPECT_EQ(norm_named_in("layernorm over rmsnorm"), "");  // two norms: neither
  EXPECT_EQ(norm_named_in("Post-LN, warm-up"), "");
  const auto pens = pens_for({"none", "layernorm", "rmsnorm", "validation"});
  EXPECT_EQ(pens[0].color, "#000000");
  EXPECT_EQ(pens[1].color, "#0072B2");
  EXPECT_EQ(pens[2].color, "#D55E00");
  EXPECT_EQ(pens[3].color, "#009E73");  // the palette's first colour the plot does not use yet
  // two curves of one norm are told apart by the palette, not both drawn in the norm's colour
  const auto two = pens_for({"layernorm pre", "layernorm post"});
  EXPECT_NE(two[0].color, two[1].color);
  // past the eight colours, dashes; an explicit colour is kept
  std::vector<std::string> many;
  for (int i = 0; i < 9; ++i) many.push_back(fmt::format("curve {}", i));
  const auto nine = pens_for(many, {"", "", "", "", "", "", "", "", "#123456"});
  EXPECT_EQ(nine[8].color, "#123456");
  std::set<std::string> first_eight;
  for (std::size_t i = 0; i < 8; ++i) {
    first_eight.insert(nine[i].color);
    EXPECT_EQ(nine[i].dash, 1);
  }
  EXPECT_EQ(first_eight.size(), 8u);
}

// The script gnuplot gets: the key outside the data, the norms' colours, integer ticks on a layer axis
TEST(Palette, APlotsScriptPutsItsKeyOutsideAndColoursByNorm) {
  TempDir tmp;
  const std::vector<Curve> curves{{"layernorm", {{1, 1.0}, {2, 2.0}, {24, 3.0}}, {}},
                                  {"rmsnorm", {{1, 1.5}, {2, 2.5}, {24, 3.5}}, {}}};
  std::filesystem::create_directories(tmp.path);
  plot_curves(tmp.str(), "p", PlotStyle{.title = "t", .xlabel = "layer"}, curves);
  std::ifstream in(tmp / "p.gp");
  const std::string gp((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(gp.find("set key outside"), std::string::npos) << gp;
  EXPECT_NE(gp.find("linecolor rgb '#0072B2'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("linecolor rgb '#D55E00'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xtics 2\n"), std::string::npos) << gp;  // 24 layers: a tick every 2
}

// A scatter: a dots curve is drawn with points alone, a line curve beside it with its line
TEST(Palette, ADotsCurveIsDrawnAsPointsWithoutALine) {
  TempDir tmp;
  std::vector<Curve> curves{{"layernorm", {{-1, -0.9}, {0, 0.1}, {1, 0.8}}, {}}, {"fit", {{-1, -1.0}, {1, 1.0}}, {}}};
  curves[0].dots = true;
  std::filesystem::create_directories(tmp.path);
  plot_curves(tmp.str(), "p", PlotStyle{.title = "t", .xlabel = "x"}, curves);
  std::ifstream in(tmp / "p.gp");
  const std::string gp((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto dots = gp.find("index 0 using 1:2 with points pointtype 7");
  const auto line = gp.find("index 1 using 1:2 with linespoints");
  EXPECT_NE(dots, std::string::npos) << gp;
  EXPECT_NE(line, std::string::npos) << gp;
  EXPECT_EQ(gp.find("with points", line), std::string::npos) << gp;  // the fit keeps its line
}

TEST(Version, NamesTheCommit) {
  const auto r = run_normtool("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("(commit "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace nt
