// gettext-de: English-to-German pairs from the GNU gettext catalogs (*.mo) Debian installs in
// /usr/share/locale/de/LC_MESSAGES (docs/usage.md, "Seq2seq datasets").
//
// A .mo file (GNU gettext manual, "The Format of GNU MO Files"), 32-bit words in the byte order
// its magic 0x950412de reads in:
//   offset 0 magic, 4 revision (major 0 or 1), 8 N strings, 12 O (table of the originals),
//   16 T (table of the translations); entry i of a table: (length, offset) at O + 8 i / T + 8 i.
// Every offset and length is checked against the file's size before it is read; the file must
// be a regular file of at most kMaxMoBytes.
//
// Pair rules: (msgid, msgstr) of one entry, skipping the header (empty msgid), an entry with a
// context (byte 0x04 in msgid) or plural forms (a NUL inside), an empty msgstr or one identical
// to msgid, any '%', control byte (< 0x20, 0x7f; newline among them) in either, and either longer
// than max_len bytes. Deduplicated by msgid (the first in file-name order, then entry order),
// sorted by msgid bytes.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

#include "config/gettext_catalogs.h"
#include "data/dataset.h"

namespace nt {

namespace {

// The whole file, refused unless it is a regular file of at most kMaxMoBytes. O_NONBLOCK so that
// opening a FIFO does not wait for a writer; fstat on the open descriptor decides.
std::string read_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw DataError(fmt::format("{}: cannot read: {}", path, std::generic_category().message(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw DataError(fmt::format("{}: not a regular file", path));
  if (st.st_size > kMaxMoBytes)
    throw DataError(
        fmt::format("{}: {} bytes, more than a catalog may hold ({} bytes)", path, int64_t(st.st_size), kMaxMoBytes));
  std::string bytes(std::size_t(st.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw DataError(fmt::format("{}: read failed after {} bytes", path, got));
    got += std::size_t(n);
  }
  return bytes;
}

}  // namespace

std::vector<Seq2SeqPair> read_mo(const std::string& path) {
  const std::string f = read_regular_file(path);
  const uint64_t size = f.size();
  auto bad = [&](const std::string& why) { return DataError(fmt::format("{}: not a GNU .mo catalog: {}", path, why)); };
  if (size < 20) throw bad(fmt::format("{} bytes, shorter than the 20-byte header", size));
  auto word = [&](uint64_t at, bool swap) {
    uint32_t w;
    std::memcpy(&w, f.data() + at, 4);
    return swap ? __builtin_bswap32(w) : w;
  };
  bool swap = false;
  if (word(0, false) != 0x950412deu) {
    if (word(0, true) != 0x950412deu) throw bad(fmt::format("magic {:#010x}, expected 0x950412de", word(0, false)));
    swap = true;
  }
  if ((word(4, swap) >> 16) > 1) throw bad(fmt::format("revision {:#x}, expected major 0 or 1", word(4, swap)));
  const uint64_t n = word(8, swap), originals = word(12, swap), translations = word(16, swap);
  for (const uint64_t table : {originals, translations})
    if (table > size || n > (size - table) / 8)
      throw bad(fmt::format("a string table of {} entries at offset {} runs past the end ({} bytes)", n, table, size));
  auto string_at = [&](uint64_t table, uint64_t i) {
    const uint64_t len = word(table + 8 * i, swap), at = word(table + 8 * i + 4, swap);
    if (at > size || len > size - at)
      throw bad(fmt::format("string {} ({} bytes at offset {}) runs past the end ({} bytes)", i, len, at, size));
    return f.substr(at, len);
  };
  std::vector<Seq2SeqPair> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) out.push_back({string_at(originals, i), string_at(translations, i)});
  return out;
}

bool gettext_pair_ok(std::string_view msgid, std::string_view msgstr, int max_len) {
  auto clean = [](std::string_view s) {  // no '%', no control byte (NUL, 0x04 and newline among them)
    for (unsigned char ch : s)
      if (ch < 0x20 || ch == 0x7f || ch == '%') return false;
    return true;
  };
  return !msgid.empty() && !msgstr.empty() && msgid != msgstr && int64_t(msgid.size()) <= max_len &&
         int64_t(msgstr.size()) <= max_len && clean(msgid) && clean(msgstr);
}

std::vector<Seq2SeqPair> gettext_pairs(const std::string& dir, const std::vector<std::string>& catalogs, int max_len,
                                       std::vector<std::string>* read) {
  std::vector<std::string> files;
  for (const std::string& stem : catalogs) files.push_back(stem + ".mo");
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  std::map<std::string, std::string> pairs;  // msgid -> msgstr, sorted by msgid bytes
  for (const std::string& name : files) {
    const std::string path = dir + "/" + name;
    struct stat st {};
    const int err = ::stat(path.c_str(), &st) == 0 ? 0 : errno;
    if (err && err != ENOENT && err != ENOTDIR)  // EACCES: not "no such catalog"
      throw DataError(fmt::format("{}: cannot read: {}", path, std::generic_category().message(err)));
    if (err) {
      const std::string stem = name.substr(0, name.size() - 3);
      const std::string package = gettext_catalog_package(stem);
      throw DataError(fmt::format("{}: no such catalog ({}; or leave it out of data.catalogs, or set data.path)", path,
                                  package.empty() ? "it is not in the default list: no known Debian package"
                                                  : fmt::format("install the Debian package '{}'", package)));
    }
    for (Seq2SeqPair& p : read_mo(path))
      if (gettext_pair_ok(p.src, p.tgt, max_len)) pairs.emplace(std::move(p.src), std::move(p.tgt));  // first wins
    if (read) read->push_back(path);
  }
  std::vector<Seq2SeqPair> out;
  out.reserve(pairs.size());
  for (auto& [src, tgt] : pairs) out.push_back({src, tgt});
  return out;
}

}  // namespace nt
