// What BatchNorm's batch statistics do, against the per-row norms (claims E5, E6), in float64
// with normtool's own ops.
//
// Running statistics (Ioffe & Szegedy 2015 Alg. 2; PyTorch's BatchNorm1d): one training step on a
// batch of m = 8 rows of 4 features (N(1.5, 2^2), seed 5) from fresh running statistics (mean 0,
// var 1), momentum 0.1, eps 1e-5, should leave running_mean = 0.1 mu_B and running_var = 0.9 +
// 0.1 m/(m-1) sigma^2_B (the biased variance normalizes, the unbiased one is kept); eval is then
// the affine map with them. LayerNorm and RMSNorm keep no state: train and eval are the same.
//
// Batch dependence: sequence a (6 positions x 8 features, N(0, 1), seed 6) normalized in three
// batches of two sequences: with b1, with b2 (scale 3, shift 1), and with b1 whose last 3
// positions are zero padding (not masked). BatchNorm's statistics are over all rows.
#pragma once

namespace nt {

struct RunningStatistics {
  double stats_error = 0;    // largest |running statistic - the momentum rule's|
  double eval_error = 0;     // largest |eval output - the affine map with the running statistics|
  double train_vs_eval = 0;  // LayerNorm and RMSNorm: largest |train output - eval output|
};
RunningStatistics running_statistics();

// The largest relative change ||y_a' - y_a|| / ||y_a|| of sequence a's outputs between its batches
struct BatchDependence {
  double batchnorm = 0, layernorm = 0, rmsnorm = 0;
};
BatchDependence batch_dependence();

}  // namespace nt
