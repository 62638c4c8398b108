#include "io/table_format.h"

#include <algorithm>
#include <fmt/format.h>

namespace nt {

using json = nlohmann::json;

namespace {

std::string cell_text(const json& v, bool exact) {
  std::string s = v.is_null()                     ? "-"
                  : v.is_number_float() && !exact ? fmt::format("{:.4f}", v.get<double>())
                  : v.is_string()                 ? v.get<std::string>()
                                                  : v.dump();
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

std::string cell_csv(const json& v) {
  if (v.is_null()) return "";
  return csv_field(v.is_string() ? v.get<std::string>() : v.dump());
}

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string q(1, '"');
  for (char c : text) {
    q.push_back(c);
    if (c == '"') q.push_back('"');
  }
  q.push_back('"');
  return q;
}

std::string table_text(const Table& t) {
  std::vector<std::size_t> width(t.columns.size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : t.rows) {
    cells.emplace_back();
    for (std::size_t c = 0; c < row.size(); ++c) {
      cells.back().push_back(cell_text(row[c], c < t.exact.size() && t.exact[c]));
      width[c] = std::max(width[c], cells.back().back().size());
    }
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t c = 0; c < r.size(); ++c) s += c + 1 == r.size() ? r[c] : fmt::format("{:<{}}  ", r[c], width[c]);
    return s + "\n";
  };
  std::string out = line(t.columns);
  for (const auto& r : cells) out += line(r);
  return out;
}

std::string table_csv(const Table& t) {
  std::string out;
  for (std::size_t c = 0; c < t.columns.size(); ++c) out.append(c ? "," : "").append(csv_field(t.columns[c]));
  out.push_back('\n');
  for (const auto& row : t.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out.append(c ? "," : "").append(cell_csv(row[c]));
    out.push_back('\n');
  }
  return out;
}

nlohmann::ordered_json table_json(const Table& t) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& row : t.rows) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < row.size(); ++c) o[t.columns[c]] = row[c];
    out.push_back(std::move(o));
  }
  return out;
}

std::string format_table(const Table& t, const std::string& format) {
  if (format == "csv") return table_csv(t);
  if (format == "json")
    return table_json(t).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return table_text(t);
}

}  // namespace nt
