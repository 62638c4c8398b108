#include "train/checkpoint.h"

#include <zlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "core/read_file.h"
#include "io/files.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr char kMagic[8] = {'N', 'T', 'C', 'K', 'P', 'T', '\0', '\0'};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

uint32_t crc_of(const char* data, std::size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t at = 0; at < n;) {  // zlib takes a uInt length
    const uInt chunk = uInt(std::min<std::size_t>(n - at, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data + at), chunk);
    at += chunk;
  }
  return uint32_t(crc);
}

void put_points(ByteWriter& w, const std::vector<std::pair<double, double>>& points) {
  w.put(uint64_t(points.size()));
  for (const auto& [x, y] : points) w.put(x), w.put(y);
}

std::vector<std::pair<double, double>> get_points(ByteReader& r) {
  const uint64_t n = r.get<uint64_t>();
  if (n > r.remaining() / 16) throw std::out_of_range("a curve longer than the file");
  std::vector<std::pair<double, double>> points(n);
  for (auto& [x, y] : points) x = r.get<double>(), y = r.get<double>();
  return points;
}

// "train.steps (checkpoint 200, config.json 400)" for every leaf that differs.
std::string differing_keys(const json& checkpoint, const json& config) {
  std::string out;
  int shown = 0;
  for (const json& op : json::diff(checkpoint, config)) {
    std::string key = op.value("path", "");
    if (!key.empty() && key[0] == '/') key.erase(0, 1);
    std::replace(key.begin(), key.end(), '/', '.');
    const json::json_pointer p(op.value("path", ""));
    const std::string was = checkpoint.contains(p) ? checkpoint.at(p).dump() : "absent";
    const std::string is = config.contains(p) ? config.at(p).dump() : "absent";
    if (shown++ < 5) out += fmt::format("{}{} (checkpoint {}, config {})", out.empty() ? "" : ", ", key, was, is);
  }
  if (shown > 5) out += fmt::format(" and {} more", shown - 5);
  return out.empty() ? "the same keys, another hash" : out;
}

}  // namespace

void RunRecords::save(ByteWriter& w) const {
  w.put_array(step_ms);
  w.put_array(recent_losses);
  for (double v : {train_s, best_val, last_val, last_val_acc, ms_since_log, wall_s}) w.put(v);
  w.put(int32_t(steps_since_log));
  w.put(int32_t(resumes));
  put_points(w, train_curve);
  put_points(w, val_curve);
}

void RunRecords::load(ByteReader& r) {
  step_ms = r.get_vector<double>();
  recent_losses = r.get_vector<double>();
  for (double* v : {&train_s, &best_val, &last_val, &last_val_acc, &ms_since_log, &wall_s}) *v = r.get<double>();
  steps_since_log = r.get<int32_t>();
  resumes = r.get<int32_t>();
  train_curve = get_points(r);
  val_curve = get_points(r);
}

bool has_checkpoint(const std::string& dir) {
  std::error_code ec;
  // anything there: a FIFO or a directory is then refused by the reader, naming it, rather than
  // taken for "no checkpoint"
  return fs::exists(fs::symlink_status(fs::path(dir) / kCheckpointFile, ec));
}

CheckpointWrite save_checkpoint(const std::string& dir, const json& config, Session& session, const RunRecords& records,
                                const LogSizes& sizes) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string text = config.dump();
  ByteWriter w;
  w.bytes().append(kMagic, sizeof kMagic);
  w.put(kCheckpointFormat);
  w.put(fnv1a(text));
  w.put_string(text);
  w.put(session.data().data_hash());
  session.save_state(w);
  records.save(w);
  for (int64_t s : {sizes.metrics, sizes.layers, sizes.stats, sizes.ranges}) w.put(s);
  w.put(crc_of(w.bytes().data(), w.bytes().size()));
  write_file_atomically((fs::path(dir) / kCheckpointFile).string(), w.bytes());
  return {int64_t(w.bytes().size()),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()};
}

