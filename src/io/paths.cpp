#include "io/paths.h"

#include "config/config.h"
#include "config/user_json.h"
#include "core/errors.h"

#include <algorithm>
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
  // the installation or NORMTOOL_DATA_DIR, not normtool: exit 2, as bad input is
  throw InputError(fmt::format("normtool's data (configs/, experiments/) is in none of: {} "
                               "(set NORMTOOL_DATA_DIR)", list));
}

std::string config_path(const std::string& name) { return (fs::path(data_dir()) / "configs" / name).string(); }

namespace {

// " (did you mean configs/lm-tiny.json?)" for the data directory's config nearest `path`, spelt
// as `path` is (with or without configs/); "" when none is near.
std::string nearest_config(const std::string& path) {
  const fs::path root = fs::path(data_dir()) / "configs";
  const std::string given = path.starts_with("./") ? path.substr(2) : path;
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, given.size() / 4) + 1;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".json") continue;
    const std::string rel = fs::relative(it->path(), root, ec).string();
    for (const std::string& name : {"configs/" + rel, rel})
      if (const std::size_t d = edit_distance(given, name); d < best_d) best_d = d, best = name;
  }
  return best.empty() ? "" : fmt::format(" (did you mean {}?)", best);
}

}  // namespace

std::string find_config(const std::string& path) {
  std::error_code ec;
  if (path.empty() || fs::exists(path, ec)) return path;
  std::string hint;
  try {
    if (!fs::path(path).is_absolute())
      for (const fs::path& p : {fs::path(data_dir()) / path, fs::path(data_dir()) / "configs" / path})
        if (fs::is_regular_file(p, ec)) return p.string();
    hint = nearest_config(path);
  } catch (const std::runtime_error&) {  // no data directory: nothing to suggest
  }
  throw ConfigError({fmt::format("{}: cannot read the config file: No such file or directory{}", path, hint)});
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return stamp;
}

std::string default_run_dir(const std::string& name) { return fmt::format("runs/{}-{}", name, timestamp()); }

}  // namespace nt
