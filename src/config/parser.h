// Inside config/: a config leaf (Field), the Parser that walks a user's JSON over the list of
// fields (config.cpp's fields_of) collecting every problem, and overrides. The rest of the program
// reads config.h.
#pragma once
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nt {

// One leaf of the config: its dotted path, how to read a JSON value into the struct (returning
// the problem, if any) and how to write it back. The list in config.cpp (fields_of) is the single
// source of truth for keys, types and ranges.
struct Field {
  std::string path;
  std::function<std::optional<std::string>(const nlohmann::json&)> set;
  std::function<nlohmann::json()> get;
  std::string type, range;  // for docs/config.md: "integer", ">= 1 and <= 4096"
  std::string meaning;      // what the key does, one or two sentences (docs/config.md, `normtool config`)
  void means(std::string text) { meaning = std::move(text); }
};

// Sets the fields from a user's JSON, one layer after another (the files, then the overrides:
// config.h's ConfigInputs), later layers winning key by key. Every problem is collected with its
// key path and where it came from; an unknown key gets the nearest known one as a suggestion.
class Parser {
 public:
  explicit Parser(std::vector<Field>& fields);

  // Sets the keys of one layer, each recorded as coming from `source` (a file, "override", "--set").
  void walk(const nlohmann::json& layer, const std::string& source);
  // A problem of `path`: while a layer is walked, blamed on that layer; after (validate.cpp), on
  // the layers that set `path` and the keys `what` names ("default" for a key none set).
  void problem(const std::string& path, const std::string& what);
  std::vector<std::string>& problems() { return problems_; }
  // The layer that set `path`, "" when none did (its value is the default).
  std::string origin(const std::string& path) const;
  const std::map<std::string, std::string>& origins() const { return origins_; }
  // The place of that layer in the order of precedence (0 the first file), -1 for a default.
  int layer(const std::string& path) const;

 private:
  void walk_object(const nlohmann::json& node, const std::string& prefix);
  std::string suggestion(const std::string& prefix, const std::string& key) const;
  std::string blame(const std::string& path, const std::string& what) const;

  std::string walking_;  // the source of the layer being walked, "" after
  std::map<std::string, Field*> leaves_;
  std::set<std::string> objects_;
  std::map<std::string, std::string> origins_;
  std::map<std::string, int> layers_;
  int walked_ = 0;  // layers walked so far
  std::vector<std::string> problems_;
};

// Puts an override "a.b.c=value" into the config JSON; the walk validates it like file keys.
// The value is JSON when it parses as JSON, else a plain string (model.norm.type=rmsnorm).
// Returns the problem, if any, naming the override as `kind` ("override", "--set"); `path` gets
// the override's key path.
std::optional<std::string> apply_override(nlohmann::json& root, const std::string& text, std::string& path,
                                          const std::string& kind = "override");

struct RunConfig;
// The checks across keys (validate.cpp), after every key parsed without a problem.
void validate_combinations(RunConfig& c, Parser& p);
// A key that this config does not read, set after the key that decides it (unread_keys.cpp).
void refuse_unread_keys(const RunConfig& c, Parser& p);

}  // namespace nt
