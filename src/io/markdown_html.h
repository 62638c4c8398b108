// The markdown that normtool writes (a report's REPORT.md, the claims' details) as HTML, for a
// page beside it that cannot disagree with it. Only the subset normtool writes is understood:
//   blocks   # headings, paragraphs, "- " lists (a line indented under an item continues it),
//            pipe tables (a header row, then |---|), ``` fenced code, and the anchor line
//            <a id="..."></a> of a section
//   inline   `code`, **bold**, [text](link), ![alt](picture), a backslash before punctuation
// Everything else is text: every character taken from the markdown is escaped (io/html.h), so a
// claim's text or a run's name holding < > & or quotes shows as written and adds no element.
// A link's target is kept only when it is relative, an anchor (#...) or http(s); a picture's
// source goes through `picture`, which returns what the <img> shows (e.g. a data: URI) or "" for
// a picture that is not there (shown as its alt text, marked missing).
#pragma once
#include <functional>
#include <string>

namespace nt {

using PictureSource = std::function<std::string(const std::string& src)>;

std::string markdown_to_html(const std::string& markdown, const PictureSource& picture);

}  // namespace nt
