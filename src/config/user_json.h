// Reading JSON a user wrote (config files, --set values): nlohmann's parser, but every problem
// comes back as a sentence that says where (the key path, line and column), never as a library
// exception, and what nlohmann accepts silently is refused:
//   - nesting deeper than kMaxJsonDepth (a config is 3 levels deep; a value nested 100,000 deep
//     overflowed the stack when an error message printed it)
//   - the same key twice in one object (nlohmann keeps the last)
//   - a number beyond double's range (1e999), invalid UTF-8, any syntax error
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace nt {

inline constexpr int kMaxJsonDepth = 32;

struct UserJson {
  nlohmann::json value;  // discarded when problem is set
  std::string problem;   // "" when the text parsed
  bool syntax = false;   // the problem is that the text is not JSON at all (not a limit or a duplicate)
};

UserJson parse_user_json(const std::string& text);

// Whether `s` is well-formed UTF-8 (what JSON strings must be).
bool valid_utf8(std::string_view s);

// Levenshtein distance, for the did-you-mean of an unknown key or a missing config file.
std::size_t edit_distance(const std::string& a, const std::string& b);

// A JSON value in one short line for an error message: scalars as JSON (at most 40
// characters), objects and arrays by their size, never recursively.
std::string describe_json(const nlohmann::json& v);

}  // namespace nt