LogSizes parse_checkpoint(const std::string& bytes, const std::string& path, const json& config, Session& session,
                          RunRecords& records) {
  if (bytes.size() < sizeof kMagic + 4 + 8 + 4 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw InputError(fmt::format("{}: not a normtool checkpoint", path));
  ByteReader header(std::string_view(bytes).substr(sizeof kMagic));
  const uint32_t format = header.get<uint32_t>();
  if (format != kCheckpointFormat)
    throw InputError(
        fmt::format("{}: checkpoint format version {}, this normtool reads version {} (resume it with "
                    "the normtool that wrote it, or start the run again)",
                    path, format, kCheckpointFormat));
  uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  if (crc_of(bytes.data(), bytes.size() - 4) != stored_crc)
    throw InputError(fmt::format("{}: corrupt (its CRC-32 does not match; {} bytes)", path, bytes.size()));
  ByteReader r(std::string_view(bytes).substr(sizeof kMagic, bytes.size() - sizeof kMagic - 4));
  LogSizes sizes;
  try {
    r.get<uint32_t>();
    const uint64_t hash = r.get<uint64_t>();
    const std::string text = r.get_string();
    if (hash != fnv1a(config.dump())) {
      const json recorded = json::parse(text, nullptr, false);
      throw InputError(fmt::format("{}: written for another config: {}", path,
                                   recorded.is_discarded() ? "unreadable" : differing_keys(recorded, config)));
    }
    const uint64_t data_print = r.get<uint64_t>();
    if (data_print != session.data().data_hash()) {
      const json& d = config.contains("data") ? config["data"] : json::object();
      throw InputError(
          fmt::format("{}: written for other data: the dataset {}{} has changed since the checkpoint "
                      "(a file added, removed or edited); start the run again",
                      path, d.value("dataset", "?"), d.value("path", "").empty() ? "" : " at " + d.value("path", "")));
    }
    session.load_state(r);
    if (session.steps_done() < 0 || session.steps_done() > session.config().train.steps)
      throw InputError(fmt::format("{}: records step {}, outside 0..train.steps = {}: not a checkpoint of this run",
                                   path, session.steps_done(), session.config().train.steps));
    records.load(r);
    for (int64_t* s : {&sizes.metrics, &sizes.layers, &sizes.stats, &sizes.ranges}) *s = r.get<int64_t>();
    if (r.remaining() != 0) throw std::length_error("bytes after the end");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {  // a valid CRC over another model's shapes: a bug, or a forged file
    throw InputError(fmt::format("{}: does not fit this run's model: {}", path, e.what()));
  }
  return sizes;
}

// What this session's checkpoint may weigh: its weights and the optimizer's two moments (12 bytes
// a parameter), with room to spare (32), plus 64 MiB for the records (a few bytes a step). A
// larger file is not one of its checkpoints, and is refused before it is read (a sparse file of
// 4 GB was read whole: 26 s and 4 GB of memory).
int64_t checkpoint_bound(Session& session) {
  return (int64_t(64) << 20) + 32 * int64_t(session.params().parameter_count());
}

LogSizes load_checkpoint(const std::string& dir, const json& config, Session& session, RunRecords& records) {
  const std::string path = (fs::path(dir) / kCheckpointFile).string();
  const LogSizes sizes = parse_checkpoint(read_file(path, checkpoint_bound(session)), path, config, session, records);
  for (const auto& [name, size] : {std::pair{"metrics.jsonl", sizes.metrics}, std::pair{"layers.jsonl", sizes.layers},
                                   std::pair{"stats.csv", sizes.stats}, std::pair{"ranges.csv", sizes.ranges}}) {
    const std::string log = (fs::path(dir) / name).string();
    std::error_code ec;
    if (const auto st = fs::symlink_status(log, ec); fs::exists(st) && !fs::is_regular_file(st))
      throw InputError(
          fmt::format("{}: not a regular file (a directory, a link or a device): the run directory was "
                      "changed after the checkpoint",
                      log));
    const auto actual = fs::file_size(log, ec);
    if (ec || size < 0 || int64_t(actual) < size)
      throw InputError(
          fmt::format("{}: holds {} bytes where the checkpoint records {}: the run directory was "
                      "changed after the checkpoint",
                      log, ec ? 0 : int64_t(actual), size));
    char last = '\n';
    if (size > 0) {
      std::ifstream f(log, std::ios::binary);
      f.seekg(size - 1);
      if (!f.get(last)) last = 0;
    }
    if (last != '\n')  // a donor's checkpoint: cutting there would leave half a line
      throw InputError(
          fmt::format("{}: the checkpoint records {} bytes, which is not the end of a line there: the "
                      "checkpoint is not this run directory's",
                      log, size));
  }
  return sizes;
}

}  // namespace nt
