#include "core/number_format.h"

#include <bit>
#include <cmath>

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

namespace nt {

namespace {

// bf16 is the top half of a float: add half an ulp of bf16 (minus one when the kept part is even,
// so that a tie goes to the even neighbour) and cut. Carries run into the exponent, up to inf.
inline uint32_t bf16_round_bits(uint32_t u) {
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  return nan ? (u | 0x00400000u) & 0xffff0000u : (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
}

}  // namespace

uint16_t float_to_bf16_bits(float x) { return uint16_t(bf16_round_bits(std::bit_cast<uint32_t>(x)) >> 16); }
float bf16_bits_to_float(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

uint16_t float_to_fp16_bits(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return sign | 0x7e00u | uint16_t((u >> 13) & 0x3ffu);  // NaN, quiet
  if (u >= 0x477ff000u) return sign | 0x7c00u;                                 // >= 65520: inf
  if (u < 0x38800000u) {
    // below 2^-14: a subnormal (or zero) of fp16, m 2^-24 with m the nearest integer (ties to even)
    // to |x| 2^24, which is exact in float; m = 1024 is 2^-14, the smallest normal, as bits too
    const float m = std::nearbyint(std::bit_cast<float>(u) * 0x1p24f);
    return sign | uint16_t(m);
  }
  // normal: rebias the exponent (127 -> 15), round the fraction from 23 bits to 10
  const uint32_t h = u - 0x38000000u;
  return sign | uint16_t((h + 0xfffu + ((h >> 13) & 1u)) >> 13);
}

float fp16_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, fraction = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: fraction 2^-24
    const float v = float(fraction) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (fraction << 13));  // inf, NaN
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (fraction << 13));
}

float round_to(Precision p, float x) {
  switch (p) {
    case Precision::fp32: return x;
    case Precision::bf16: return std::bit_cast<float>(bf16_round_bits(std::bit_cast<uint32_t>(x)));
    case Precision::fp16: return fp16_bits_to_float(float_to_fp16_bits(x));
  }
  return x;
}

void round_in_place(Precision p, float* x, std::size_t n) {
  if (p == Precision::fp32) return;
  std::size_t i = 0;
  if (p == Precision::bf16) {
    uint32_t* u = reinterpret_cast<uint32_t*>(x);
    for (; i < n; ++i) u[i] = bf16_round_bits(u[i]);  // vectorized by the compiler
    return;
  }
  // fp16: the hardware's conversion (F16C, AVX-512) rounds to nearest even, keeps subnormals
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_storeu_ps(x + i, _mm512_cvtph_ps(h));
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) x[i] = fp16_bits_to_float(float_to_fp16_bits(x[i]));
}

bool all_finite(const float* x, std::size_t n) {
  const uint32_t* u = reinterpret_cast<const uint32_t*>(x);
  uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad |= uint32_t((u[i] & 0x7f800000u) == 0x7f800000u);
  return bad == 0;
}

}  // namespace nt
