#include "analysis/s_curve.h"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace nt {

namespace {

// sum (y - mean y)^2
double total_squares(const std::vector<double>& y) {
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / double(y.size());
  double s = 0;
  for (double v : y) s += (v - mean) * (v - mean);
  return s;
}

void check_points(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 3) throw std::invalid_argument("a curve fit needs 3 or more (x, y) pairs");
}

struct TanhAt {
  double a, sse;
};

// The best a at this b and its sum of squared residuals, sum y^2 - (sum y t)^2 / sum t^2
TanhAt tanh_at(const std::vector<double>& x, const std::vector<double>& y, double b) {
  double yt = 0, tt = 0, yy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = std::tanh(b * x[i]);
    yt += y[i] * t, tt += t * t, yy += y[i] * y[i];
  }
  if (tt <= 0) return {0, yy};
  return {yt / tt, yy - yt * yt / tt};
}

}  // namespace

CurveFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  check_points(x, y);
  const double n = double(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  const double a = sxx > 0 ? sxy / sxx : 0, b = my - a * mx;
  double sse = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sse += (y[i] - a * x[i] - b) * (y[i] - a * x[i] - b);
  const double sst = total_squares(y);
  return {a, b, sst > 0 ? 1 - sse / sst : 1};
}

CurveFit fit_tanh(const std::vector<double>& x, const std::vector<double>& y) {
  check_points(x, y);
  double ms = 0;
  for (double v : x) ms += v * v;
  const double rms = std::sqrt(ms / double(x.size()));
  if (rms == 0) throw std::invalid_argument("a tanh fit needs an x that is not all 0");
  const int grid = 121;  // 1e-3 .. 1e3 over rms, 20 points a decade
  auto b_at = [&](double k) { return std::pow(10.0, -3 + 6 * k / (grid - 1)) / rms; };
  int best = 0;
  double best_sse = INFINITY;
  for (int k = 0; k < grid; ++k)
    if (const double s = tanh_at(x, y, b_at(k)).sse; s < best_sse) best_sse = s, best = k;
  // golden section in log b over [best - 1, best + 1] of the grid
  double lo = std::log(b_at(std::max(0, best - 1))), hi = std::log(b_at(std::min(grid - 1, best + 1)));
  const double g = (std::sqrt(5.0) - 1) / 2;
  double u = hi - g * (hi - lo), v = lo + g * (hi - lo);
  double fu = tanh_at(x, y, std::exp(u)).sse, fv = tanh_at(x, y, std::exp(v)).sse;
  for (int it = 0; it < 40; ++it) {
    if (fu < fv)
      hi = v, v = u, fv = fu, u = hi - g * (hi - lo), fu = tanh_at(x, y, std::exp(u)).sse;
    else
      lo = u, u = v, fu = fv, v = lo + g * (hi - lo), fv = tanh_at(x, y, std::exp(v)).sse;
  }
  const double b = std::exp((lo + hi) / 2);
  const TanhAt t = tanh_at(x, y, b);
  const double sst = total_squares(y);
  return {t.a, b, sst > 0 ? 1 - t.sse / sst : 1};
}

}  // namespace nt
