// PNG files for the page tests: a small RGB picture written (encode_png) and a browser's screenshot
// read back (decode_png: 8-bit RGB or RGBA, not interlaced, every row filter), so that a test can
// look at the pixels a page rendered.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace nt::test {

struct Rgb {
  uint8_t r, g, b;
  bool operator==(const Rgb&) const = default;
};

struct Picture {
  int width = 0, height = 0;
  std::vector<Rgb> pixels;  // row by row
  Rgb at(int x, int y) const { return pixels[std::size_t(y) * width + x]; }
};

namespace png_detail {
inline uint32_t be32(const std::string& s, std::size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 | uint32_t(uint8_t(s[at + 2])) << 8 |
         uint32_t(uint8_t(s[at + 3]));
}
inline void put32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s += char((v >> shift) & 0xff);
}
inline void chunk(std::string& png, const char* type, const std::string& data) {
  put32(png, uint32_t(data.size()));
  const std::string body = type + data;
  png += body;
  put32(png, uint32_t(crc32(0, reinterpret_cast<const Bytef*>(body.data()), uInt(body.size()))));
}
inline uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return uint8_t(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}
}  // namespace png_detail

inline std::string encode_png(const Picture& p) {
  using namespace png_detail;
  std::string raw;
  for (int y = 0; y < p.height; ++y) {
    raw += char(0);  // filter: none
    for (int x = 0; x < p.width; ++x) raw += {char(p.at(x, y).r), char(p.at(x, y).g), char(p.at(x, y).b)};
  }
  uLongf size = compressBound(uLong(raw.size()));
  std::string packed(size, '\0');
  compress(reinterpret_cast<Bytef*>(packed.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
           uLong(raw.size()));
  packed.resize(size);
  std::string ihdr;
  put32(ihdr, uint32_t(p.width));
  put32(ihdr, uint32_t(p.height));
  ihdr += {char(8), char(2), char(0), char(0), char(0)};  // 8 bits, RGB, deflate, filter 0, no interlace
  std::string png = "\x89PNG\r\n\x1a\n";
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", packed);
  chunk(png, "IEND", "");
  return png;
}

// The picture, or one of width 0 when `png` is not a PNG this reader takes.
inline Picture decode_png(const std::string& png) {
  using namespace png_detail;
  Picture p;
  if (png.size() < 33 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return p;
  const int depth = uint8_t(png[24]), kind = uint8_t(png[25]), interlace = uint8_t(png[28]);
  const int channels = kind == 2 ? 3 : kind == 6 ? 4 : 0;
  if (depth != 8 || channels == 0 || interlace != 0) return p;
  std::string packed;
  for (std::size_t at = 8; at + 8 <= png.size();) {
    const uint32_t length = be32(png, at);
    if (png.compare(at + 4, 4, "IDAT") == 0) packed += png.substr(at + 8, length);
    at += 12 + std::size_t(length);
  }
  const int w = int(be32(png, 16)), h = int(be32(png, 20));
  const std::size_t stride = std::size_t(w) * channels;
  std::vector<uint8_t> raw((stride + 1) * h);
  uLongf size = uLongf(raw.size());
  if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(packed.data()), uLong(packed.size())) != Z_OK ||
      size != raw.size())
    return p;
  std::vector<uint8_t> prev(stride, 0), row(stride);
  p.pixels.reserve(std::size_t(w) * h);
  for (int y = 0; y < h; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= std::size_t(channels) ? row[i - channels] : 0, b = prev[i];
      const int c = i >= std::size_t(channels) ? prev[i - channels] : 0;
      const int predicted = filter == 1   ? a
                            : filter == 2 ? b
                            : filter == 3 ? (a + b) / 2
                            : filter == 4 ? paeth(a, b, c)
                                          : 0;
      row[i] = uint8_t(in[i] + predicted);
    }
    for (int x = 0; x < w; ++x) p.pixels.push_back({row[x * channels], row[x * channels + 1], row[x * channels + 2]});
    prev = row;
  }
  p.width = w, p.height = h;
  return p;
}

}  // namespace nt::test
