// fashion-mnist (Debian package `dataset-fashion-mnist`, /usr/share/datasets/fashion-mnist):
// the four IDX .gz files; train 60,000 images, validation = the 10,000 test images; pixels
// as value / 255 in [0, 1], 784 inputs, 10 classes, no other preprocessing.
#include <fmt/format.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>

#include "data/dataset.h"

namespace nt {

namespace {

constexpr const char* kPackage = "install the Debian package 'dataset-fashion-mnist', or set data.path";

// The most data bytes an IDX file of fashion-mnist may promise (60,000 images of 28 x 28 is 47 MB):
// a header promising more is refused before its data is read. Each byte becomes a float, so the
// file takes five times this in memory: 256 MiB (342,000 images) takes 1.3 GB.
constexpr uint64_t kMaxIdxBytes = uint64_t(256) << 20;

uint32_t big_endian(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

// Up to `n` more bytes of f onto out; the number read (short at the end of the data).
std::size_t read_some(gzFile f, std::vector<uint8_t>& out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const std::size_t at = out.size();
    out.resize(at + std::min<std::size_t>(n - got, 1 << 20));
    const int r = gzread(f, out.data() + at, unsigned(out.size() - at));
    out.resize(at + std::size_t(std::max(r, 0)));
    if (r <= 0) break;
    got += std::size_t(r);
  }
  return got;
}

}  // namespace

std::vector<uint8_t> read_idx(const std::string& path, uint32_t magic, std::vector<uint32_t>& dims) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throw DataError(fmt::format("{}: cannot read: {}", path, ec.message()));
  if (!std::filesystem::exists(status)) throw DataError(fmt::format("{}: missing ({})", path, kPackage));
  if (!std::filesystem::is_regular_file(status))  // a FIFO would hang, /dev/zero never end
    throw DataError(fmt::format("{}: not a regular file (a FIFO, a device or a directory) ({})", path, kPackage));
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw DataError(fmt::format("{}: cannot read: {}", path, std::generic_category().message(errno)));
  const uint32_t ndim = magic & 0xff;
  const std::size_t header = 4 + 4 * ndim;
  std::vector<uint8_t> bytes;
  std::string problem;
  uint64_t count = 1;
  if (read_some(f, bytes, header) < header || big_endian(bytes.data()) != magic) {
    problem = fmt::format("not an IDX file with magic {:08x}", magic);
  } else {
    dims.clear();
    for (uint32_t i = 0; i < ndim; ++i) {
      dims.push_back(big_endian(bytes.data() + 4 + 4 * i));
      count = std::min(kMaxIdxBytes + 1, count * dims.back());  // no overflow: both factors < 2^32
    }
    if (count > kMaxIdxBytes) {
      problem = fmt::format("its header promises more than {} bytes of data", kMaxIdxBytes);
    } else {
      // what the header promises and one byte more, to see a file that goes on: never more
      const std::size_t got = read_some(f, bytes, std::size_t(count) + 1);
      if (got != count)
        problem = got > count ? fmt::format("more data than the {} bytes its header promises", count)
                              : fmt::format("truncated: {} bytes of data, the header promises {}", got, count);
    }
  }
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string what = err != Z_OK && err != Z_STREAM_END ? msg : "";
  gzclose(f);
  if (!what.empty()) throw DataError(fmt::format("{}: corrupt gzip data: {} ({})", path, what, kPackage));
  if (!problem.empty()) throw DataError(fmt::format("{}: {} ({})", path, problem, kPackage));
  return std::vector<uint8_t>(bytes.begin() + std::ptrdiff_t(header), bytes.end());
}

namespace {

void load_split(const std::string& dir, const char* prefix, std::vector<float>& x, std::vector<int32_t>& y) {
  std::vector<uint32_t> idims, ldims;
  const auto images = read_idx(fmt::format("{}/{}-images-idx3-ubyte.gz", dir, prefix), 0x803, idims);
  const auto labels = read_idx(fmt::format("{}/{}-labels-idx1-ubyte.gz", dir, prefix), 0x801, ldims);
  if (idims[1] != 28 || idims[2] != 28)  // kFashionMnistPixels = 28 x 28
    throw DataError(fmt::format("{}/{}-images-idx3-ubyte.gz: images of {}x{}, expected 28x28 ({})", dir, prefix,
                                idims[1], idims[2], kPackage));
  if (idims[0] != ldims[0])
    throw DataError(fmt::format("{}/{}-*: {} images but {} labels", dir, prefix, idims[0], ldims[0]));
  x.resize(images.size());
  for (std::size_t i = 0; i < images.size(); ++i) x[i] = float(images[i]) / 255.0f;
  y.assign(labels.begin(), labels.end());
  for (int32_t label : y)
    if (label > 9) throw DataError(fmt::format("{}/{}-labels: label {} out of 0..9", dir, prefix, label));
}

}  // namespace

ClassificationData fashion_mnist(const std::string& dir) {
  ClassificationData d;
  d.source = "fashion-mnist at " + dir;
  d.dim = kFashionMnistPixels;
  d.classes = kFashionMnistClasses;
  load_split(dir, "train", d.train_x, d.train_y);
  load_split(dir, "t10k", d.val_x, d.val_y);
  return d;
}

}  // namespace nt
