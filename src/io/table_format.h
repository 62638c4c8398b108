// A table of JSON cells printed three ways, for a person or a program (`normtool runs`, `compare
// --format`):
//   text  aligned columns, a float to 4 decimals (in a column marked `exact`, such as a config
//         value's, in its shortest round-trip form, as compare shows it), null as "-", control
//         characters as '?'
//   csv   RFC 4180: a header row, a cell holding a comma, a quote, CR or LF quoted ("" for a quote);
//         a number in its shortest round-trip form, null empty, a string as is, other JSON dumped
//   json  an array of objects, one per row, the keys in column order, the cells as they are
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nt {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;  // each as long as columns
  std::vector<bool> exact = {};                   // per column: its floats shown in full in text (none when empty)
};

std::string csv_field(const std::string& text);
std::string table_text(const Table& t);
std::string table_csv(const Table& t);
nlohmann::ordered_json table_json(const Table& t);  // the columns in order
// One of the three by name ("table" or "text", "csv", "json"; the JSON indented, ending in a newline).
std::string format_table(const Table& t, const std::string& format);

}  // namespace nt
