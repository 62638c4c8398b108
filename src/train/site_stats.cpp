#include "train/site_stats.h"

#include <cmath>

namespace nt {

void site_statistics(Tensor<float> x, int B, int T, const float* mask, std::vector<double>& mean,
                     std::vector<double>& std) {
  const int C = x.cols;
  mean.assign(T, 0.0);
  std.assign(T, 0.0);
  std::vector<double> count(T, 0.0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const int64_t row = int64_t(b) * T + t;
      if (mask && mask[row] == 0.0f) continue;
      const float* v = x.data + row * C;
      double m = 0, s = 0;
      for (int j = 0; j < C; ++j) m += v[j];
      m /= C;
      for (int j = 0; j < C; ++j) s += (v[j] - m) * (v[j] - m);
      mean[t] += m;
      std[t] += std::sqrt(s / C);
      count[t] += 1;
    }
  for (int t = 0; t < T; ++t)
    if (count[t] > 0) mean[t] /= count[t], std[t] /= count[t];
    else mean[t] = std[t] = NAN;
}

}  // namespace nt
