// JSON that a user or an earlier run provides (a run's config.json and summary.json, metrics.jsonl,
// sweep.json, result.json, reproduce.json), read through core/read_file.h and taken apart by key
// and type. Every mistake is an InputError (exit 2) that names the file, the key and what was
// expected: `runs/x/summary.json: steps_completed: is "ten", expected an integer`. A hand-edited
// or truncated file is never a library exception or a read of a key that is not there.
// The text is parsed as a config is (config/user_json.h): nesting deeper than kMaxJsonDepth, a
// key twice in one object or a number beyond double's range is an InputError too (a value nested
// 100,000 deep overflowed the stack when it was copied or printed in a message).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/read_file.h"

namespace nt {

// A JSON value and where it came from: the file and the key path inside it ("" for the whole).
class JsonDoc {
 public:
  JsonDoc(nlohmann::json value, std::string file, std::string where = "");

  // The member `key` as T (std::string, bool, int, int64_t, double, JsonDoc); an InputError when
  // it is missing or of another type. An int must fit in an int.
  template <typename T>
  T get(std::string_view key) const;
  // The same, but `fallback` when the member is missing or null.
  template <typename T>
  T get_or(std::string_view key, T fallback) const;
  bool has(std::string_view key) const { return value_.is_object() && value_.contains(key); }

  // The elements of an array value (each a JsonDoc naming its index); an InputError when it is not one.
  std::vector<JsonDoc> elements() const;
  // This value as T; an InputError naming the key path when it is of another type.
  template <typename T>
  T as() const;
  // An InputError unless the value is an object (what a document's top level must be).
  const JsonDoc& expect_object() const;

  const nlohmann::json& value() const { return value_; }
  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }

  // "<file>: <where>: <what>", the InputError every mistake throws.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  nlohmann::json value_;
  std::string file_, where_;
  JsonDoc member(std::string_view key) const;
};

// `text` parsed by the rules of a config (config/user_json.h: nesting at most kMaxJsonDepth deep,
// no key twice, numbers within double's range, well-formed UTF-8); an InputError naming `file`
// and the key path otherwise. nlohmann dumps and compares recursively: a value nested 100,000
// deep overflowed the stack when a message showed it.
nlohmann::json parse_json(const std::string& text, const std::string& file);

// The file parsed as one JSON object (read_file's checks, then the parser's; an InputError with
// the parser's position when it is not JSON, or when it is JSON but not an object).
JsonDoc read_json_file(const std::string& path, int64_t max_bytes = kMaxDocumentBytes);

// A JSON-lines log (metrics.jsonl, layers.jsonl): one object a line, blank lines skipped; a line
// that is not an object is an InputError naming the file and line. A last line without its
// newline (a run killed mid-write) is left out, as a reader of a live log would.
std::vector<JsonDoc> read_json_lines(const std::string& path, int64_t max_bytes = kMaxLogBytes);

}  // namespace nt
