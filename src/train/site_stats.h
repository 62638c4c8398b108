// Per-position statistics of a norm site (stats.csv): for each row vector of the site (one
// token), its mean and population std over the hidden dimension; then, per position, the
// average of those over the batch's real tokens (mask 1). mean/std get T entries.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace nt {

void site_statistics(Tensor<float> x, int B, int T, const float* mask, std::vector<double>& mean,
                     std::vector<double>& std);

// How well the site's values fit low-precision formats (ranges.csv), per position over the batch's
// real tokens:
//   max_abs       the largest |x|
//   fp16_outside  the share of values outside fp16's normal range: |x| > 65504 (overflow) or
//                 0 < |x| < 2^-14 (subnormal or flushed to zero)
//   int8_snr_db   absmax int8 quantization of each token's vector (q = round(127 x / max|x|)),
//                 10 log10(sum x^2 / sum (x - x_q)^2) over the position's tokens; one outlier in a
//                 vector coarsens the step for all its values (Dettmers et al. 2022)
//   int8_tensor_snr_db  the same with one scale for the whole tensor (max|x| over every real
//                 token of the batch): a token far smaller than the largest loses resolution.
//                 Per-token absmax is blind to each token's scale, per-tensor is not: only here
//                 can narrowing the range across tokens (what a norm does) change the error
struct RangeStats {
  std::vector<double> max_abs, fp16_outside, int8_snr_db, int8_tensor_snr_db;
};
void range_statistics(Tensor<float> x, int B, int T, const float* mask, RangeStats& out);

}  // namespace nt
