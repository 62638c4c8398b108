// The walk over a user's config JSON (config/parser.h): every problem collected with its key path
// and its source, unknown keys with the nearest known one, and "a.b.c=value" overrides.
#include "config/parser.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <sstream>

#include "config/user_json.h"

namespace nt {

using json = nlohmann::json;

namespace {

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}
std::string last_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

Parser::Parser(std::vector<Field>& fields) {
  for (auto& f : fields) {
    leaves_[f.path] = &f;
    for (std::string p = parent_of(f.path); !p.empty(); p = parent_of(p)) objects_.insert(p);
  }
}

std::string Parser::origin(const std::string& path) const {
  auto it = origins_.find(path);
  return it == origins_.end() ? "" : it->second;
}

int Parser::layer(const std::string& path) const {
  auto it = layers_.find(path);
  return it == layers_.end() ? -1 : it->second;
}

// The keys of a problem are `path` and the keys its message names ("model.d_model" in "must
// divide model.d_model = 10"): one source when they share it, else each key with its own.
std::string Parser::blame(const std::string& path, const std::string& what) const {
  std::vector<std::string> keys{path};
  for (const auto& [leaf, f] : leaves_)
    for (auto at = what.find(leaf); at != std::string::npos; at = what.find(leaf, at + 1)) {
      const std::size_t end = at + leaf.size();
      const bool whole =
          (at == 0 || !(std::isalnum((unsigned char)what[at - 1]) || what[at - 1] == '_' || what[at - 1] == '.')) &&
          (end == what.size() || !(std::isalnum((unsigned char)what[end]) || what[end] == '_'));
      if (whole && leaf != path) {
        keys.push_back(leaf);
        break;
      }
    }
  std::vector<std::pair<std::string, std::string>> set;  // (key, source) of the keys a layer set
  for (const std::string& k : keys)
    if (const std::string o = origin(k); !o.empty()) set.emplace_back(k, o);
  if (set.empty()) return "default";
  bool one = true;
  for (const auto& [k, o] : set) one &= o == set[0].second;
  if (one) return set[0].second;
  std::string s;
  for (const auto& [k, o] : set) s += (s.empty() ? "" : "; ") + k + ": " + o;
  return s;
}

void Parser::problem(const std::string& path, const std::string& what) {
  problems_.push_back(fmt::format("{}: {} ({})", path, what, walking_.empty() ? blame(path, what) : walking_));
}

void Parser::walk(const json& layer, const std::string& source) {
  walking_ = source;
  walk_object(layer, "");
  walking_.clear();
  ++walked_;
}

void Parser::walk_object(const json& node, const std::string& prefix) {
  for (const auto& [key, value] : node.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    // a known path as a dotted key: {"model.norm.type": x} beside {"model": {"norm": ...}} would set it twice
    if (key.find('.') != std::string::npos && (leaves_.count(path) || objects_.count(path))) {
      problem(path, fmt::format("a key with a '.' in it: objects nest ({{\"{}\": {{...}}}}); the dotted path "
                                "is for overrides",
                                key.substr(0, key.find('.'))));
    } else if (auto it = leaves_.find(path); it != leaves_.end()) {
      if (auto err = it->second->set(value))
        problem(path, *err);
      else
        origins_[path] = walking_, layers_[path] = walked_;
    } else if (objects_.count(path)) {
      if (value.is_object())
        walk_object(value, path);
      else
        problem(path, fmt::format("expected an object, got {}", describe_json(value)));
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

std::optional<std::string> apply_override(json& root, const std::string& text, std::string& path,
                                          const std::string& kind) {
  if (!valid_utf8(text)) return fmt::format("{} {}: not valid UTF-8", kind, describe_json(json(text)));
  const auto eq = text.find('=');
  if (eq == std::string::npos && text.size() > 5 && text.ends_with(".json"))  // a config file given as an override
    return fmt::format("{} \"{}\": expected key.path=value (did you mean --config {}?)", kind, text, text);
  if (eq == std::string::npos || eq == 0) return fmt::format("{} \"{}\": expected key.path=value", kind, text);
  path = text.substr(0, eq);
  const std::string raw = text.substr(eq + 1);
  UserJson parsed = parse_user_json(raw);
  if (!parsed.problem.empty() && !parsed.syntax) return fmt::format("{} \"{}\": {}", kind, path, parsed.problem);
  json value = parsed.problem.empty() ? std::move(parsed.value) : json(raw);
  json* node = &root;
  std::string walked;
  std::stringstream parts(path);
  std::vector<std::string> keys;
  for (std::string k; std::getline(parts, k, '.');) keys.push_back(k);
  if (keys.empty() || std::find(keys.begin(), keys.end(), "") != keys.end() || path.back() == '.')
    return fmt::format("{} \"{}\": expected key.path=value with no empty key", kind, text);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + keys[i];
    json& next = (*node)[keys[i]];
    if (next.is_null()) next = json::object();
    if (!next.is_object()) return fmt::format("{} \"{}\": {} is not an object", kind, text, walked);
    node = &next;
  }
  (*node)[keys.back()] = value;
  return std::nullopt;
}

}  // namespace nt
