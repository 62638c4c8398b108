// `normtool presets`: the presets of configs/presets/, their table and their sources (presets.h).
#include "cli/presets.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "config/config.h"
#include "core/errors.h"
#include "core/read_file.h"
#include "io/paths.h"
#include "norms/norms.h"

namespace nt::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Preset {
  std::string name;  // the file's stem
  std::string file;
  json sources;    // the file's "_sources"
  json file_json;  // the file as written (what it sets explicitly)
  json config;     // the resolved config (config_to_json)
};

// A key of the resolved config, "" when this build of normtool has no such key.
const json* find_key(const json& j, const std::string& path) {
  const json* node = &j;
  std::stringstream parts(path);
  for (std::string k; std::getline(parts, k, '.');) {
    if (!node->is_object() || !node->contains(k)) return nullptr;
    node = &(*node)[k];
  }
  return node;
}

std::string family(const json& c) { return c["model"]["arch"].get<std::string>(); }
bool recurrent(const json& c) { return family(c) == "rnn" || family(c) == "rnnsearch"; }

// The keys that decide what a norm sees, in the order a preset's citations are listed; each
// preset sets and cites every one that applies to it (tests/test_presets.cpp holds them to it).
const char* const kNormKeys[] = {"model.arch",
                                 "model.norm.type",
                                 "model.norm.placement",
                                 "model.norm.eps",
                                 "model.norm.affine",
                                 "model.norm.bias",
                                 "model.bias",
                                 "model.embed_norm",
                                 "model.final_norm",
                                 "model.norm.alpha",
                                 "model.norm.beta",
                                 "model.init",
                                 "model.init_std",
                                 "model.position",
                                 "model.ffn",
                                 "model.tie_embeddings",
                                 "model.scaled_residual_init"};

std::string presets_dir() { return (fs::path(data_dir()) / "configs" / "presets").string(); }

std::vector<Preset> load_presets() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(presets_dir()))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<Preset> presets;
  for (const fs::path& f : files) {
    Preset p;
    p.name = f.stem().string();
    p.file = f.string();
    p.file_json = json::parse(read_file(p.file, kMaxDocumentBytes), nullptr, false);
    if (!p.file_json.is_object()) throw InputError(fmt::format("{}: not a JSON object", p.file));
    p.sources = p.file_json.value("_sources", json::object());
    p.config = config_to_json(load_config_file(p.file, {}));
    presets.push_back(std::move(p));
  }
  return presets;
}

std::string known_names(const std::vector<Preset>& presets) {
  std::string s;
  for (const auto& p : presets) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

std::string number(double v) { return fmt::format("{:.4g}", v); }
std::string yes_no(bool b) { return b ? "yes" : "no"; }

// The table's cells, from the resolved config. Keys this build has not got read as normtool's
// fixed behaviour (every Linear with a bias, no embedding norm).
std::vector<std::string> row(const Preset& p) {
  const json& c = p.config;
  const json& m = c["model"];
  const json& n = m["norm"];
  const std::string type = n["type"];
  const NormDesc& norm = norm_desc(norm_type_named(type));
  const bool rec = recurrent(c);
  const json* linear_bias = find_key(c, "model.bias");
  const json* norm_bias = find_key(c, "model.norm.bias");
  const json* embed_norm = find_key(c, "model.embed_norm");
  std::string norm_params = "none";
  if (n["affine"].get<bool>())
    norm_params = norm.bias != ParamShape::absent && (!norm_bias || norm_bias->get<bool>()) ? "gain, bias" : "gain";
  if (n.value("unit_offset", false)) norm_params += " (1 + w)";
  const std::string biases =
      fmt::format("Linear {}; norm {}", linear_bias ? yes_no(linear_bias->get<bool>()) : "yes", norm_params);
  std::string final_norm = "-";
  if (!rec) final_norm = yes_no(n["placement"] != "post" && !norm.scaled_residual && m["final_norm"].get<bool>());
  if (final_norm == "yes" && family(c) == "encoder-decoder") final_norm = "yes, both stacks";
  std::string init = m["init"].get<std::string>();
  if (init == "normal") init += " " + number(m["init_std"].get<double>());
  return {p.name,
          family(c),
          rec ? "-" : (norm.scaled_residual ? fmt::format("post ({})", type) : n["placement"].get<std::string>()),
          norm.applies ? norm.applies : type,
          number(n["eps"].get<double>()),
          biases,
          rec ? "-" : yes_no(embed_norm && embed_norm->get<bool>()),
          final_norm,
          norm.scaled_residual ? number(n["alpha"].get<double>()) + " / " + number(n["beta"].get<double>()) : "-",
          init,
          p.sources.value("repo", "")};
}

const std::vector<std::string> kColumns = {
    "preset", "family", "placement", "norm", "eps", "biases", "embedding norm", "final norm", "DeepNorm alpha / beta",
    "init",   "source"};

std::string markdown_table(const std::vector<Preset>& presets) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + c + " |";
    return s + "\n";
  };
  std::string out = line(kColumns);
  out += line(std::vector<std::string>(kColumns.size(), "---"));
  for (const auto& p : presets) out += line(row(p));
  return out;
}

