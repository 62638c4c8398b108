#include "config/user_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace nt {

using json = nlohmann::json;

namespace {

// Builds the document like nlohmann's own DOM parser, keeping the path to the current value.
class Reader : public nlohmann::json_sax<json> {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  json result;
  std::string problem;
  bool syntax = false;

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool v) override { return put(json(v)); }
  bool number_integer(number_integer_t v) override { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(json(v)); }
  bool string(string_t& v) override { return put(json(std::move(v))); }
  bool binary(binary_t&) override { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    if (stack_.back().node->contains(k)) return fail(fmt::format("the key appears twice"), path(&k));
    stack_.back().key = k;
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) override {
    const auto [line, column] = line_column(position);
    const std::string where = fmt::format("line {}, column {}", line, column);
    if (e.id == 406)  // out_of_range: number overflow
      return fail(fmt::format("the number {} is out of range ({})", token, where), path());
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    std::string what = e.what();
    if (const auto p = what.find(": ", what.find("column")); p != std::string::npos) what = what.substr(p + 2);
    syntax = true;  // where it broke, not which key (a missing comma is not the last key's fault)
    return fail(fmt::format("not valid JSON at {}: {}", where, what));
  }

 private:
  struct Open {
    json* node;
    std::string key;  // objects: the key of the value being read
  };
  const std::string& text_;
  std::vector<Open> stack_;

  // The path of the value being read: "train.lr", "grid[2].values", ...; `key` for a key
  // not yet accepted.
  std::string path(const std::string* key = nullptr) const {
    std::string p;
    auto add_key = [&](const std::string& k) { p += (p.empty() ? "" : ".") + k; };
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Open& o = stack_[i];
      const bool last = i + 1 == stack_.size();
      if (o.node->is_array()) p += fmt::format("[{}]", o.node->size() - (last ? 0 : 1));
      else if (last && key) add_key(*key);
      else if (!o.key.empty()) add_key(o.key);
    }
    return p;
  }

  std::pair<int, int> line_column(std::size_t position) const {
    int line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < position && i < text_.size(); ++i) {
      if (text_[i] == '\n') ++line, column = 1;
      else ++column;
    }
    return {line, column};
  }

  bool fail(const std::string& what, std::string where = "") {
    if (where.size() > 60) where = where.substr(0, 57) + "...";  // a path 32 levels deep
    if (problem.empty()) problem = where.empty() ? what : where + ": " + what;
    return false;
  }

  json* place(json v) {
    if (stack_.empty()) {
      result = std::move(v);
      return &result;
    }
    json& parent = *stack_.back().node;
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[stack_.back().key];
    slot = std::move(v);
    return &slot;
  }
  bool put(json v) {
    place(std::move(v));
    return true;
  }
  bool open(json empty) {
    if (int(stack_.size()) >= kMaxJsonDepth)
      return fail(fmt::format("nested deeper than {} levels", kMaxJsonDepth), path());
    stack_.push_back({place(std::move(empty)), ""});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
};

}  // namespace

UserJson parse_user_json(const std::string& text) {
  Reader reader(text);
  UserJson out;
  bool ok = false;
  try {
    ok = json::sax_parse(text, &reader, json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {  // not expected with a SAX reader; never let one escape
    reader.problem = reader.problem.empty() ? e.what() : reader.problem;
  }
  if (!ok || !reader.problem.empty()) {
    out.problem = reader.problem.empty() ? "not valid JSON" : reader.problem;
    out.syntax = reader.syntax;
    out.value = json(json::value_t::discarded);
    return out;
  }
  out.value = std::move(reader.result);
  return out;
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) extra = 0, cp = c;
    else if ((c & 0xE0) == 0xC0) extra = 1, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) extra = 2, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) extra = 3, cp = c & 0x07;
    else return false;
    if (i + extra >= s.size() && extra > 0) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // overlong forms, surrogates, beyond U+10FFFF
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      return false;
    i += extra + 1;
  }
  return true;
}

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

std::string describe_json(const json& v) {
  if (v.is_object()) return v.empty() ? "{}" : fmt::format("an object of {} keys", v.size());
  if (v.is_array()) return v.empty() ? "[]" : fmt::format("an array of {}", v.size());
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace nt
