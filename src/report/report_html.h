// REPORT.html: REPORT.md as one self-contained page, made from the very text of REPORT.md (so the
// two cannot disagree): the verdict table, each claim's section, and its pictures inline as
// data:image/png;base64 URIs (io/html.h, io/markdown_html.h). Written by write_report beside
// REPORT.md.
#pragma once
#include <string>

namespace nt {

// The page of `report_md`, whose pictures are read from `report_dir` (a picture's path must be
// relative, inside the directory, and a PNG; anything else shows as missing).
std::string report_html(const std::string& report_md, const std::string& report_dir);

}  // namespace nt