std::string text_table(const std::vector<Preset>& presets) {
  std::vector<std::vector<std::string>> rows = {kColumns};
  for (const auto& p : presets) rows.push_back(row(p));
  std::vector<std::size_t> width(kColumns.size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i + 1 < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i)
      line += i + 1 < r.size() ? fmt::format("{:<{}}  ", r[i], width[i]) : r[i];
    out += line + "\n";
  }
  return out;
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// One preset's values with their citations: the keys it cites, in kNormKeys' order first.
std::string cited_values(const Preset& p, const std::string& bullet) {
  std::string out;
  const json keys = p.sources.value("keys", json::object());
  std::vector<std::string> order;
  for (const char* k : kNormKeys)
    if (keys.contains(k)) order.push_back(k);
  for (const auto& [k, v] : keys.items())
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  for (const std::string& k : order) {
    const json* v = find_key(p.config, k);
    out += fmt::format("{}`{}` = {}: {}\n", bullet, k, v ? value_text(*v) : "(not in this build)",
                       keys[k].get<std::string>());
  }
  return out;
}

std::string markdown(const std::vector<Preset>& presets) {
  std::string out = markdown_table(presets);
  for (const auto& p : presets) {
    out += fmt::format("\n### {}\n\n{}; code read: {}.\n\n", p.name, p.sources.value("system", ""),
                       p.sources.value("code", ""));
    out += cited_values(p, "- ");
    out += fmt::format("\nNot mirrored: {}.\n\nPaper and code: {}.\n", p.sources.value("not_mirrored", "-"),
                       p.sources.value("disagreements", "-"));
  }
  return out;
}

struct PresetsOptions {
  std::string name;
  std::string format = "table";
  bool json = false, text = false;  // NAME: JSON only, or the config with its citations
};

// A preset as a config file of its own: the resolved config and its "_sources" (which a config
// may carry: config.h), valid JSON and nothing else, for `presets NAME > mine.json`.
json preset_file(const Preset& p) {
  json j = p.config;
  j["_sources"] = p.sources;
  return j;
}

int run_presets(const PresetsOptions& o) {
  const std::vector<Preset> presets = load_presets();
  if (o.name.empty()) {
    if (o.json || o.text)
      throw UsageError(fmt::format("presets: {} prints one preset: give its name", o.json ? "--json" : "--text"));
    fmt::print("{}", o.format == "markdown" ? markdown(presets) : text_table(presets));
    return 0;
  }
  auto it = std::find_if(presets.begin(), presets.end(), [&](const Preset& p) { return p.name == o.name; });
  if (it == presets.end())
    throw UsageError(fmt::format("unknown preset \"{}\" (known: {})", o.name, known_names(presets)));
  if (o.json && o.text) throw UsageError("presets: --json or --text, not both");
  if (o.json || (!o.text && !isatty(fileno(stdout)))) {
    fmt::print("{}\n", preset_file(*it).dump(2));
    return 0;
  }
  fmt::print("{}\n\n{} ({})\ncode read: {}\n{}not mirrored: {}\npaper and code: {}\n", it->config.dump(2),
             it->sources.value("system", ""), it->file, it->sources.value("code", ""), cited_values(*it, "  "),
             it->sources.value("not_mirrored", "-"), it->sources.value("disagreements", "-"));
  return 0;
}

}  // namespace

void setup_presets(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<PresetsOptions>();
  CLI::App* sub = app.add_subcommand(
      "presets", "The literature's systems as configs (configs/presets/): their normalization and where it comes from");
  sub->add_option("name", o->name, "a preset: print its resolved config and its sources");
  sub->add_option("-f,--format", o->format, "table, or markdown (the generated part of docs/presets.md)")
      ->check(CLI::IsMember({"table", "markdown"}))
      ->capture_default_str();
  sub->add_flag("--json", o->json,
                "with a name: the preset as JSON only, a config file of its own (the default when "
                "stdout is not a terminal)");
  sub->add_flag("--text", o->text, "with a name: its config and its citations as text, even into a pipe");
  sub->callback([o, &exit_code] { exit_code = run_presets(*o); });
}

}  // namespace nt::cli
