#include "report/report_html.h"

#include <filesystem>

#include "analysis/stats.h"
#include "io/html.h"
#include "io/markdown_html.h"

namespace nt {

namespace {

namespace fs = std::filesystem;

// A picture of the report: a relative path to a PNG below the report directory, no ".." in it
std::string picture_in(const std::string& report_dir, const std::string& src) {
  const fs::path p(src);
  if (src.empty() || p.is_absolute() || p.extension() != ".png") return "";
  for (const fs::path& part : p)
    if (part == "..") return "";
  return png_data_uri((fs::path(report_dir) / p).string());
}

// The page's title: the report's first heading, "(QUICK ...)" and "(PARTIAL ...)" included
std::string title_of(const std::string& md) {
  if (!md.starts_with("# ")) return "normtool report";
  return md.substr(2, md.find('\n') - 2);
}

// **PASS** as a verdict in its colour: only the markdown's bold makes <strong> (text is escaped)
std::string with_verdict_classes(std::string html) {
  for (ClaimVerdict v : {ClaimVerdict::pass, ClaimVerdict::fail, ClaimVerdict::inconclusive, ClaimVerdict::report}) {
    const std::string name = to_string(v), plain = "<strong>" + name + "</strong>";
    const std::string classed = "<strong class=\"" + name + "\">" + name + "</strong>";
    for (auto at = html.find(plain); at != std::string::npos; at = html.find(plain, at + classed.size()))
      html.replace(at, plain.size(), classed);
  }
  return html;
}

}  // namespace

std::string report_html(const std::string& report_md, const std::string& report_dir) {
  const std::string body =
      markdown_to_html(report_md, [&](const std::string& src) { return picture_in(report_dir, src); });
  return html_page(title_of(report_md), with_verdict_classes(body));
}

}  // namespace nt
