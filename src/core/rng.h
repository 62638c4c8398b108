// Rng: a seeded, fully specified random stream (splitmix64 seeding, xoshiro256** output),
// so that the same seed draws the same numbers with any standard library. Each consumer
// (init, data order, data generation) derives its own stream: Rng(seed, stream_id).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace nt {

class Rng {
 public:
  explicit Rng(uint64_t seed, uint64_t stream = 0) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (stream + 0x632BE59BD9B4E019ull);
    for (auto& s : s_) s = splitmix(x);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0], s_[3] ^= s_[1], s_[1] ^= s_[2], s_[0] ^= s_[3], s_[2] ^= t, s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), without modulo bias (Lemire's method).
  uint64_t below(uint64_t n) {
    __uint128_t m = __uint128_t(next()) * n;
    if (uint64_t(m) < n) {
      const uint64_t threshold = (0 - n) % n;
      while (uint64_t(m) < threshold) m = __uint128_t(next()) * n;
    }
    return uint64_t(m >> 64);
  }

  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)

  // The stream's position, for checkpoints: set_state(state()) continues the same sequence.
  std::array<uint64_t, 4> state() const { return {s_[0], s_[1], s_[2], s_[3]}; }
  void set_state(const std::array<uint64_t, 4>& s) { std::copy(s.begin(), s.end(), s_); }

  double normal() {  // Box-Muller, one value per call
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t s_[4];
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

}  // namespace nt
