// The statistics the claims share: median, Spearman's rank correlation, a least-squares line,
// the mean over seeds with its 95% Student-t interval, and a verdict from such an interval.
//
// Verdict from an interval (claims.md): PASS when the criterion holds across the whole interval,
// FAIL when the interval lies entirely on the failing side, INCONCLUSIVE otherwise. So two runs
// with disjoint seeds can disagree only by one of them being INCONCLUSIVE.
#pragma once
#include <string>
#include <vector>

namespace nt {

double median(std::vector<double> v);  // NaN when empty; the mean of the middle two when even

// Spearman's rho: Pearson's correlation of the ranks (ties get their average rank).
double spearman(const std::vector<double>& x, const std::vector<double>& y);

struct LinearFit {
  double slope = 0, intercept = 0, r2 = 0;
};
LinearFit linear_fit(const std::vector<double>& x, const std::vector<double>& y);

// Student's t: the regularized incomplete beta I_x(a, b), the t CDF and its quantile.
double incomplete_beta(double a, double b, double x);
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Mean over n values with the two-sided `level` interval mean +- t_{(1+level)/2, n-1} sd / sqrt(n).
// One value: the interval is that value (no spread known); see Interval::n.
struct Interval {
  int n = 0;
  double mean = 0, sd = 0, lo = 0, hi = 0;
};
Interval mean_interval(const std::vector<double>& values, double level = 0.95);
std::string show(const Interval& i, int digits = 3);  // "1.234 [1.100, 1.368]"

// report: a side-by-side comparison with no criterion (the P experiments), rendered as REPORT.
enum class ClaimVerdict { pass, fail, inconclusive, report };
const char* to_string(ClaimVerdict v);
ClaimVerdict verdict_of(bool ok);                  // an exact claim: PASS or FAIL
ClaimVerdict at_least(const Interval& i, double threshold);  // the criterion "value >= threshold"
ClaimVerdict at_most(const Interval& i, double threshold);   // the criterion "value <= threshold"
// A criterion made of several conditions: PASS when all pass, FAIL when one fails, else INCONCLUSIVE.
ClaimVerdict all_of(const std::vector<ClaimVerdict>& parts);

}  // namespace nt
