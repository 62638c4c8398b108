#include "io/html.h"

#include <filesystem>
#include <fmt/format.h>

#include "core/read_file.h"

namespace nt {

namespace {

constexpr std::int64_t kMaxPictureBytes = std::int64_t(16) << 20;
constexpr std::string_view kPngSignature = "\x89PNG\r\n\x1a\n";

// Readable at any width, tables with rules, pictures no wider than the page, verdicts in colour
constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:72em;margin:1em auto;padding:0 1em;line-height:1.4;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #bbb;padding:.2em .5em;"
    "text-align:left;vertical-align:top}th{background:#eee}code,pre{background:#f4f4f4;font-size:90%}"
    "pre{padding:.5em;overflow-x:auto}img{max-width:100%;display:block;margin:.5em 0}"
    ".PASS{color:#070}.FAIL{color:#b00}.INCONCLUSIVE{color:#a60}.REPORT{color:#036}"
    ".running{color:#036}.completed{color:#070}.diverged,.failed{color:#b00}.interrupted{color:#a60}";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? std::uint8_t(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string png_data_uri(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec))) return "";
  std::string bytes;
  try {
    bytes = read_file(path, kMaxPictureBytes);
  } catch (const std::exception&) {  // too large, or gone since: the page says the picture is missing
    return "";
  }
  if (!bytes.starts_with(kPngSignature)) return "";
  return "data:image/png;base64," + base64(bytes);
}

std::string html_page(const std::string& title, const std::string& body, int refresh_s) {
  const std::string refresh =
      refresh_s > 0 ? fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">\n", refresh_s) : "";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{}<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      refresh, html_escape(title), kStyle, body);
}

}  // namespace nt
