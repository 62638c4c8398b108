#include "io/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "core/errors.h"

namespace nt {

WriteError::WriteError(const std::string& path, int error)
    : std::runtime_error(path + ": cannot write: " + std::strerror(error)), path_(path) {}
WriteError::WriteError(const std::string& path, const std::string& what)
    : std::runtime_error(path + ": cannot write: " + what), path_(path) {}

namespace {

// Every byte of `text` to fd; false with errno set when the disk (or anything) refuses.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    text.remove_prefix(std::size_t(n));
  }
  return true;
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());  // a stale one, or a planted symlink: O_EXCL creates a file of our own
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError(path, errno);
  const bool written = write_all(fd, text);
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;  // NFS and quota report late, at close
  const int close_errno = errno;
  if (!written || !closed) {
    ::unlink(tmp.c_str());
    throw WriteError(path, !written ? write_errno : close_errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw WriteError(path, e);
  }
}

void make_own_subdirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0) return;
  const int e = errno;
  struct stat st {};
  if (e == EEXIST && ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
  throw UsageError(fmt::format("{}: cannot be the directory normtool writes into: {}", dir,
                               e != EEXIST ? std::strerror(e)
                               : S_ISLNK(st.st_mode) ? "a symbolic link (not followed)"
                                                     : "something else is there"));
}

int open_for_writing(const std::string& path, int flags, bool fresh) {
  if (fresh) {
    ::unlink(path.c_str());
    flags |= O_CREAT | O_EXCL;
  }
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_nlink > 1) {
    ::close(fd);
    errno = EMLINK;
    return -1;
  }
  return fd;
}

std::string open_error(int error) {
  if (error == ELOOP) return "a symbolic link (not followed)";
  if (error == EMLINK) return "a file with another hard link (not written through)";
  return std::strerror(error);
}

void make_output_directory(const std::string& dir, const std::string& option) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("{}: cannot create the directory: {}", option,
                                 ec ? ec.message() : std::string("a file or a dangling link is in the way")));
  const std::string probe = (std::filesystem::path(dir) / ".write-test").string();
  ::unlink(probe.c_str());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError(fmt::format("{}: cannot write there: {}", option, std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

AppendFile::AppendFile(std::string path, int64_t truncate_to) : path_(std::move(path)) {
  fd_ = open_for_writing(path_, O_WRONLY | O_CREAT | O_APPEND);
  if (fd_ < 0) throw WriteError(path_, open_error(errno));
  if (truncate_to >= 0 && ::ftruncate(fd_, truncate_to) != 0) throw WriteError(path_, errno);
  size_ = ::lseek(fd_, 0, SEEK_END);
}

DirectoryLock::DirectoryLock(const std::string& dir, const std::string& what) {
  const std::string path = dir + "/.lock";
  fd_ = open_for_writing(path, O_RDWR | O_CREAT);
  if (fd_ < 0) throw UsageError(fmt::format("{}: cannot create {}: {}", what, path, open_error(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    (void)!::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    throw UsageError(fmt::format("{}: another normtool (pid {}) is working in {}; wait for it, or choose another "
                                 "directory", what, *pid ? pid : "?", dir));
  }
  const std::string me = std::to_string(::getpid());
  (void)!::ftruncate(fd_, 0);
  (void)!::pwrite(fd_, me.data(), me.size(), 0);
}

// Unlocked before it is closed: a flock belongs to the open file, which a child forked meanwhile
// (for a run, for gnuplot) shares until its exec closes it (O_CLOEXEC). Closing alone would leave
// the lock held for that while, and the next sweep of this process on the directory refused.
DirectoryLock::~DirectoryLock() {
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

bool DirectoryLock::held(const std::string& dir) {
  const int fd = ::open((dir + "/.lock").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  if (!busy) ::flock(fd, LOCK_UN);  // as the destructor does: a child forked meanwhile must not keep it
  ::close(fd);
  return busy;
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

AppendFile::AppendFile(AppendFile&& o) noexcept
    : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)), size_(o.size_) {}

AppendFile& AppendFile::operator=(AppendFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = o.size_;
  }
  return *this;
}

void AppendFile::append(std::string_view record) {
  if (record.empty()) return;
  if (!write_all(fd_, record)) {
    const int e = errno;
    if (::ftruncate(fd_, size_) != 0) {  // cut the partial record off; if even that fails, say so
      throw WriteError(path_, std::string(std::strerror(e)) + ", and the partial record could not be removed");
    }
    throw WriteError(path_, e);
  }
  size_ += int64_t(record.size());
}

}  // namespace nt
