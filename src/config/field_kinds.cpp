// The kinds of config leaf (config/field_kinds.h): how each reads a JSON value, and the problem it
// names when the value does not fit.
#include "config/field_kinds.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/user_json.h"

namespace nt {

using json = nlohmann::json;
using Problem = std::optional<std::string>;

namespace {

std::string range_text(double lo, double hi, bool lo_open) {
  std::string s;
  if (std::isfinite(lo)) s += fmt::format("{} {}", lo_open ? ">" : ">=", lo);
  if (std::isfinite(hi)) s += fmt::format("{}<= {}", s.empty() ? "" : " and ", hi);
  return s;
}

// A whole number (an integer, or a float with no fraction) in [lo, hi].
bool integer_in(const json& v, double lo, double hi) {
  const bool integral =
      v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  return integral && v.get<double>() >= lo && v.get<double>() <= hi;
}

bool catalog_name(const json& e) {
  return e.is_string() && !e.get<std::string>().empty() && e.get<std::string>().size() <= 200 &&
         e.get<std::string>()[0] != '.' &&
         e.get<std::string>().find_first_of(std::string("/\0", 2)) == std::string::npos;
}

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

Field& FieldList::leaf(std::string path, Setter set, std::function<json()> get, std::string type, std::string range) {
  return fields.emplace_back(
      Field{std::move(path), std::move(set), std::move(get), std::move(type), std::move(range), {}});
}

Field& FieldList::integer(std::string path, int& ref, double lo, double hi) {
  auto set = [&ref, lo, hi](const json& v) -> Problem {
    if (!integer_in(v, lo, hi))
      return fmt::format("expected an integer {}, got {}", range_text(lo, hi, false), describe_json(v));
    ref = int(v.get<double>());
    return std::nullopt;
  };
  auto get = [&ref] { return json(ref); };
  return leaf(std::move(path), set, get, "integer", range_text(lo, hi, false));
}

Field& FieldList::number(std::string path, double& ref, double lo, double hi, bool lo_open) {
  auto set = [&ref, lo, hi, lo_open](const json& v) -> Problem {
    const double d = v.is_number() ? v.get<double>() : 0.0;
    if (!v.is_number() || d < lo || (lo_open && d == lo) || d > hi)
      return fmt::format("expected a number {}, got {}", range_text(lo, hi, lo_open), describe_json(v));
    ref = d;
    return std::nullopt;
  };
  auto get = [&ref] { return json(ref); };
  return leaf(std::move(path), set, get, "number", range_text(lo, hi, lo_open));
}

Field& FieldList::optional_number(std::string path, std::optional<double>& ref) {
  auto set = [&ref](const json& v) -> Problem {
    if (v.is_null()) return ref = std::nullopt, std::nullopt;
    if (!v.is_number() || v.get<double>() <= 0)
      return fmt::format("expected null or a number > 0, got {}", describe_json(v));
    ref = v.get<double>();
    return std::nullopt;
  };
  auto get = [&ref] { return or_null(ref); };
  return leaf(std::move(path), set, get, "number or null", "> 0, or null");
}

Field& FieldList::optional_integer(std::string path, std::optional<int>& ref, double lo, double hi) {
  auto set = [&ref, lo, hi](const json& v) -> Problem {
    if (v.is_null()) return ref = std::nullopt, std::nullopt;
    if (!integer_in(v, lo, hi))
      return fmt::format("expected null or an integer {}, got {}", range_text(lo, hi, false), describe_json(v));
    ref = int(v.get<double>());
    return std::nullopt;
  };
  auto get = [&ref] { return or_null(ref); };
  return leaf(std::move(path), set, get, "integer or null", range_text(lo, hi, false) + ", or null");
}

Field& FieldList::boolean(std::string path, bool& ref) {
  auto set = [&ref](const json& v) -> Problem {
    if (!v.is_boolean()) return fmt::format("expected true or false, got {}", describe_json(v));
    ref = v.get<bool>();
    return std::nullopt;
  };
  auto get = [&ref] { return json(ref); };
  return leaf(std::move(path), set, get, "boolean");
}

Field& FieldList::text(std::string path, std::string& ref) {
  auto set = [&ref](const json& v) -> Problem {
    if (!v.is_string()) return fmt::format("expected a string, got {}", describe_json(v));
    ref = v.get<std::string>();
    return std::nullopt;
  };
  auto get = [&ref] { return json(ref); };
  return leaf(std::move(path), set, get, "string");
}

Field& FieldList::stems(std::string path, std::optional<std::vector<std::string>>& ref) {
  auto set = [&ref](const json& v) -> Problem {
    if (v.is_null()) return ref = std::nullopt, std::nullopt;
    if (!v.is_array() || v.empty() || v.size() > 1000)
      return fmt::format("expected null or a list of 1 to 1000 catalog names, got {}", describe_json(v));
    std::vector<std::string> out;
    for (const json& e : v) {
      if (!catalog_name(e))
        return fmt::format("expected catalog names (1 to 200 bytes, no '/', no NUL, not starting with '.'), got {}",
                           describe_json(e));
      out.push_back(e.get<std::string>());
    }
    ref = std::move(out);
    return std::nullopt;
  };
  auto get = [&ref] { return or_null(ref); };
  return leaf(std::move(path), set, get, "list of strings or null", "1 to 1000 names");
}

Field& FieldList::choice_index(std::string path, std::function<void(int)> set_index, std::function<int()> index,
                               std::span<const char* const> names) {
  auto set = [set_index, names](const json& v) -> Problem {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (v.is_string() && v.get<std::string>() == names[i]) return set_index(int(i)), std::nullopt;
    return fmt::format("expected one of {}, got {}", join_names(names), describe_json(v));
  };
  auto get = [index, names] { return json(names[index()]); };
  return leaf(std::move(path), set, get, "one of", join_names(names));
}

}  // namespace nt
