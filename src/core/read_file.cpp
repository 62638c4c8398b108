#include "core/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"

namespace nt {

namespace {

// What st_mode is, for a message.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::optional<std::string> read(const std::string& path, int64_t max_bytes, bool absent_ok) {
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT && absent_ok) return std::nullopt;
    throw InputError(fmt::format("{}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputError(fmt::format("{}: cannot read it: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw InputError(fmt::format("{}: {}, expected a regular file", path, kind_of(st.st_mode)));
  if (st.st_size > max_bytes)
    throw InputError(
        fmt::format("{}: {} bytes, more than the {} bytes such a file may hold", path, int64_t(st.st_size), max_bytes));
  std::string text;
  text.reserve(std::size_t(st.st_size));
  char buffer[1 << 16];
  for (;;) {  // a file that grows while it is read stops at the bound too
    const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("{}: cannot read it: {}", path, std::strerror(errno)));
    if (n == 0) break;
    if (int64_t(text.size()) + n > max_bytes)
      throw InputError(fmt::format("{}: more than the {} bytes such a file may hold", path, max_bytes));
    text.append(buffer, std::size_t(n));
  }
  return text;
}

}  // namespace

std::string read_file(const std::string& path, int64_t max_bytes) { return *read(path, max_bytes, false); }

std::optional<std::string> read_file_if_present(const std::string& path, int64_t max_bytes) {
  return read(path, max_bytes, true);
}

}  // namespace nt
