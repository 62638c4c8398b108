// The LN-LSTM of the LayerNorm paper's supplementary (ryankiros/layer-norm, lnlstm_layer), the
// cell of model.arch rnn with cell lstm; norms over all 4H gates jointly (identities for none):
//
//   [f, i, o, g] = norm(W_h h) + norm(W_x x) + b          xg = norm(W_x x) + b, hg = norm(W_h h)
//   c' = sigmoid(f) * c + sigmoid(i) * tanh(g)             (ops/lstm.cpp, lstm_cell)
//   h' = sigmoid(o) * tanh(norm(c'))                       (lstm_output); c' is carried on
//
// LstmCell<T> is the cell on Tensor views, for float (the model) and double (the gradient
// checks); Lstm declares and initialises its parameters and hands out the float cell.
#pragma once
#include <string>
#include <vector>

#include "model/init.h"
#include "model/norm_site.h"

namespace nt {

template <class T>
struct LstmCell {
  Tensor<T> W_x, W_h, b;  // (4H, d_in), (4H, H), (1, 4H)
  RowNorm<T> norm_x, norm_h, norm_c;

  // xg = norm(W_x x) + b for a whole sequence x (rows, d_in) at once -> (rows, 4H)
  Tensor<T> inputs(Graph<T>& g, Tensor<T> x) const;

  // One step from the input term of its rows xg (N, 4H), the state h and the cell c (N, H).
  struct Step {
    Tensor<T> h, c;         // h' and the unnormalized c' (N, H)
    Tensor<T> hg_in, hg;    // W_h h before and after its norm (site state)
    Tensor<T> cn;           // norm(c') (site cell: c' in, cn out)
  };
  Step step(Graph<T>& g, Tensor<T> xg, Tensor<T> h, Tensor<T> c) const;

  // The recurrence over a batch-major sequence x (B*T, d_in), state and cell 0 at t = 0, as
  // GruCell::run -> (B*T, H); each step's tensors appended to `steps` (cleared first).
  Tensor<T> run(Graph<T>& g, Tensor<T> x, int B, int T_, std::vector<Step>& steps) const;
};

class Lstm {
 public:
  // Declares "<name>.W_x", ".W_h" (weights), "<name>.bias" and the norms "<name>.norm_x",
  // ".norm_h", ".norm_c" of `layer`.
  Lstm(ParamStore<float>& params, const NormConfig& norm, const std::string& name, int layer, int d_in, int H);

  // Binds the views (after ParamStore::finalize): bias 0, gains 1; W_x, W_h as model.init says,
  // nematus with each H x H block of W_h orthogonal.
  void init(ParamStore<float>& params, const ModelConfig& m, Rng& rng);

  const LstmCell<float>& cell() const { return cell_; }

 private:
  int W_x_, W_h_, b_;
  NormSite norm_x_, norm_h_, norm_c_;
  LstmCell<float> cell_;
};

}  // namespace nt
