#include "io/markdown_html.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "io/html.h"

namespace nt {

namespace {

using Lines = std::vector<std::string_view>;
constexpr auto npos = std::string_view::npos;
// Bold and link text are rendered inside one another at most this deep; deeper, they are text
// (a result.json's details of a million '[' must not recurse a million deep).
constexpr int kMaxInlineDepth = 4;
constexpr std::size_t kMaxTarget = 4096;  // a link's or a picture's target, in bytes

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == npos; }

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// An anchor (#...), http(s), or a relative path: never javascript:, data: or another scheme.
bool safe_link(std::string_view url) {
  if (url.empty() || url.starts_with("//")) return false;
  if (url.starts_with('#') || url.starts_with("http://") || url.starts_with("https://")) return true;
  const auto colon = url.find(':'), stop = url.find_first_of("/?#");
  return colon == npos || (stop != npos && stop < colon);
}

std::string render_inline(std::string_view s, const PictureSource& picture, int depth);

// [text](url) or ![alt](src) starting at i: appends its HTML and returns the index past it, or 0
// when what starts at i is not one.
std::size_t link(std::string_view s, std::size_t i, const PictureSource& picture, int depth, std::string& out) {
  const bool image = s[i] == '!';
  const std::size_t open = i + (image ? 1 : 0);
  // the text up to the first bracket, the target up to ')' within kMaxTarget: a hostile line of
  // brackets costs linear time, never a search to its end from every bracket
  const auto mid = s.find_first_of("[]", open + 1);
  if (mid == npos || s[mid] != ']' || mid + 1 >= s.size() || s[mid + 1] != '(') return 0;
  const auto close = s.substr(0, std::min(s.size(), mid + 2 + kMaxTarget)).find(')', mid + 2);
  if (close == npos) return 0;
  const std::string_view text = s.substr(open + 1, mid - open - 1), url = s.substr(mid + 2, close - mid - 2);
  if (image) {
    const std::string src = picture(std::string(url));
    out += src.empty() ? "<em>(picture missing: " + html_escape(url) + ")</em>"
                       : "<img src=\"" + html_escape(src) + "\" alt=\"" + html_escape(text) + "\">";
  } else if (safe_link(url)) {
    out += "<a href=\"" + html_escape(url) + "\">" + render_inline(text, picture, depth + 1) + "</a>";
  } else {
    out += render_inline(text, picture, depth + 1);
  }
  return close + 1;
}

std::string render_inline(std::string_view s, const PictureSource& picture, int depth) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const char ch = s[i];
    if (ch == '\\' && i + 1 < s.size() && std::ispunct(static_cast<unsigned char>(s[i + 1]))) {
      out += html_escape(s.substr(i + 1, 1));
      i += 2;
      continue;
    }
    if (ch == '`') {
      if (const auto end = s.find('`', i + 1); end != npos) {
        out += "<code>" + html_escape(s.substr(i + 1, end - i - 1)) + "</code>";
        i = end + 1;
        continue;
      }
    }
    if (depth < kMaxInlineDepth && s.substr(i, 2) == "**") {
      if (const auto end = s.find("**", i + 2); end != npos) {
        out += "<strong>" + render_inline(s.substr(i + 2, end - i - 2), picture, depth + 1) + "</strong>";
        i = end + 2;
        continue;
      }
    }
    if (depth < kMaxInlineDepth && (ch == '[' || s.substr(i, 2) == "![")) {
      if (const std::size_t next = link(s, i, picture, depth, out)) {
        i = next;
        continue;
      }
    }
    out += html_escape(s.substr(i, 1));
    ++i;
  }
  return out;
}

std::string inline_html(std::string_view s, const PictureSource& picture) { return render_inline(s, picture, 0); }

int heading_level(std::string_view line) {
  const auto hashes = line.find_first_not_of('#');
  return hashes >= 1 && hashes <= 6 && hashes < line.size() && line[hashes] == ' ' ? int(hashes) : 0;
}

bool list_item(std::string_view line) { return line.starts_with("- ") || line.starts_with("* "); }

// <a id="C8-post-ln-needs-warmup"></a>, the anchor of a report's section, kept as an element
bool anchor(std::string_view line, std::string& out) {
  constexpr std::string_view kOpen = "<a id=\"", kClose = "\"></a>";
  line = trim(line);
  if (!line.starts_with(kOpen) || !line.ends_with(kClose) || line.size() <= kOpen.size() + kClose.size()) return false;
  const std::string_view id = line.substr(kOpen.size(), line.size() - kOpen.size() - kClose.size());
  for (char ch : id)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') return false;
  out += "<a id=\"" + html_escape(id) + "\"></a>\n";
  return true;
}

