// checkpoint.bin: everything the next step of a run depends on, so that `normtool run --resume`
// continues a stopped run exactly (at one thread, the logs come out byte-identical apart from
// their timing fields to those of a run that never stopped).
//
//   "NTCKPT\0\0"  magic                          u32  format version (kCheckpointFormat)
//   u64  FNV-1a hash of the resolved config      str  the resolved config (JSON), to name a
//                                                     differing key
//   u64  the data's fingerprint (data/dataset.h: a hash of every row; a resume on other data is
//        refused, naming the dataset)
//   the session (train/session.h: step count, first loss, batches drawn without a target, data
//   stream, parameters, optimizer moments and step count, BatchNorm running statistics, the loss
//   scale), the trainer's records (RunRecords) and where the logs stood (LogSizes)
//   u32  CRC-32 (zlib) of all that precedes
//
// Written whole to checkpoint.bin.tmp, then renamed over checkpoint.bin (io/files.h), so a
// kill at any moment leaves the previous checkpoint or the new one, never a torn one.
// Beyond its CRC, a checkpoint's fields are checked against the run: the step within
// [0, train.steps], a data stream state that is not all zeros (xoshiro's one fixed point), and
// each log's recorded size within the file and at the end of a line (a checkpoint copied from
// another run would otherwise cut the logs mid-line).
// A checkpoint is taken at the top of a step, before that step's evaluation: the state after
// `step` updates and the logs as they stood then; lines written after it are cut off on resume.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/binary.h"
#include "io/run_files.h"
#include "train/records.h"
#include "train/session.h"

namespace nt {

inline constexpr uint32_t kCheckpointFormat = 4;  // 2: fp16's loss scale; 3: the data's fingerprint;
                                                  // 4: the batches drawn without a target
inline constexpr const char* kCheckpointFile = "checkpoint.bin";

// The checkpoint's size and the time it took to write.
struct CheckpointWrite {
  int64_t bytes = 0;
  double ms = 0;
};

bool has_checkpoint(const std::string& dir);

// Writes <dir>/checkpoint.bin atomically (a WriteError naming it when the disk refuses).
CheckpointWrite save_checkpoint(const std::string& dir, const nlohmann::json& config, Session& session,
                                const RunRecords& records, const LogSizes& sizes);

// Restores session and records from <dir>/checkpoint.bin and returns where the logs stood. An
// InputError when it cannot be used: not a checkpoint, another format version, a corrupt file,
// another config (naming the keys that differ), other data, a step or a stream state that no run
// can have, logs shorter than it records or not ending a line where it records.
LogSizes load_checkpoint(const std::string& dir, const nlohmann::json& config, Session& session,
                         RunRecords& records);
// The checks of load_checkpoint on the file's bytes (`path` names it in messages), all but the
// logs' (fuzz/checkpoint_fuzzer.cpp).
LogSizes parse_checkpoint(const std::string& bytes, const std::string& path, const nlohmann::json& config,
                          Session& session, RunRecords& records);

}  // namespace nt
