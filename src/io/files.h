// Files written so that a full disk, a kill or a crash never leaves a short or torn record:
//   write_file_atomically  the whole text to <path>.tmp, every write and the close checked, then
//                          renamed over <path>; on any failure the temporary file is removed and
//                          <path> keeps its previous content
//   AppendFile             a log that grows by whole records: a record that does not fit is
//                          cut back off (ftruncate), so the file ends at the last whole record
//   DirectoryLock          an exclusive flock on <dir>/.lock: one normtool at a time in a run or
//                          sweep directory (run, run --resume and sweeps take it)
// Neither follows a symlink at the file it writes (O_NOFOLLOW, and the temporary file is created
// afresh with O_EXCL): a link planted in a run directory is an error, never a file written
// outside it.
// Both throw WriteError, whose message names the file and the system's reason.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nt {

class WriteError : public std::runtime_error {
 public:
  WriteError(const std::string& path, int error);  // "<path>: cannot write: <strerror(error)>"
  WriteError(const std::string& path, const std::string& what);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void write_file_atomically(const std::string& path, std::string_view text);

// A directory inside an output directory that normtool writes into (a sweep's logs/, a report's
// claim directories): created when missing; a UsageError naming it when something else is there,
// a symbolic link included (O_NOFOLLOW guards a file's name, not the directories above it).
void make_own_subdirectory(const std::string& dir);

// Opens `path` for writing in place (flags: O_WRONLY or O_RDWR, with O_APPEND, O_CREAT, ...) as a
// file of normtool's own: never through a symbolic link (O_NOFOLLOW: ELOOP) and never a file with
// another hard link (EMLINK: a victim linked in with `ln`, or every log of a `cp -al` copy of a
// run). With `fresh`, a file already there is unlinked and the file created anew (O_EXCL). Returns
// the descriptor, or -1 with errno set.
int open_for_writing(const std::string& path, int flags, bool fresh = false);
// errno's reason for a message, naming the two refusals of open_for_writing.
std::string open_error(int error);

// Creates the output directory `dir` of a command (parents too) and checks that a file can be
// written there; a UsageError naming `option` ("--out runs/x") and the reason otherwise: a path
// under a file, a dangling link, a read-only file system, /proc.
void make_output_directory(const std::string& dir, const std::string& option);

class DirectoryLock {
 public:
  // Takes <dir>/.lock (created if missing); a UsageError naming `what` (e.g. "--resume runs/x")
  // and the holder's pid when another process holds it.
  DirectoryLock(const std::string& dir, const std::string& what);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  // Whether a process holds <dir>/.lock now (false when there is none).
  static bool held(const std::string& dir);

 private:
  int fd_ = -1;
};

class AppendFile {
 public:
  AppendFile() = default;
  // Opens `path` for appending, created if missing; `truncate_to` >= 0 first cuts it to that
  // many bytes (a resumed run drops what followed its checkpoint).
  AppendFile(std::string path, int64_t truncate_to = -1);
  ~AppendFile();
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;

  void append(std::string_view record);  // all of it, or nothing and a WriteError
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

}  // namespace nt
