// RunFiles: the one writer of a run directory (spec: "Run directory").
//   config.json    the resolved config, written first
//   metrics.jsonl  one object a line          layers.jsonl  one object a line
//   stats.csv      step,layer,site,position,mean,std
//   summary.json   rewritten whole (write to a temporary file, then rename) at each update
// Every record is written as one whole line and flushed, so a run stopped at any moment
// leaves files that parse.
#pragma once
#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace nt {

class RunFiles {
 public:
  // Creates `dir`; an existing non-empty directory is an error (never overwritten silently).
  explicit RunFiles(std::string dir);
  ~RunFiles();
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;

  const std::string& dir() const { return dir_; }
  void write_config(const nlohmann::json& config);
  void metric(const nlohmann::json& record);
  void layer(const nlohmann::json& record);
  void stat(int step, int layer, const char* site, int position, double mean, double std);
  void flush_stats();
  void write_summary(const nlohmann::json& summary);

 private:
  std::string dir_;
  std::FILE* metrics_ = nullptr;
  std::FILE* layers_ = nullptr;
  std::FILE* stats_ = nullptr;
  std::FILE* open(const char* name);
};

}  // namespace nt
