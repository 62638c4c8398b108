// fortunes (Debian package `fortunes`, /usr/share/games/fortunes): every regular file of the
// folder whose name has no '.' (symlinks, *.dat and *.u8 skipped), in byte order of name;
// each split into documents at lines that are exactly "%"; documents stripped of leading
// and trailing newlines; empty documents dropped.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "data/dataset.h"

namespace nt {

namespace fs = std::filesystem;

std::vector<std::string> fortunes_documents(const std::string& dir) {
  std::error_code ec;
  const bool is_dir = fs::is_directory(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw DataError(fmt::format("{}: cannot read: {}", dir, ec.message()));
  if (!is_dir)
    throw DataError(
        fmt::format("{}: no fortunes folder here (install the Debian package 'fortunes', "
                    "or set data.path)",
                    dir));
  std::vector<std::string> names;
  fs::directory_iterator entries(dir, ec);
  for (; !ec && entries != fs::directory_iterator(); entries.increment(ec)) {
    const std::string name = entries->path().filename().string();
    if (entries->is_regular_file() && !entries->is_symlink() && name.find('.') == std::string::npos)
      names.push_back(name);
  }
  if (ec) throw DataError(fmt::format("{}: cannot read: {}", dir, ec.message()));
  std::sort(names.begin(), names.end());
  if (names.empty()) throw DataError(fmt::format("{}: no fortune files (install the Debian package 'fortunes')", dir));

  std::vector<std::string> docs;
  for (const auto& name : names) {
    // a fortune file is text of some kilobytes: one beyond this is not one (and is not read whole)
    constexpr std::uintmax_t kMaxFileBytes = 64u << 20;
    if (const std::uintmax_t size = fs::file_size(fs::path(dir) / name, ec); !ec && size > kMaxFileBytes)
      throw DataError(
          fmt::format("{}/{}: {} bytes, more than the {} a fortune file may hold", dir, name, size, kMaxFileBytes));
    std::ifstream in(fs::path(dir) / name, std::ios::binary);
    if (!in) throw DataError(fmt::format("{}/{}: cannot read: {}", dir, name, std::generic_category().message(errno)));
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::string doc;  // the lines since the last "%", joined by '\n'
    bool first_line = true;
    auto finish = [&] {
      const auto first = doc.find_first_not_of('\n');
      if (first != std::string::npos) docs.push_back(doc.substr(first, doc.find_last_not_of('\n') - first + 1));
      doc.clear();
      first_line = true;
    };
    for (std::size_t start = 0; start <= text.size();) {
      std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string_view line(text.data() + start, end - start);
      if (line == "%") {
        finish();
      } else {
        if (!first_line) doc += '\n';
        doc += line;
        first_line = false;
      }
      start = end + 1;
    }
    finish();
  }
  return docs;
}

}  // namespace nt