bool starts_block(std::string_view line) {
  std::string ignored;
  return blank(line) || line.starts_with("```") || line.starts_with('|') || heading_level(line) || list_item(line) ||
         anchor(line, ignored);
}

std::size_t fenced(const Lines& lines, std::size_t i, std::string& out) {
  std::string code;
  for (++i; i < lines.size() && !lines[i].starts_with("```"); ++i) code += std::string(lines[i]) + "\n";
  out += "<pre><code>" + html_escape(code) + "</code></pre>\n";
  return i + 1;  // past the closing fence (or the end)
}

// A table row's cells: split at each | that no backslash escapes, the outer ones dropped
std::vector<std::string_view> cells(std::string_view row) {
  row = trim(row);
  if (row.starts_with('|')) row.remove_prefix(1);
  if (row.ends_with('|') && !row.ends_with("\\|")) row.remove_suffix(1);
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= row.size(); ++i)
    if (i == row.size() || (row[i] == '|' && (i == 0 || row[i - 1] != '\\'))) {
      out.push_back(trim(row.substr(start, i - start)));
      start = i + 1;
    }
  return out;
}

bool separator_row(std::string_view row) {
  for (std::string_view c : cells(row))
    if (c.empty() || c.find_first_not_of(":-") != npos || c.find('-') == npos) return false;
  return true;
}

std::string table_row(std::string_view row, const char* tag, const PictureSource& picture) {
  std::string out = "<tr>";
  for (std::string_view c : cells(row))
    out += std::string("<") + tag + ">" + inline_html(c, picture) + "</" + tag + ">";
  return out + "</tr>\n";
}

// The rows from i on that start with |: a header row when the second is |---|
std::size_t table(const Lines& lines, std::size_t i, const PictureSource& picture, std::string& out) {
  out += "<table>\n";
  if (i + 1 < lines.size() && lines[i + 1].starts_with('|') && separator_row(lines[i + 1])) {
    out += "<thead>" + table_row(lines[i], "th", picture) + "</thead>\n";
    i += 2;
  }
  out += "<tbody>\n";
  for (; i < lines.size() && lines[i].starts_with('|'); ++i) out += table_row(lines[i], "td", picture);
  out += "</tbody></table>\n";
  return i;
}

// Items from i on; an indented line continues the item above it
std::size_t list(const Lines& lines, std::size_t i, const PictureSource& picture, std::string& out) {
  out += "<ul>\n";
  while (i < lines.size() && list_item(lines[i])) {
    std::string item(lines[i].substr(2));
    for (++i; i < lines.size() && !blank(lines[i]) && (lines[i][0] == ' ' || lines[i][0] == '\t'); ++i)
      item.append("\n").append(trim(lines[i]));
    out += "<li>" + inline_html(item, picture) + "</li>\n";
  }
  out += "</ul>\n";
  return i;
}

std::size_t paragraph(const Lines& lines, std::size_t i, const PictureSource& picture, std::string& out) {
  std::string text(lines[i]);
  for (++i; i < lines.size() && !starts_block(lines[i]); ++i) text.append("\n").append(lines[i]);
  out += "<p>" + inline_html(text, picture) + "</p>\n";
  return i;
}

Lines split_lines(const std::string& text) {
  Lines lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text.data() + start, end - start);
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::string markdown_to_html(const std::string& markdown, const PictureSource& picture) {
  const Lines lines = split_lines(markdown);
  std::string out;
  for (std::size_t i = 0; i < lines.size();) {
    const std::string_view line = lines[i];
    if (blank(line)) {
      ++i;
    } else if (line.starts_with("```")) {
      i = fenced(lines, i, out);
    } else if (anchor(line, out)) {
      ++i;
    } else if (const int level = heading_level(line)) {
      out += "<h" + std::to_string(level) + ">" + inline_html(trim(line.substr(level)), picture) + "</h" +
             std::to_string(level) + ">\n";
      ++i;
    } else if (line.starts_with('|')) {
      i = table(lines, i, picture, out);
    } else if (list_item(line)) {
      i = list(lines, i, picture, out);
    } else {
      i = paragraph(lines, i, picture, out);
    }
  }
  return out;
}

}  // namespace nt
