// Inside config/: the kinds of config leaf (parser.h's Field) that config.cpp's table (fields_of) is
// written in. Each appends a field reading into `ref` (with its type and range for docs/config.md)
// and returns it, for `.means(...)`; the reference is good until the next field is added.
#pragma once
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/parser.h"

namespace nt {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kIntMax = 2147483647;  // every integer key fits an int; larger values are refused, not wrapped

struct FieldList {
  std::vector<Field> fields;

  using Setter = std::function<std::optional<std::string>(const nlohmann::json&)>;  // the problem, if any
  Field& leaf(std::string path, Setter set, std::function<nlohmann::json()> get, std::string type,
              std::string range = "");
  Field& integer(std::string path, int& ref, double lo, double hi = kIntMax);
  Field& number(std::string path, double& ref, double lo, double hi = kInf, bool lo_open = false);
  Field& optional_number(std::string path, std::optional<double>& ref);  // null, or > 0
  Field& optional_integer(std::string path, std::optional<int>& ref, double lo, double hi);
  Field& boolean(std::string path, bool& ref);
  Field& text(std::string path, std::string& ref);
  // null, or a non-empty list of catalog stems: a file name without '/', NUL or a leading '.'
  Field& stems(std::string path, std::optional<std::vector<std::string>>& ref);
  // one of `names`, the enum's value its index
  template <class E>
  Field& choice(std::string path, E& ref, std::span<const char* const> names) {
    auto set_index = [&ref](int i) { ref = E(i); };
    auto index = [&ref] { return int(ref); };
    return choice_index(std::move(path), set_index, index, names);
  }

 private:
  Field& choice_index(std::string path, std::function<void(int)> set_index, std::function<int()> index,
                      std::span<const char* const> names);
};

// The table of every config key of `c` (config.cpp), in docs/config.md's order, each reading into `c`
std::vector<Field> fields_of(RunConfig& c);
// The name a config file gives its run when it names none: its stem, with every character a
// name cannot hold replaced by _.
std::string name_from_file(const std::string& source);

}  // namespace nt
