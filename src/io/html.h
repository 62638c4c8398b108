// The pieces of normtool's HTML pages (a report's REPORT.html, a run's index.html): one file each,
// self-contained (no external CSS, script, font or picture; a report's pictures inline as data:
// URIs), every text taken from data escaped.
#pragma once
#include <string>
#include <string_view>

namespace nt {

// `text` with & < > " ' as character references: safe in an element's text and in a quoted
// attribute value.
std::string html_escape(std::string_view text);

// RFC 4648 base64, padded.
std::string base64(std::string_view bytes);

// The PNG file `path` as "data:image/png;base64,...", or "" when it is missing, not a regular file
// (a symbolic link included), larger than 16 MiB or not a PNG (its signature): a report never
// carries another file's bytes.
std::string png_data_uri(const std::string& path);

// A whole page: the doctype, UTF-8, `title` (escaped), the small inline style sheet, and `body`
// (HTML, as given). refresh_s > 0: the page reloads itself every refresh_s seconds.
std::string html_page(const std::string& title, const std::string& body, int refresh_s = 0);

}  // namespace nt
