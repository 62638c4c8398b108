#include "config/config.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "config/field_kinds.h"
#include "config/parser.h"
#include "config/user_json.h"
#include "core/read_file.h"

// A config composed of layers (config.h: ConfigInputs): the files in order, the positional
// overrides, then --set, walked over the defaults of the field table (config.cpp), then the checks
// across keys (validate.cpp) and the intervals a short run leaves unset.
namespace nt {

using json = nlohmann::json;

namespace {

// A layer of a config: a file's JSON or the overrides of one kind, and what its errors name.
struct Layer {
  json value;
  std::string source;
};

// A config file's text as a layer; its problem, if any, goes to `problems`.
std::optional<Layer> file_layer(const std::string& text, const std::string& source,
                                std::vector<std::string>& problems) {
  UserJson parsed = parse_user_json(text);
  if (!parsed.problem.empty()) {
    problems.push_back(parsed.syntax ? fmt::format("{}: {}", source, parsed.problem)
                                     : fmt::format("{} ({})", parsed.problem, source));
    return std::nullopt;
  }
  json& user = parsed.value;
  if (!user.is_object()) {
    problems.push_back(fmt::format("{}: expected a JSON object at the top", source));
    return std::nullopt;
  }
  // "_sources" at the top is a config's citations (configs/presets/, cli/presets.h): never read as config
  if (auto it = user.find("_sources"); it != user.end()) {
    if (!it->is_object()) {
      problems.push_back(fmt::format("_sources: expected an object of citations, got {} ({})", describe_json(*it), source));
      return std::nullopt;
    }
    user.erase(it);
  }
  return Layer{std::move(user), source};
}

// The overrides of one kind ("override", "--set") as a layer, a later one of a key winning.
Layer override_layer(const std::vector<std::string>& overrides, const std::string& kind,
                     std::vector<std::string>& problems) {
  Layer layer{json::object(), kind};
  for (const auto& o : overrides) {
    std::string path;
    if (auto err = apply_override(layer.value, o, path, kind)) problems.push_back(*err);
  }
  return layer;
}

// A run shorter than its intervals' defaults assume gets them scaled to its steps, where no file
// or override gives them: at least 50 train lines, 10 evaluations and 10 statistics steps, never
// less often than the defaults (a 100-step run logs every 2 steps, evaluates every 10).
void scale_unset_intervals(TrainConfig& t, const std::map<std::string, std::string>& given,
                           ConfigOrigins* origins) {
  struct Every {
    const char* key;
    int* value;
    int per;  // the run's steps / per at the most
  };
  for (auto [key, value, per] : {Every{"train.log_every", &t.log_every, 50},
                                 Every{"train.eval_every", &t.eval_every, 10},
                                 Every{"train.stats_every", &t.stats_every, 10}}) {
    if (given.count(key) || *value == 0 || t.steps / per >= *value) continue;
    *value = std::max(1, t.steps / per);
    if (origins) (*origins)[key] = "scaled to train.steps";
  }
}

// The layers walked in order over the defaults, then the checks across keys.
RunConfig resolve(const std::vector<Layer>& layers, std::vector<std::string> problems, const std::string& name_source,
                  ConfigOrigins* origins) {
  RunConfig c;
  auto fields = fields_of(c);
  Parser parser(fields);
  parser.problems() = std::move(problems);  // an override that is not key.path=value, then the keys' own
  for (const Layer& l : layers) parser.walk(l.value, l.source);
  if (parser.problems().empty()) validate_combinations(c, parser);
  if (!parser.problems().empty()) throw ConfigError(parser.problems());
  if (c.name.empty()) c.name = name_source.empty() ? "run" : name_from_file(name_source);
  if (origins) *origins = parser.origins();
  scale_unset_intervals(c.train, parser.origins(), origins);
  return c;
}

std::string read_config_file(const std::string& path) {
  try {
    return read_file(path, kMaxDocumentBytes);  // a FIFO or /dev/zero is refused, not read forever
  } catch (const InputError& e) {               // "<path>: <why>"
    const std::string what = e.what(), why = what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : what;
    throw ConfigError({fmt::format("{}: cannot read the config file: {}", path, why)});
  }
}

}  // namespace

RunConfig load_config(const std::string& text, const std::string& source, const std::vector<std::string>& overrides) {
  std::vector<std::string> problems;
  std::vector<Layer> layers;
  if (auto l = file_layer(text, source, problems)) layers.push_back(std::move(*l));
  if (!problems.empty()) throw ConfigError(problems);  // the file's own problem first, alone
  layers.push_back(override_layer(overrides, "override", problems));
  return resolve(layers, problems, source, nullptr);
}

RunConfig load_config_file(const std::string& path, const std::vector<std::string>& overrides) {
  if (path.empty()) return load_configs({{}, overrides, {}});
  return load_config(read_config_file(path), path, overrides);
}

RunConfig load_configs(const ConfigInputs& in, ConfigOrigins* origins) {
  std::vector<std::string> problems;
  std::vector<Layer> layers;
  for (const std::string& f : in.files)
    if (auto l = file_layer(read_config_file(f), f, problems)) layers.push_back(std::move(*l));
  if (!problems.empty()) throw ConfigError(problems);
  layers.push_back(override_layer(in.overrides, "override", problems));
  layers.push_back(override_layer(in.sets, "--set", problems));
  return resolve(layers, problems, in.files.empty() ? "" : in.files.back(), origins);
}

}  // namespace nt
