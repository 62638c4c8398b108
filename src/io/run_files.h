// RunFiles: the one writer of a run directory (spec: "Run directory").
//   config.json    the resolved config, written first
//   metrics.jsonl  one object a line          layers.jsonl  one object a line
//   stats.csv      step,layer,site,position,mean,std; a step's rows written together
//   ranges.csv     step,layer,site,position,max_abs,fp16_outside,int8_snr_db,int8_tensor_snr_db
//                  (train/site_stats.h)
//   summary.json   rewritten whole and atomically at every update (io/files.h)
//   index.html     a page of the run, rewritten with summary.json (io/run_page.h)
// The logs grow by whole records only (io/files.h: AppendFile), so a run stopped at any moment,
// or by a full disk, leaves files that parse and end at a whole line. A failed write throws
// WriteError naming the file.
//
// .reserve: 64 KiB held on the run's disk from the start and given back by release_reserve()
// when a write fails, so that a full disk still gets a truthful summary.json ("failed", the
// step it stopped at); removed when the run ends.
//
// .lock: the run directory's lock (io/files.h: DirectoryLock), taken by a new run here and by
// `run --resume` before it reads the checkpoint; a second normtool in the directory is refused.
#pragma once
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "io/files.h"
#include "io/run_page.h"

namespace nt {

// Where the logs stand: their sizes in bytes (a checkpoint records them; a resumed run cuts the
// logs back to them).
struct LogSizes {
  int64_t metrics = 0, layers = 0, stats = 0, ranges = 0;
};

// <dir>/summary.json as an object; null when there is none or it is not JSON (a run killed
// before its first summary). An InputError naming the file when it is JSON that
// config/user_json.h refuses (nested too deep, a key twice, a number out of range) or not an
// object, and naming the key when a key that normtool reads holds another JSON type (a
// hand-edited file): status a string, steps_completed an integer, final_* and steps_per_s
// numbers or null, diverged a boolean.
nlohmann::json read_summary(const std::string& dir);

// A line of <dir>/metrics.jsonl that has a loss: train or validation, and the accuracy of a
// classifier's validation (NaN otherwise).
struct LossPoint {
  int step;
  bool val;
  double loss, acc;
  double grad_norm = NAN;  // a train line's gradient norm before clipping (NaN where absent)
};
// Every line of <dir>/metrics.jsonl with a loss, in file order (a diverged or skipped step's null
// loss left out); empty when there is no such file. Read by io/json_file.h: a FIFO, an oversized
// file or a line whose step, split, loss or acc has another type is an InputError naming the file,
// the line and the key.
std::vector<LossPoint> read_losses(const std::string& dir);

// read_losses as curves of (step, value): the validation loss, the validation accuracy where it is
// a number, the train loss.
struct LossCurves {
  std::vector<std::pair<int, double>> val_loss, val_acc, train_loss;
};
LossCurves read_loss_curves(const std::string& dir);

// The tables of a run read back: a missing column, or a value that is not a number (a step,
// layer or position that is not a whole number), is an InputError naming the file, the row and
// the column. A position without a row is NaN.
// <dir>/stats.csv at its last logged step: (layer, site) -> mean and std per position.
struct PositionStats {
  std::vector<double> mean, std;
};
std::map<std::pair<int, std::string>, PositionStats> last_stats(const std::string& dir);
// <dir>/ranges.csv at `step` (-1: its last logged step): (layer, site) -> per position.
struct PositionRanges {
  std::vector<double> max_abs, fp16_outside, int8_snr_db, int8_tensor_snr_db;
};
std::map<std::pair<int, std::string>, PositionRanges> ranges_at(const std::string& dir, int step = -1);

// A new directory for a command's default output (`run`, `compare` without --out): `base`
// (runs/<name>-<YYYYmmdd-HHMMSS>, io/paths.h), or when that name is taken `base`-2, -3, ..., each
// tried with mkdir(2), which fails when the name exists: two commands started in the same second
// never share one, and an earlier one's directory is never written into. Its parents are made
// first. A UsageError naming `base` when none can be made.
std::string make_new_directory(const std::string& base);

class RunFiles {
 public:
  // Creates `dir`; an existing non-empty directory, or a path where no directory can be made or
  // written (under a file, read-only, /proc), is a UsageError, and nothing is left behind.
  explicit RunFiles(std::string dir);
  // Reopens the run directory `dir` of a run being resumed, its logs cut back to `sizes`; the
  // caller holds the directory's lock.
  RunFiles(std::string dir, const LogSizes& sizes);
  ~RunFiles();
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const char* name) const;
  void write_config(const nlohmann::json& config);  // and the config's part of index.html
  void metric(const nlohmann::json& record);
  void layer(const nlohmann::json& record);
  void stat(int step, int layer, const char* site, int position, double mean, double std);  // buffered
  void range(int step, int layer, const char* site, int position, double max_abs, double fp16_outside,
             double int8_snr_db, double int8_tensor_snr_db);  // buffered, like stat()
  void flush_stats();                                         // stats.csv and ranges.csv
  void write_summary(const nlohmann::json& summary);          // and index.html from it
  LogSizes sizes();                                           // after flushing the statistics

  void release_reserve();  // after a failed write: room for the last summary

 private:
  std::string dir_;
  std::unique_ptr<DirectoryLock> lock_;  // a new run's; released last
  AppendFile metrics_, layers_, stats_, ranges_;
  std::string stats_buffer_, ranges_buffer_;
  RunPageConfig page_config_;  // from write_config, or a resumed run's config.json
  void open_logs(const LogSizes* sizes);
  void hold_reserve();
};

}  // namespace nt
