// The walk over a user's config JSON (config/parser.h): every problem collected with its key path
// and its source, unknown keys with the nearest known one, and "a.b.c=value" overrides.
#include "config/parser.h"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>

#include "config/user_json.h"

namespace nt {

using json = nlohmann::json;

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}
std::string last_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

Parser::Parser(std::vector<Field>& fields, std::string source) : source_(std::move(source)) {
  for (auto& f : fields) {
    leaves_[f.path] = &f;
    for (std::string p = parent_of(f.path); !p.empty(); p = parent_of(p)) objects_.insert(p);
  }
}

void Parser::problem(const std::string& path, const std::string& what) {
  bool from_override = false;  // the key or an object above it was overridden
  for (const std::string& o : overridden_) from_override |= path == o || path.rfind(o + ".", 0) == 0;
  problems_.push_back(fmt::format("{}: {} ({})", path, what, from_override ? "override" : source_));
}

void Parser::walk(const json& node, const std::string& prefix) {
  for (const auto& [key, value] : node.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (auto it = leaves_.find(path); it != leaves_.end()) {
      if (auto err = it->second->set(value)) problem(path, *err);
    } else if (objects_.count(path)) {
      if (value.is_object()) walk(value, path);
      else problem(path, fmt::format("expected an object, got {}", describe_json(value)));
    } else {
      problem(path, "unknown key" + suggestion(prefix, key));
    }
  }
}

std::string Parser::suggestion(const std::string& prefix, const std::string& key) const {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, key.size() / 3) + 1;
  auto consider = [&](const std::string& path) {
    if (parent_of(path) != prefix) return;
    const std::size_t d = edit_distance(key, last_of(path));
    if (d < best_d) best_d = d, best = path;
  };
  for (const auto& [p, f] : leaves_) consider(p);
  for (const auto& p : objects_) consider(p);
  // a key given at the wrong level: "norm" at the top, "lr" under model, ...
  if (best.empty())
    for (const auto& [p, f] : leaves_)
      if (last_of(p) == key) best = p;
  return best.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", best);
}

std::optional<std::string> apply_override(json& root, const std::string& text, std::string& path) {
  if (!valid_utf8(text)) return fmt::format("override {}: not valid UTF-8", describe_json(json(text)));
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return fmt::format("override \"{}\": expected key.path=value", text);
  path = text.substr(0, eq);
  const std::string raw = text.substr(eq + 1);
  UserJson parsed = parse_user_json(raw);
  if (!parsed.problem.empty() && !parsed.syntax) return fmt::format("override \"{}\": {}", path, parsed.problem);
  json value = parsed.problem.empty() ? std::move(parsed.value) : json(raw);
  json* node = &root;
  std::string walked;
  std::stringstream parts(path);
  std::vector<std::string> keys;
  for (std::string k; std::getline(parts, k, '.');) keys.push_back(k);
  if (keys.empty() || std::find(keys.begin(), keys.end(), "") != keys.end() || path.back() == '.')
    return fmt::format("override \"{}\": expected key.path=value with no empty key", text);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + keys[i];
    json& next = (*node)[keys[i]];
    if (next.is_null()) next = json::object();
    if (!next.is_object()) return fmt::format("override \"{}\": {} is not an object", text, walked);
    node = &next;
  }
  (*node)[keys.back()] = value;
  return std::nullopt;
}

}  // namespace nt
