// ByteWriter / ByteReader: a flat little-endian binary stream (the checkpoint's format,
// train/checkpoint.h). Numbers are stored as their bytes, arrays with their length first. A read
// past the end, or an array longer than what remains, throws std::out_of_range: a truncated file
// is never read as a shorter one.
#pragma once
#include <cstdint>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace nt {

static_assert(std::endian::native == std::endian::little, "checkpoints are written little-endian");

class ByteWriter {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void put_array(const T* data, std::size_t n) {
    put(uint64_t(n));
    if (n) bytes_.append(reinterpret_cast<const char*>(data), n * sizeof(T));
  }
  template <class T>
  void put_array(const std::vector<T>& v) { put_array(v.data(), v.size()); }
  void put_string(std::string_view s) { put_array(s.data(), s.size()); }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  // An array of exactly n values into data (a length other than n is a std::length_error).
  template <class T>
  void get_array(T* data, std::size_t n) {
    const uint64_t stored = get<uint64_t>();
    if (stored != n)
      throw std::length_error("an array of " + std::to_string(stored) + " values where " + std::to_string(n) +
                              " were expected");
    if (n) std::memcpy(data, take(n * sizeof(T)), n * sizeof(T));  // data may be null when n is 0
  }
  template <class T>
  std::vector<T> get_vector() {
    const uint64_t n = get<uint64_t>();
    if (n > remaining() / sizeof(T)) throw std::out_of_range("an array longer than the file");
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  std::string get_string() {
    const std::vector<char> v = get_vector<char>();
    return {v.begin(), v.end()};
  }
  std::size_t remaining() const { return bytes_.size() - at_; }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
  const char* take(std::size_t n) {
    if (n > remaining()) throw std::out_of_range("the file ends early");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
};

}  // namespace nt
