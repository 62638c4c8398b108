// The one way to read a file that the user or an earlier run provides (a config, a run's
// config.json, summary.json, metrics.jsonl, a sweep's sweep.json, a report's result.json): regular
// files only, up to a size bound, then the caller's typed parsing (io/json_file.h for JSON).
// A FIFO, a device (/dev/zero), a directory or a file larger than the bound is an InputError
// naming the file and the reason, never a read that hangs or grows without end. The file is opened
// with O_NONBLOCK, so that opening a FIFO with no writer returns at once.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace nt {

// Bounds, by what the file holds: a document read whole (a config, summary.json, sweep.json,
// result.json) and a log read whole or by lines (metrics.jsonl, layers.jsonl, stats.csv).
inline constexpr int64_t kMaxDocumentBytes = int64_t(16) << 20;
inline constexpr int64_t kMaxLogBytes = int64_t(1) << 30;

// The whole of `path`; an InputError "<path>: <reason>" ("No such file or directory", "a FIFO,
// expected a regular file", ...) when it is missing, not a regular file
// (a FIFO, a device, a directory; a symbolic link is followed to what it names), larger than
// max_bytes, or cannot be read.
std::string read_file(const std::string& path, int64_t max_bytes);
// The same, but std::nullopt when nothing is at `path` (ENOENT): for the files a run may not
// have written yet.
std::optional<std::string> read_file_if_present(const std::string& path, int64_t max_bytes);

}  // namespace nt
