#include "io/run_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <nlohmann/json.hpp>

#include "config/user_json.h"
#include "core/errors.h"
#include "core/read_file.h"
#include "io/json_file.h"
#include "io/run_plots.h"

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
  check(
      "status", [](const nlohmann::json& v) { return v.is_string(); }, "a string");
  check(
      "steps_completed", [](const nlohmann::json& v) { return v.is_number_integer(); }, "an integer");
  check(
      "diverged", [](const nlohmann::json& v) { return v.is_boolean(); }, "true or false");
  for (const char* k : {"final_train_loss", "final_val_loss", "final_val_acc", "steps_per_s"})
    check(
        k, [](const nlohmann::json& v) { return v.is_number() || v.is_null(); }, "a number or null");
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
    const bool grad = m.has("grad_norm") && m.value()["grad_norm"].is_number();
    points.push_back(
        {step, val, m.get<double>("loss"), m.get_or<double>("acc", NAN), grad ? m.get<double>("grad_norm") : NAN});
  }
  return points;
}

LossCurves read_loss_curves(const std::string& dir) {
  LossCurves c;
  for (const LossPoint& p : read_losses(dir)) {
    if (p.val) {
      c.val_loss.emplace_back(p.step, p.loss);
      if (!std::isnan(p.acc)) c.val_acc.emplace_back(p.step, p.acc);
    } else {
      c.train_loss.emplace_back(p.step, p.loss);
    }
  }
  return c;
}

namespace {

// Row `row` of a CSV table read from `file`, column `col`, as a number; an InputError naming the
// file, the row and the column when it is not one.
double csv_number(const CsvTable& t, const std::string& file, std::size_t row, int col) {
  const std::string& text = t.rows[row][std::size_t(col)];
  std::size_t used = 0;
  double v = NAN;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw InputError(fmt::format("{}: data row {}, column {}: \"{}\" is not a number", file, row + 1,
                                 t.columns[std::size_t(col)], text));
  return v;
}

int csv_index(const CsvTable& t, const std::string& file, std::size_t row, int col) {
  const double v = csv_number(t, file, row, col);
  if (v != std::floor(v) || v < 0 || v > 1e9)
    throw InputError(fmt::format("{}: data row {}, column {}: {} is not a step, layer or position", file, row + 1,
                                 t.columns[std::size_t(col)], v));
  return int(v);
}

// The columns of a CSV table that a reader needs; an InputError naming the file when one is missing.
std::vector<int> csv_columns(const CsvTable& t, const std::string& file, std::initializer_list<const char*> names) {
  std::vector<int> cols;
  for (const char* n : names) {
    cols.push_back(t.column(n));
    if (cols.back() < 0) throw InputError(fmt::format("{}: no column \"{}\" in its header", file, n));
  }
  return cols;
}

}  // namespace

std::map<std::pair<int, std::string>, PositionStats> last_stats(const std::string& dir) {
  const std::string file = (fs::path(dir) / "stats.csv").string();
  const CsvTable t = read_csv(file);
  const std::vector<int> c = csv_columns(t, file, {"step", "layer", "site", "position", "mean", "std"});
  int last = -1;
  for (std::size_t i = 0; i < t.rows.size(); ++i) last = std::max(last, csv_index(t, file, i, c[0]));
  std::map<std::pair<int, std::string>, PositionStats> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (csv_index(t, file, i, c[0]) != last) continue;
    auto& v = out[{csv_index(t, file, i, c[1]), t.rows[i][std::size_t(c[2])]}];
    const int position = csv_index(t, file, i, c[3]);
    if (int(v.std.size()) <= position) v.mean.resize(position + 1, NAN), v.std.resize(position + 1, NAN);
    v.mean[position] = csv_number(t, file, i, c[4]);
    v.std[position] = csv_number(t, file, i, c[5]);
  }
  return out;
}

std::map<std::pair<int, std::string>, PositionRanges> ranges_at(const std::string& dir, int step) {
  const std::string file = (fs::path(dir) / "ranges.csv").string();
  const CsvTable t = read_csv(file);
  const std::vector<int> c = csv_columns(
      t, file, {"step", "layer", "site", "position", "max_abs", "fp16_outside", "int8_snr_db", "int8_tensor_snr_db"});
  int last = -1;
  for (std::size_t i = 0; i < t.rows.size(); ++i) last = std::max(last, csv_index(t, file, i, c[0]));
  const int wanted = step < 0 ? last : step;
  std::map<std::pair<int, std::string>, PositionRanges> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (csv_index(t, file, i, c[0]) != wanted) continue;
    PositionRanges& v = out[{csv_index(t, file, i, c[1]), t.rows[i][std::size_t(c[2])]}];
    const std::size_t p = std::size_t(csv_index(t, file, i, c[3]));
    for (auto* column : {&v.max_abs, &v.fp16_outside, &v.int8_snr_db, &v.int8_tensor_snr_db})
      if (column->size() <= p) column->resize(p + 1, NAN);
    v.max_abs[p] = csv_number(t, file, i, c[4]);
    v.fp16_outside[p] = csv_number(t, file, i, c[5]);
    v.int8_snr_db[p] = csv_number(t, file, i, c[6]);
    v.int8_tensor_snr_db[p] = csv_number(t, file, i, c[7]);
  }
  return out;
}

std::string make_new_directory(const std::string& base) {
  std::error_code ec;
  if (const fs::path parent = fs::path(base).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw UsageError(fmt::format("{}: cannot create its parent directory: {}", base, ec.message()));
  constexpr int kTries = 1000;
  for (int n = 1; n <= kTries; ++n) {
    const std::string dir = n == 1 ? base : fmt::format("{}-{}", base, n);
    if (::mkdir(dir.c_str(), 0777) == 0) return dir;
    if (errno != EEXIST)
      throw UsageError(fmt::format("{}: cannot create the directory: {}", dir, std::strerror(errno)));
  }
  throw UsageError(
      fmt::format("{}: it and {} more names after it (-2, -3, ...) are taken; give --out", base, kTries - 1));
}

RunFiles::RunFiles(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  const bool existed = fs::exists(dir_, ec);
  if (existed && !(fs::is_directory(dir_, ec) && fs::is_empty(dir_, ec)))
    throw UsageError(
        fmt::format("--out {}: already exists and is not an empty directory "
                    "(choose another --out, or remove it)",
                    dir_));
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
  try {  // the page's config: read back (run --resume has just loaded it); without it, only the figures
    page_config_ = run_page_config(read_json_file(path("config.json")).value());
  } catch (const std::exception&) {
  }
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
  page_config_ = run_page_config(config);
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
  write_run_page(dir_, summary, page_config_);
}

LogSizes RunFiles::sizes() {
  flush_stats();
  return {metrics_.size(), layers_.size(), stats_.size(), ranges_.size()};
}

}  // namespace nt
