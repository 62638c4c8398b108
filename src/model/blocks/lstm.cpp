#include "model/blocks/lstm.h"

#include <algorithm>

#include "ops/ops.h"

namespace nt {

template <class T>
Tensor<T> LstmCell<T>::inputs(Graph<T>& g, Tensor<T> x) const {
  return add(g, norm_x(g, linear(g, x, W_x, Tensor<T>{})), b);
}

template <class T>
typename LstmCell<T>::Step LstmCell<T>::step(Graph<T>& g, Tensor<T> xg, Tensor<T> h, Tensor<T> c) const {
  Step s;
  s.hg_in = step_linear(g, h, W_h, Tensor<T>{});
  s.hg = norm_h(g, s.hg_in);
  s.c = lstm_cell(g, xg, s.hg, c);
  s.cn = norm_c(g, s.c);
  s.h = lstm_output(g, xg, s.hg, s.cn);
  return s;
}

template <class T>
Tensor<T> LstmCell<T>::run(Graph<T>& g, Tensor<T> x, int B, int T_, std::vector<Step>& steps) const {
  const int H = W_h.cols;
  const Tensor<T> xg = inputs(g, x);
  Tensor<T> y = g.tensor(B * T_, H, true), zero = g.tensor(B, H, false);
  std::fill_n(zero.data, zero.size(), T(0));
  Tensor<T> h = zero, c = zero;
  steps.clear();
  for (int t = 0; t < T_; ++t) {
    steps.push_back(step(g, take_rows(g, xg, Rows{t, T_}, B), h, c));
    h = steps.back().h, c = steps.back().c;
    put_rows(g, y, h, Rows{t, T_});
  }
  return y;
}

template struct LstmCell<float>;
template struct LstmCell<double>;

Lstm::Lstm(ParamStore<float>& params, const NormConfig& norm, const std::string& name, int layer, int d_in, int H)
    : W_x_(params.add(name + ".W_x.weight", layer, 4 * H, d_in)),
      W_h_(params.add(name + ".W_h.weight", layer, 4 * H, H)),
      b_(params.add(name + ".bias", layer, 1, 4 * H)),
      norm_x_(params, norm, layer, name + ".norm_x", "state", 4 * H, 1),
      norm_h_(params, norm, layer, name + ".norm_h", "state", 4 * H, 1),
      norm_c_(params, norm, layer, name + ".norm_c", "cell", H, 1) {}

void Lstm::init(ParamStore<float>& params, const ModelConfig& m, Rng& rng) {
  cell_.W_x = params.tensor(W_x_), cell_.W_h = params.tensor(W_h_), cell_.b = params.tensor(b_);
  std::fill_n(cell_.b.data, cell_.b.size(), 0.0f);
  init_linear_weight(cell_.W_x, m, rng);
  init_recurrent_weight(cell_.W_h, m, rng);
  for (NormSite* n : {&norm_x_, &norm_h_, &norm_c_}) n->init(params);
  cell_.norm_x = norm_x_.row_norm(), cell_.norm_h = norm_h_.row_norm(), cell_.norm_c = norm_c_.row_norm();
}

}  // namespace nt
