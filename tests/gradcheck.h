// Central-difference gradient checks in double precision.
//
// The scalar is a random projection L = sum(out * dout) with a fixed random dout (never a
// plain sum: with gain 1 LayerNorm's true input gradient of sum(out) is exactly zero, so a
// wrong backward would pass). Each input's analytic gradient comes from one backward pass;
// the numeric one from (L(x + h e_i) - L(x - h e_i)) / 2h for every element i. The error
// of an input is ||analytic - numeric|| / max(||analytic||, ||numeric||).
//
// With `through_graph`, each differentiated input first passes through scale(x, 1), a tensor of
// the graph: the op under test then writes its input gradients first (=, core/graph.h) rather
// than adding them to a caller's buffer, so both paths of every backward are checked.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/graph.h"
#include "ops/ops.h"

namespace nt::test {

struct Input {
  std::vector<double> data, grad;
  int rows = 0, cols = 0;
  bool differentiate = true;  // false: an argument (e.g. a mask) that is not checked

  Tensor<double> tensor() { return {data.data(), differentiate ? grad.data() : nullptr, rows, cols}; }
};

inline Input random_input(int rows, int cols, uint64_t seed, double scale = 1.0, double shift = 0.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Input in;
  in.rows = rows;
  in.cols = cols;
  in.data.resize(std::size_t(rows) * cols);
  for (auto& v : in.data) v = shift + scale * normal(rng);
  in.grad.assign(in.data.size(), 0.0);
  return in;
}

using Builder = std::function<Tensor<double>(Graph<double>&, std::vector<Tensor<double>>&)>;

struct GradCheckResult {
  std::vector<double> errors;  // per input (0 for inputs not differentiated)
  std::vector<double> norms;   // ||analytic gradient|| per input: a check of an all-zero gradient proves little
  double max_error() const { return errors.empty() ? 0.0 : *std::max_element(errors.begin(), errors.end()); }
};

inline double projection(Tensor<double> out, const std::vector<double>& dout) {
  double L = 0;
  for (int64_t i = 0; i < out.size(); ++i) L += out.data[i] * dout[i];
  return L;
}

inline GradCheckResult gradcheck(const Builder& f, std::vector<Input>& inputs, bool training = true,
                                 bool through_graph = false, double h = 1e-6, uint64_t seed = 7) {
  Graph<double> g(training, true);
  std::vector<double> dout;
  // Twice: the second pass reuses the arena the first sized, poisoned with NaN, so a gradient that
  // should have been written first but was added to (or left unwritten) shows.
  for (int pass = 0; pass < 2; ++pass) {
    g.reset();
    g.poison();
    std::vector<Tensor<double>> ts;
    for (auto& in : inputs) {
      std::fill(in.grad.begin(), in.grad.end(), 0.0);
      ts.push_back(through_graph && in.differentiate ? scale(g, in.tensor(), 1.0) : in.tensor());
    }
    Tensor<double> out = f(g, ts);
    std::mt19937_64 rng(seed + pass);
    std::normal_distribution<double> normal(0.0, 1.0);
    dout.resize(out.size());
    for (auto& v : dout) v = normal(rng);
    if (out.grad) std::copy(dout.begin(), dout.end(), g.seed(out));
    g.backward(Tensor<double>{});  // the seed is dout
  }

  auto evaluate = [&]() {
    Graph<double> fg(training, false);
    std::vector<Tensor<double>> fts;
    for (auto& in : inputs) fts.push_back({in.data.data(), nullptr, in.rows, in.cols});
    return projection(f(fg, fts), dout);
  };

  GradCheckResult result;
  for (auto& in : inputs) {
    if (!in.differentiate) {
      result.errors.push_back(0.0);
      result.norms.push_back(1.0);
      continue;
    }
    double diff2 = 0, a2 = 0, n2 = 0;
    for (std::size_t i = 0; i < in.data.size(); ++i) {
      const double x0 = in.data[i];
      in.data[i] = x0 + h;
      const double lp = evaluate();
      in.data[i] = x0 - h;
      const double lm = evaluate();
      in.data[i] = x0;
      const double numeric = (lp - lm) / (2 * h);
      diff2 += (in.grad[i] - numeric) * (in.grad[i] - numeric);
      a2 += in.grad[i] * in.grad[i];
      n2 += numeric * numeric;
    }
    const double denom = std::sqrt(std::max(a2, n2));
    result.errors.push_back(denom > 0 ? std::sqrt(diff2) / denom : 0.0);
    result.norms.push_back(std::sqrt(a2));
  }
  return result;
}

}  // namespace nt::test
