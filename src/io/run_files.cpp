#include "io/run_files.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/errors.h"

namespace nt {

namespace fs = std::filesystem;

RunFiles::RunFiles(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (fs::exists(dir_, ec) && !(fs::is_directory(dir_, ec) && fs::is_empty(dir_, ec)))
    throw UsageError(fmt::format("--out {}: already exists and is not an empty directory "
                                 "(choose another --out, or remove it)", dir_));
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create the run directory: {}", dir_, ec.message()));
  metrics_ = open("metrics.jsonl");
  layers_ = open("layers.jsonl");
  stats_ = open("stats.csv");
  std::fputs("step,layer,site,position,mean,std\n", stats_);
  std::fflush(stats_);
}

RunFiles::~RunFiles() {
  for (std::FILE* f : {metrics_, layers_, stats_})
    if (f) std::fclose(f);
}

std::FILE* RunFiles::open(const char* name) {
  const std::string path = (fs::path(dir_) / name).string();
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write", path));
  return f;
}

namespace {
void write_line(std::FILE* f, const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), f);
  std::fflush(f);
}

void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write", tmp.string()));
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  fs::rename(tmp, path);
}
}  // namespace

void RunFiles::write_config(const nlohmann::json& config) {
  write_atomically(fs::path(dir_) / "config.json", config.dump(2) + "\n");
}
void RunFiles::metric(const nlohmann::json& record) { write_line(metrics_, record); }
void RunFiles::layer(const nlohmann::json& record) { write_line(layers_, record); }
void RunFiles::stat(int step, int layer, const char* site, int position, double mean, double std) {
  fmt::print(stats_, "{},{},{},{},{:.8g},{:.8g}\n", step, layer, site, position, mean, std);
}
void RunFiles::flush_stats() { std::fflush(stats_); }
void RunFiles::write_summary(const nlohmann::json& summary) {
  std::fflush(stats_);
  write_atomically(fs::path(dir_) / "summary.json", summary.dump(2) + "\n");
}

}  // namespace nt
