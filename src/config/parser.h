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

// Sets the fields from a user's JSON, collecting every problem with its key path and where it
// came from (the file, or "override"); an unknown key gets the nearest known one as a suggestion.
class Parser {
 public:
  Parser(std::vector<Field>& fields, std::string source);

  void override_path(const std::string& path) { overridden_.insert(path); }
  void problem(const std::string& path, const std::string& what);
  std::vector<std::string>& problems() { return problems_; }

  void walk(const nlohmann::json& node, const std::string& prefix);

 private:
  std::string suggestion(const std::string& prefix, const std::string& key) const;

  std::string source_;
  std::map<std::string, Field*> leaves_;
  std::set<std::string> objects_;
  std::set<std::string> overridden_;
  std::vector<std::string> problems_;
};

// Puts an override "a.b.c=value" into the config JSON; the walk validates it like file keys.
// The value is JSON when it parses as JSON, else a plain string (model.norm.type=rmsnorm).
// Returns the problem, if any; `path` gets the override's key path.
std::optional<std::string> apply_override(nlohmann::json& root, const std::string& text, std::string& path);

struct RunConfig;
// The checks across keys (validate.cpp), after every key parsed without a problem.
void validate_combinations(RunConfig& c, Parser& p);

}  // namespace nt
