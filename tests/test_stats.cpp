// The claims' statistics against closed forms and published table values.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/stats.h"

namespace nt::test {
namespace {

TEST(Stats, Median) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Stats, SpearmanUsesAverageRanksForTies) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // x ranks 0,1,2,3; y = {1, 2, 2, 3} ranks 0, 1.5, 1.5, 3: Pearson of the ranks = 4.5 / sqrt(5 * 4.5)
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {1, 2, 2, 3}), 4.5 / std::sqrt(5 * 4.5), 1e-15);
}

TEST(Stats, LinearFitOfALine) {
  const LinearFit f = linear_fit({0, 1, 2, 3}, {1, 3, 5, 7});
  EXPECT_NEAR(f.slope, 2, 1e-15);
  EXPECT_NEAR(f.intercept, 1, 1e-15);
  EXPECT_NEAR(f.r2, 1, 1e-15);
  EXPECT_NEAR(linear_fit({0, 1, 2}, {0, 1, 0}).r2, 0, 1e-15);
}

TEST(Stats, StudentTQuantilesMatchClosedFormsAndTables) {  // t_{p, df}
  const double pi = std::acos(-1.0);
  EXPECT_NEAR(student_t_quantile(0.975, 1), std::tan(pi * (0.975 - 0.5)), 1e-11);         // Cauchy
  EXPECT_NEAR(student_t_quantile(0.975, 2), 0.95 / std::sqrt(2 * 0.975 * 0.025), 1e-12);  // (2p-1)/sqrt(2p(1-p))
  EXPECT_NEAR(student_t_quantile(0.9, 2), 0.8 / std::sqrt(2 * 0.9 * 0.1), 1e-12);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228138852, 1e-9);  // printed tables
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272456, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.959965, 1e-5);  // the normal's
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.7764451051977987, 1e-10);
  EXPECT_NEAR(student_t_cdf(0, 3), 0.5, 1e-15);
  EXPECT_NEAR(student_t_cdf(1, 1), 0.75, 1e-12);  // Cauchy: 1/2 + atan(1)/pi
}

TEST(Stats, MeanIntervalOverSeeds) {
  const Interval i = mean_interval({1, 2, 3});
  EXPECT_EQ(i.n, 3);
  EXPECT_DOUBLE_EQ(i.mean, 2);
  EXPECT_DOUBLE_EQ(i.sd, 1);
  EXPECT_NEAR(i.hi - i.mean, 4.302652729911275 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(i.mean - i.lo, i.hi - i.mean, 1e-12);
  const Interval one = mean_interval({5});
  EXPECT_EQ(one.lo, 5);
  EXPECT_EQ(one.hi, 5);
}

TEST(Stats, VerdictFromAnInterval) {
  const Interval above{3, 2.0, 0.1, 1.5, 2.5}, straddles{3, 1.2, 0.1, 0.9, 1.5}, below{3, 0.5, 0.1, 0.3, 0.7};
  EXPECT_EQ(at_least(above, 1.0), ClaimVerdict::pass);
  EXPECT_EQ(at_least(straddles, 1.0), ClaimVerdict::inconclusive);
  EXPECT_EQ(at_least(below, 1.0), ClaimVerdict::fail);
  EXPECT_EQ(at_most(below, 1.0), ClaimVerdict::pass);
  EXPECT_EQ(at_most(above, 1.0), ClaimVerdict::fail);
  EXPECT_EQ(all_of({ClaimVerdict::pass, ClaimVerdict::pass}), ClaimVerdict::pass);
  EXPECT_EQ(all_of({ClaimVerdict::pass, ClaimVerdict::inconclusive}), ClaimVerdict::inconclusive);
  EXPECT_EQ(all_of({ClaimVerdict::inconclusive, ClaimVerdict::fail}), ClaimVerdict::fail);
}

}  // namespace
}  // namespace nt::test
