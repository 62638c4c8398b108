#include "analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <stdexcept>

namespace nt {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = 0.5 * double(i + j);  // the average rank of a tie
    i = j + 1;
  }
  return r;
}

// The means of two series and their centered sums of products (two passes: the means first).
struct Moments {
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
};
Moments moments(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = double(x.size());
  Moments m;
  m.mx = std::accumulate(x.begin(), x.end(), 0.0) / n, m.my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  for (std::size_t i = 0; i < x.size(); ++i) {
    m.sxy += (x[i] - m.mx) * (y[i] - m.my);
    m.sxx += (x[i] - m.mx) * (x[i] - m.mx);
    m.syy += (y[i] - m.my) * (y[i] - m.my);
  }
  return m;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const Moments m = moments(x, y);
  return m.sxy / std::sqrt(m.sxx * m.syy);
}

// Lentz's continued fraction for the incomplete beta (Numerical Recipes' betacf).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  d = 1 / (std::abs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m < 400; ++m) {
    const int m2 = 2 * m;
    for (const double aa :
         {m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))}) {
      d = 1 + aa * d;
      d = 1 / (std::abs(d) < tiny ? tiny : d);
      c = 1 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      h *= d * c;
    }
    if (std::abs(d * c - 1) < 1e-15) break;
  }
  return h;
}

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("spearman: two series of the same length >= 2");
  return pearson(ranks(x), ranks(y));
}

LinearFit linear_fit(const std::vector<double>& x, const std::vector<double>& y) {
  const Moments m = moments(x, y);
  LinearFit f;
  f.slope = m.sxy / m.sxx;
  f.intercept = m.my - f.slope * m.mx;
  f.r2 = m.syy > 0 ? m.sxy * m.sxy / (m.sxx * m.syy) : 1.0;
  return f;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  return x < (a + 1) / (a + b + 2) ? front * beta_fraction(a, b, x) / a : 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|)
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("student_t_quantile: p in (0, 1)");
  double lo = -1e6, hi = 1e6;  // bisection on the monotone CDF, to double precision
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Interval mean_interval(const std::vector<double>& v, double level) {
  Interval i;
  i.n = int(v.size());
  if (i.n == 0) return {0, NAN, NAN, NAN, NAN};
  i.mean = std::accumulate(v.begin(), v.end(), 0.0) / i.n;
  if (i.n == 1) {
    i.lo = i.hi = i.mean;
    return i;
  }
  double ss = 0;
  for (double x : v) ss += (x - i.mean) * (x - i.mean);
  i.sd = std::sqrt(ss / (i.n - 1));
  const double half = student_t_quantile(0.5 + level / 2, i.n - 1) * i.sd / std::sqrt(double(i.n));
  i.lo = i.mean - half;
  i.hi = i.mean + half;
  return i;
}

std::string show(const Interval& i, int digits) {
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", i.mean, digits, i.lo, digits, i.hi, digits);
}

const char* to_string(ClaimVerdict v) {
  return v == ClaimVerdict::pass     ? "PASS"
         : v == ClaimVerdict::fail   ? "FAIL"
         : v == ClaimVerdict::report ? "REPORT"
                                     : "INCONCLUSIVE";
}

ClaimVerdict verdict_of(bool ok) { return ok ? ClaimVerdict::pass : ClaimVerdict::fail; }

ClaimVerdict at_least(const Interval& i, double threshold) {
  if (std::isnan(i.lo) || std::isnan(i.hi)) return ClaimVerdict::inconclusive;
  if (i.lo >= threshold) return ClaimVerdict::pass;
  if (i.hi < threshold) return ClaimVerdict::fail;
  return ClaimVerdict::inconclusive;
}

ClaimVerdict at_most(const Interval& i, double threshold) {
  if (std::isnan(i.lo) || std::isnan(i.hi)) return ClaimVerdict::inconclusive;
  if (i.hi <= threshold) return ClaimVerdict::pass;
  if (i.lo > threshold) return ClaimVerdict::fail;
  return ClaimVerdict::inconclusive;
}

ClaimVerdict all_of(const std::vector<ClaimVerdict>& parts) {
  bool all_pass = true;
  for (ClaimVerdict v : parts) {
    if (v == ClaimVerdict::fail) return ClaimVerdict::fail;
    all_pass &= v == ClaimVerdict::pass;
  }
  return all_pass ? ClaimVerdict::pass : ClaimVerdict::inconclusive;
}

}  // namespace nt
