#include "io/json_file.h"

#include <climits>

#include <fmt/format.h>

#include "config/user_json.h"
#include "core/errors.h"

namespace nt {

using nlohmann::json;

namespace {

// What a JSON value is, for a message: its text, cut to a readable length.
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

template <typename T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, std::string>)
    return "a string";
  else if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t>)
    return "an integer";
  else if constexpr (std::is_same_v<T, double>)
    return "a number";
  else
    return "a JSON value";
}

template <typename T>
bool holds(const json& v) {
  if constexpr (std::is_same_v<T, std::string>)
    return v.is_string();
  else if constexpr (std::is_same_v<T, bool>)
    return v.is_boolean();
  else if constexpr (std::is_same_v<T, int>)
    return v.is_number_integer() &&
           (v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(INT_MAX)
                                   : v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX);
  else if constexpr (std::is_same_v<T, int64_t>)
    return v.is_number_integer() && (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(INT64_MAX));
  else if constexpr (std::is_same_v<T, double>)
    return v.is_number();
  else
    return true;
}

}  // namespace

JsonDoc::JsonDoc(json value, std::string file, std::string where)
    : value_(std::move(value)), file_(std::move(file)), where_(std::move(where)) {}

void JsonDoc::fail(const std::string& what) const {
  throw InputError(where_.empty() ? fmt::format("{}: {}", file_, what)
                                  : fmt::format("{}: {}: {}", file_, where_, what));
}

const JsonDoc& JsonDoc::expect_object() const {
  if (!value_.is_object()) fail(fmt::format("is {}, expected a JSON object", shown(value_)));
  return *this;
}

JsonDoc JsonDoc::member(std::string_view key) const {
  const std::string path = where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key);
  expect_object();
  if (!value_.contains(key)) JsonDoc(nullptr, file_, path).fail("missing");
  return JsonDoc(value_.at(std::string(key)), file_, path);
}

template <typename T>
T JsonDoc::as() const {
  if constexpr (std::is_same_v<T, JsonDoc>) {
    return *this;
  } else {
    if (!holds<T>(value_)) fail(fmt::format("is {}, expected {}", shown(value_), type_name<T>()));
    return value_.get<T>();
  }
}

template <typename T>
T JsonDoc::get(std::string_view key) const {
  return member(key).as<T>();
}

template <typename T>
T JsonDoc::get_or(std::string_view key, T fallback) const {
  expect_object();
  if (!value_.contains(key) || value_.at(std::string(key)).is_null()) return fallback;
  return member(key).as<T>();
}

std::vector<JsonDoc> JsonDoc::elements() const {
  if (!value_.is_array()) fail(fmt::format("is {}, expected an array", shown(value_)));
  std::vector<JsonDoc> out;
  out.reserve(value_.size());
  for (std::size_t i = 0; i < value_.size(); ++i) out.emplace_back(value_[i], file_, fmt::format("{}[{}]", where_, i));
  return out;
}

#define NT_JSON_DOC_TYPE(T)                           \
  template T JsonDoc::as<T>() const;                  \
  template T JsonDoc::get<T>(std::string_view) const; \
  template T JsonDoc::get_or<T>(std::string_view, T) const;
NT_JSON_DOC_TYPE(std::string)
NT_JSON_DOC_TYPE(bool)
NT_JSON_DOC_TYPE(int)
NT_JSON_DOC_TYPE(int64_t)
NT_JSON_DOC_TYPE(double)
NT_JSON_DOC_TYPE(JsonDoc)
#undef NT_JSON_DOC_TYPE

json parse_json(const std::string& text, const std::string& file) {
  UserJson parsed = parse_user_json(text);
  if (!parsed.problem.empty()) throw InputError(fmt::format("{}: {}", file, parsed.problem));
  return std::move(parsed.value);
}

JsonDoc read_json_file(const std::string& path, int64_t max_bytes) {
  JsonDoc doc(parse_json(read_file(path, max_bytes), path), path);
  doc.expect_object();
  return doc;
}

std::vector<JsonDoc> read_json_lines(const std::string& path, int64_t max_bytes) {
  const std::string text = read_file(path, max_bytes);
  std::vector<JsonDoc> lines;
  std::size_t start = 0;
  for (int n = 1;; ++n) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // none left, or a last line cut short
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string file = fmt::format("{}:{}", path, n);  // "metrics.jsonl:3", as compilers name a line
    JsonDoc doc(parse_json(std::string(line), file), file);
    doc.expect_object();
    lines.push_back(std::move(doc));
  }
  return lines;
}

}  // namespace nt
