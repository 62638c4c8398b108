#include "io/paths.h"

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <vector>

namespace nt {

namespace fs = std::filesystem;

std::string self_executable() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).string();
}

std::string data_dir() {
  std::vector<fs::path> tried;
  if (const char* env = std::getenv("NORMTOOL_DATA_DIR"); env && *env) tried.emplace_back(env);
  const fs::path exe_dir = fs::path(self_executable()).parent_path();
  tried.push_back(exe_dir / "share" / "normtool");
  tried.push_back(exe_dir.parent_path() / "share" / "normtool");
  std::string list;
  for (const fs::path& p : tried) {
    std::error_code ec;
    if (fs::is_directory(p / "configs", ec)) return p.string();
    list += (list.empty() ? "" : ", ") + p.string();
  }
  throw std::runtime_error(fmt::format("normtool's data (configs/, experiments/) is in none of: {} "
                                       "(set NORMTOOL_DATA_DIR)", list));
}

std::string config_path(const std::string& name) { return (fs::path(data_dir()) / "configs" / name).string(); }

std::string find_config(const std::string& path) {
  std::error_code ec;
  if (path.empty() || fs::exists(path, ec) || fs::path(path).is_absolute()) return path;
  try {
    for (const fs::path& p : {fs::path(data_dir()) / path, fs::path(data_dir()) / "configs" / path})
      if (fs::is_regular_file(p, ec)) return p.string();
  } catch (const std::runtime_error&) {  // no data directory: the path as given, and its error
  }
  return path;
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return stamp;
}

std::string default_run_dir(const std::string& name) { return fmt::format("runs/{}-{}", name, timestamp()); }

}  // namespace nt
