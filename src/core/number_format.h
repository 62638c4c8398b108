// The number formats a run can train in (train.precision), emulated on float: a value "in bf16"
// or "in fp16" is the float nearest to it that the format can hold, rounded to nearest, ties to
// even, as the hardware conversions do.
//
//   fp32  8 exponent bits, 23 fraction bits: nothing to round
//   bf16  8 exponent bits,  7 fraction bits: fp32's range, ~2.4 decimal digits; subnormals kept
//   fp16  5 exponent bits, 10 fraction bits: largest finite 65504, smallest normal 2^-14,
//         subnormals down to 2^-24; |x| >= 65520 becomes inf (the tie at 65520 rounds to the
//         even neighbour, which is inf)
// NaN stays NaN (made quiet, sign kept); inf stays inf.
#pragma once
#include <cstddef>
#include <cstdint>

namespace nt {

enum class Precision { fp32, bf16, fp16 };
inline constexpr const char* kPrecisionNames[] = {"fp32", "bf16", "fp16"};  // as the config spells them

// The bit patterns of the formats (for the tests, and for whoever stores them).
uint16_t float_to_bf16_bits(float x);
float bf16_bits_to_float(uint16_t h);
uint16_t float_to_fp16_bits(float x);
float fp16_bits_to_float(uint16_t h);

// x rounded to the format.
float round_to(Precision p, float x);

// Every one of the n values rounded to the format in place (vectorized; the same result as
// round_to on each).
void round_in_place(Precision p, float* x, std::size_t n);

// Whether all n values are finite (no inf, no NaN).
bool all_finite(const float* x, std::size_t n);

}  // namespace nt
