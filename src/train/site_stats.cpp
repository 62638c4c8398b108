#include "train/site_stats.h"

#include <algorithm>
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

void range_statistics(Tensor<float> x, int B, int T, const float* mask, RangeStats& out) {
  const int C = x.cols;
  out.max_abs.assign(T, 0.0);
  out.fp16_outside.assign(T, 0.0);
  out.int8_snr_db.assign(T, 0.0);
  std::vector<double> signal(T, 0.0), noise(T, 0.0), values(T, 0.0);
  constexpr double kFp16Max = 65504.0, kFp16MinNormal = 0x1p-14;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const int64_t row = int64_t(b) * T + t;
      if (mask && mask[row] == 0.0f) continue;
      const float* v = x.data + row * C;
      double amax = 0;
      for (int j = 0; j < C; ++j) amax = std::max(amax, double(std::abs(v[j])));
      out.max_abs[t] = std::max(out.max_abs[t], amax);
      const double step = amax / 127.0;
      for (int j = 0; j < C; ++j) {
        const double a = std::abs(double(v[j]));
        out.fp16_outside[t] += a > kFp16Max || (a > 0 && a < kFp16MinNormal);
        const double q = step > 0 ? std::nearbyint(double(v[j]) / step) * step : 0.0;
        signal[t] += double(v[j]) * v[j];
        noise[t] += (double(v[j]) - q) * (double(v[j]) - q);
      }
      values[t] += C;
    }
  for (int t = 0; t < T; ++t) {
    if (values[t] == 0) {
      out.max_abs[t] = out.fp16_outside[t] = out.int8_snr_db[t] = NAN;
      continue;
    }
    out.fp16_outside[t] /= values[t];
    out.int8_snr_db[t] = noise[t] > 0 ? 10.0 * std::log10(signal[t] / noise[t]) : INFINITY;
  }
}

}  // namespace nt
