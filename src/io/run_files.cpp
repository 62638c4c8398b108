#include "io/run_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <nlohmann/json.hpp>

#include "config/user_json.h"
#include "core/errors.h"
#include "core/read_file.h"
#include "io/json_file.h"

namespace nt {

namespace fs = std::filesystem;

namespace {
constexpr const char* kReserve = ".reserve";
constexpr off_t kReserveBytes = 64 << 10;
constexpr const char* kStatsHeader = "step,layer,site,position,mean,std\n";
constexpr const char* kRangesHeader = "step,layer,site,position,max_abs,fp16_outside,int8_snr_db,int8_tensor_snr_db\n";
}  // namespace

nlohmann::json read_summary(const std::string& dir) {
  const std::string path = (fs::path(dir) / "summary.json").string();
  const std::optional<std::string> text = read_file_if_present(path, kMaxDocumentBytes);
  if (!text) return nullptr;
  UserJson parsed = parse_user_json(*text);
  if (parsed.syntax) return nullptr;  // cut short
  if (!parsed.problem.empty()) throw InputError(fmt::format("{}: {}", path, parsed.problem));
  nlohmann::json s = std::move(parsed.value);
  if (!s.is_object()) throw InputError(fmt::format("{}: not a JSON object", path));
  auto check = [&](const char* key, bool (*ok)(const nlohmann::json&), const char* expected) {
    if (s.contains(key) && !ok(s.at(key)))
      throw InputError(fmt::format("{}: \"{}\" is {}, expected {}", path, key, describe_json(s.at(key)), expected));
  };
  check("status", [](const nlohmann::json& v) { return v.is_string(); }, "a string");
  check("steps_completed", [](const nlohmann::json& v) { return v.is_number_integer(); }, "an integer");
  check("diverged", [](const nlohmann::json& v) { return v.is_boolean(); }, "true or false");
  for (const char* k : {"final_train_loss", "final_val_loss", "final_val_acc", "steps_per_s"})
    check(k, [](const nlohmann::json& v) { return v.is_number() || v.is_null(); }, "a number or null");
  return s;
}

std::vector<LossPoint> read_losses(const std::string& dir) {
  const std::string path = (fs::path(dir) / "metrics.jsonl").string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return {};
  std::vector<LossPoint> points;
  for (const JsonDoc& m : read_json_lines(path)) {
    const int step = m.get<int>("step");
    const bool val = m.get_or<std::string>("split", "train") == "val";
    if (!m.has("loss") || m.value()["loss"].is_null()) continue;
    points.push_back({step, val, m.get<double>("loss"), m.get_or<double>("acc", NAN)});
  }
  return points;
}

RunFiles::RunFiles(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  const bool existed = fs::exists(dir_, ec);
  if (existed && !(fs::is_directory(dir_, ec) && fs::is_empty(dir_, ec)))
    throw UsageError(fmt::format("--out {}: already exists and is not an empty directory "
                                 "(choose another --out, or remove it)", dir_));
  fs::create_directories(dir_, ec);
  if (ec) throw UsageError(fmt::format("--out {}: cannot create the run directory: {}", dir_, ec.message()));
  try {
    lock_ = std::make_unique<DirectoryLock>(dir_, "--out " + dir_);
  } catch (const UsageError&) {  // another normtool's directory now: not ours to clean
    if (!existed && !DirectoryLock::held(dir_)) fs::remove_all(dir_, ec);
    throw;
  }
  try {
    hold_reserve();
    open_logs(nullptr);
    stats_.append(kStatsHeader);
    ranges_.append(kRangesHeader);
  } catch (const std::runtime_error& e) {  // a directory that cannot be written: leave nothing behind
    metrics_ = {}, layers_ = {}, stats_ = {}, ranges_ = {};
    lock_.reset();
    if (existed)
      for (const auto& entry : fs::directory_iterator(dir_, ec)) fs::remove_all(entry.path(), ec);
    else
      fs::remove_all(dir_, ec);
    throw UsageError(fmt::format("--out {}: cannot write the run directory: {}", dir_, e.what()));
  }
}

RunFiles::RunFiles(std::string dir, const LogSizes& sizes) : dir_(std::move(dir)) {
  hold_reserve();
  try {
    open_logs(&sizes);
  } catch (...) {  // a refused resume leaves the directory as it found it
    release_reserve();
    throw;
  }
}

RunFiles::~RunFiles() {
  std::error_code ec;
  fs::remove(path(kReserve), ec);
}

std::string RunFiles::path(const char* name) const { return (fs::path(dir_) / name).string(); }

void RunFiles::open_logs(const LogSizes* sizes) {
  metrics_ = AppendFile(path("metrics.jsonl"), sizes ? sizes->metrics : 0);
  layers_ = AppendFile(path("layers.jsonl"), sizes ? sizes->layers : 0);
  stats_ = AppendFile(path("stats.csv"), sizes ? sizes->stats : 0);
  ranges_ = AppendFile(path("ranges.csv"), sizes ? sizes->ranges : 0);
}

void RunFiles::hold_reserve() {
  const std::string p = path(kReserve);
  const int fd = open_for_writing(p, O_WRONLY, /*fresh=*/true);
  if (fd < 0) throw WriteError(p, open_error(errno));
  const int e = posix_fallocate(fd, 0, kReserveBytes);
  ::close(fd);
  if (e != 0 && e != EOPNOTSUPP && e != EINVAL) throw WriteError(p, e);
}

void RunFiles::release_reserve() {
  std::error_code ec;
  fs::remove(path(kReserve), ec);
}

void RunFiles::write_config(const nlohmann::json& config) {
  write_file_atomically(path("config.json"),
                        config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

namespace {
std::string line_of(const nlohmann::json& record) {
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
}  // namespace

void RunFiles::metric(const nlohmann::json& record) { metrics_.append(line_of(record)); }
void RunFiles::layer(const nlohmann::json& record) { layers_.append(line_of(record)); }

void RunFiles::stat(int step, int layer, const char* site, int position, double mean, double std) {
  fmt::format_to(std::back_inserter(stats_buffer_), "{},{},{},{},{:.8g},{:.8g}\n", step, layer, site, position, mean,
                 std);
}

void RunFiles::range(int step, int layer, const char* site, int position, double max_abs, double fp16_outside,
                     double int8_snr_db, double int8_tensor_snr_db) {
  fmt::format_to(std::back_inserter(ranges_buffer_), "{},{},{},{},{:.8g},{:.8g},{:.8g},{:.8g}\n", step, layer, site,
                 position, max_abs, fp16_outside, int8_snr_db, int8_tensor_snr_db);
}

void RunFiles::flush_stats() {
  const std::string rows = std::move(stats_buffer_), range_rows = std::move(ranges_buffer_);
  stats_buffer_.clear();
  ranges_buffer_.clear();
  stats_.append(rows);
  ranges_.append(range_rows);
}

void RunFiles::write_summary(const nlohmann::json& summary) {
  flush_stats();
  write_file_atomically(path("summary.json"),
                        summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

LogSizes RunFiles::sizes() {
  flush_stats();
  return {metrics_.size(), layers_.size(), stats_.size(), ranges_.size()};
}

}  // namespace nt
