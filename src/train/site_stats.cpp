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
  out.int8_tensor_snr_db.assign(T, 0.0);
  std::vector<double> signal(T, 0.0), noise(T, 0.0), tensor_noise(T, 0.0), values(T, 0.0);
  constexpr double kFp16Max = 65504.0, kFp16MinNormal = 0x1p-14;
  auto real = [&](int64_t row) { return !mask || mask[row] != 0.0f; };
  auto error = [](double v, double step) {  // x - x_q for absmax int8 with this step
    const double q = step > 0 ? std::nearbyint(v / step) * step : 0.0;
    return (v - q) * (v - q);
  };
  double tensor_max = 0;
  for (int64_t row = 0; row < int64_t(B) * T; ++row)
    if (real(row))
      for (int j = 0; j < C; ++j) tensor_max = std::max(tensor_max, double(std::abs(x.data[row * C + j])));
  const double tensor_step = tensor_max / 127.0;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const int64_t row = int64_t(b) * T + t;
      if (!real(row)) continue;
      const float* v = x.data + row * C;
      double amax = 0;
      for (int j = 0; j < C; ++j) amax = std::max(amax, double(std::abs(v[j])));
      out.max_abs[t] = std::max(out.max_abs[t], amax);
      const double step = amax / 127.0;
      for (int j = 0; j < C; ++j) {
        const double a = std::abs(double(v[j]));
        out.fp16_outside[t] += a > kFp16Max || (a > 0 && a < kFp16MinNormal);
        signal[t] += double(v[j]) * v[j];
        noise[t] += error(v[j], step);
        tensor_noise[t] += error(v[j], tensor_step);
      }
      values[t] += C;
    }
  auto db = [](double s, double n) { return n > 0 ? 10.0 * std::log10(s / n) : INFINITY; };
  for (int t = 0; t < T; ++t) {
    if (values[t] == 0) {
      out.max_abs[t] = out.fp16_outside[t] = out.int8_snr_db[t] = out.int8_tensor_snr_db[t] = NAN;
      continue;
    }
    out.fp16_outside[t] /= values[t];
    out.int8_snr_db[t] = db(signal[t], noise[t]);
    out.int8_tensor_snr_db[t] = db(signal[t], tensor_noise[t]);
  }
}

}  // namespace nt
