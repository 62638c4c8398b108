// Per-position statistics of a norm site (stats.csv): for each row vector of the site (one
// token), its mean and population std over the hidden dimension; then, per position, the
// average of those over the batch's real tokens (mask 1). mean/std get T entries.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace nt {

void site_statistics(Tensor<float> x, int B, int T, const float* mask, std::vector<double>& mean,
                     std::vector<double>& std);

}  // namespace nt
