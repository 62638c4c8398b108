// Where things are: this executable, its data (configs/ and experiments/), and the default
// names of run and report directories.
//
// The data directory is the first of: $NORMTOOL_DATA_DIR; <exe dir>/share/normtool (the build
// tree, where CMake links configs/ and experiments/ from the sources); <exe dir>/../share/normtool
// (installed by `cmake --install`). Nothing is baked in, so an installed binary works from anywhere.
#pragma once
#include <string>

namespace nt {

std::string self_executable();                     // /proc/self/exe
std::string data_dir();                            // throws InputError naming the places tried
std::string config_path(const std::string& name);  // <data dir>/configs/<name>
// A --config argument: the path as given when it exists, else the same path under the data
// directory, else under its configs/ ("configs/lm-tiny.json" and "lm-tiny.json" work from any
// directory); failing all, a ConfigError that names the path and the nearest config of the data
// directory ("configs/lm-tny.json" -> did you mean configs/lm-tiny.json?).
std::string find_config(const std::string& path);
std::string timestamp();                           // local time, YYYYmmdd-HHMMSS
std::string default_run_dir(const std::string& name);  // runs/<name>-<timestamp>

}  // namespace nt
