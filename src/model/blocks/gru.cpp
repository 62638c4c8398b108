#include "model/blocks/gru.h"

#include <algorithm>

#include "ops/ops.h"

namespace nt {

template <class T>
typename GruCell<T>::Inputs GruCell<T>::inputs(Graph<T>& g, Tensor<T> x, RealRows real) const {
  return {norm_gx(g, linear(g, x, W_g, b_g, real)), norm_cx(g, linear(g, x, W_c, b_c, real))};
}

template <class T>
typename GruCell<T>::Inputs GruCell<T>::step_inputs(Graph<T>& g, Tensor<T> x, const int* batch_rows, int batch) const {
  return {norm_gx(g, step_linear(g, x, W_g, b_g, batch_rows, batch)),
          norm_cx(g, step_linear(g, x, W_c, b_c, batch_rows, batch))};
}

namespace {
// A step's recurrent terms: U_g h, U_c h and their norms (its h left for the transition).
template <class T>
typename GruCell<T>::Step recurrent_terms(Graph<T>& g, const GruCell<T>& c, Tensor<T> h) {
  typename GruCell<T>::Step s;
  s.gh_in = step_linear(g, h, c.U_g, Tensor<T>{});
  s.ch_in = step_linear(g, h, c.U_c, Tensor<T>{});
  s.gh = c.norm_gh(g, s.gh_in);
  s.ch = c.norm_ch(g, s.ch_in);
  return s;
}
}  // namespace

template <class T>
typename GruCell<T>::Step GruCell<T>::step(Graph<T>& g, Tensor<T> gx, Tensor<T> cx, Tensor<T> h) const {
  Step s = recurrent_terms(g, *this, h);
  s.h = gru_transition(g, gx, s.gh, cx, s.ch, h);
  return s;
}

template <class T>
typename GruCell<T>::Step GruCell<T>::step_rows(Graph<T>& g, const Inputs& in, Rows rows, Tensor<T> h) const {
  Step s = recurrent_terms(g, *this, h);
  s.h = gru_transition_rows(g, in.gates, in.cand, rows, s.gh, s.ch, h);
  return s;
}

template <class T>
Tensor<T> GruCell<T>::run(Graph<T>& g, Tensor<T> x, int B, int T_, std::vector<Step>& steps) const {
  const int H = U_c.rows;
  const Inputs in = inputs(g, x);
  Tensor<T> y = g.tensor(B * T_, H, true), h = g.tensor(B, H, false);
  std::fill_n(h.data, h.size(), T(0));
  steps.clear();
  for (int t = 0; t < T_; ++t) {
    steps.push_back(step_rows(g, in, Rows{t, T_}, h));
    h = steps.back().h;
    put_rows(g, y, h, Rows{t, T_});
  }
  return y;
}

template struct GruCell<float>;
template struct GruCell<double>;

Gru::Gru(ParamStore<float>& params, const NormConfig& norm, const std::string& name, int layer, int d_in, int H)
    : W_g_(params.add(name + ".W_g.weight", layer, 2 * H, d_in)),
      b_g_(params.add(name + ".W_g.bias", layer, 1, 2 * H)),
      W_c_(params.add(name + ".W_c.weight", layer, H, d_in)),
      b_c_(params.add(name + ".W_c.bias", layer, 1, H)),
      U_g_(params.add(name + ".U_g.weight", layer, 2 * H, H)),
      U_c_(params.add(name + ".U_c.weight", layer, H, H)),
      norm_gx_(params, norm, layer, name + ".norm_gx", "state_gates", 2 * H, 1),
      norm_cx_(params, norm, layer, name + ".norm_cx", "state_cand", H, 1),
      norm_gh_(params, norm, layer, name + ".norm_gh", "state_gates", 2 * H, 1),
      norm_ch_(params, norm, layer, name + ".norm_ch", "state_cand", H, 1) {}

void Gru::init(ParamStore<float>& params, const ModelConfig& m, Rng& rng) {
  cell_.W_g = params.tensor(W_g_), cell_.b_g = params.tensor(b_g_);
  cell_.W_c = params.tensor(W_c_), cell_.b_c = params.tensor(b_c_);
  cell_.U_g = params.tensor(U_g_), cell_.U_c = params.tensor(U_c_);
  for (Tensor<float> b : {cell_.b_g, cell_.b_c}) std::fill_n(b.data, b.size(), 0.0f);
  init_linear_weight(cell_.W_g, m, rng);
  init_linear_weight(cell_.W_c, m, rng);
  init_recurrent_weight(cell_.U_g, m, rng);
  init_recurrent_weight(cell_.U_c, m, rng);
  for (NormSite* n : {&norm_gx_, &norm_cx_, &norm_gh_, &norm_ch_}) n->init(params);
  cell_.norm_gx = norm_gx_.row_norm(), cell_.norm_cx = norm_cx_.row_norm();
  cell_.norm_gh = norm_gh_.row_norm(), cell_.norm_ch = norm_ch_.row_norm();
}

}  // namespace nt
