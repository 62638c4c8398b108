// The GRU transition of Nematus v0.3 (layers.py, nematus_compat false) with its four norm sites,
// the gates' terms normalized jointly and the input and recurrent terms apart (identities for
// norm none); the cell of model.arch rnn (cell gru) and of rnnsearch's encoder and decoder:
//
//   gx = norm(W_g x + b_g)   (2H)       cx = norm(W_c x + b_c)   (H)      the input terms
//   gh = norm(U_g h)         (2H)       ch = norm(U_c h)         (H)      the recurrent terms
//   [r, u] = sigmoid(gx + gh);  p = tanh(cx + r * ch);  h' = u * h + (1 - u) * p   (ops/gru.cpp)
//
// GruCell<T> is the transition on Tensor views, for float (the models) and double (the gradient
// checks); Gru declares and initialises its parameters and hands out the float cell.
#pragma once
#include <string>
#include <vector>

#include "model/init.h"
#include "model/norm_site.h"

namespace nt {

template <class T>
struct GruCell {
  Tensor<T> W_g, b_g, W_c, b_c;  // (2H, d_in), (1, 2H), (H, d_in), (1, H)
  Tensor<T> U_g, U_c;            // (2H, H), (H, H)
  RowNorm<T> norm_gx, norm_cx, norm_gh, norm_ch;

  // The input terms of a whole sequence x (rows, d_in) at once (Nematus's precompute from x); of a
  // padded sequence over its real rows alone (a padding row's terms are the norm of the bias: no
  // step reads them).
  struct Inputs {
    Tensor<T> gates, cand;  // gx (rows, 2H), cx (rows, H)
  };
  Inputs inputs(Graph<T>& g, Tensor<T> x, RealRows real = {}) const;
  // The input terms of one step's rows, x's rows the rows batch_rows[i] (null: all) of a batch of
  // `batch` (ops step_linear: W_g and W_c prepared once for every step).
  Inputs step_inputs(Graph<T>& g, Tensor<T> x, const int* batch_rows, int batch) const;

  // One step from the input terms of its rows (N, 2H), (N, H) and the state h (N, H).
  struct Step {
    Tensor<T> h;              // h' (N, H)
    Tensor<T> gh_in, gh;      // U_g h before and after its norm (site state_gates)
    Tensor<T> ch_in, ch;      // U_c h before and after its norm (site state_cand)
  };
  Step step(Graph<T>& g, Tensor<T> gx, Tensor<T> cx, Tensor<T> h) const;
  // The same step reading its input terms as rows rows[n] of a sequence's (ops
  // gru_transition_rows: the bits of take_rows then step, without the rows' copies).
  Step step_rows(Graph<T>& g, const Inputs& in, Rows rows, Tensor<T> h) const;

  // The recurrence over a batch-major sequence x (B*T, d_in), the state 0 at t = 0: step t reads
  // the rows b*T + t (step_rows) and writes its state there (put_rows) -> (B*T, H). Each
  // step's tensors are appended to `steps` (cleared first).
  Tensor<T> run(Graph<T>& g, Tensor<T> x, int B, int T_, std::vector<Step>& steps) const;
};

class Gru {
 public:
  // Declares "<name>.W_g", ".W_c" (weight, bias), ".U_g", ".U_c" (weight) and the four norms
  // "<name>.norm_gx", ".norm_cx", ".norm_gh", ".norm_ch" of `layer`.
  Gru(ParamStore<float>& params, const NormConfig& norm, const std::string& name, int layer, int d_in, int H);

  // Binds the views (after ParamStore::finalize): biases 0, gains 1; W_g, W_c, U_g, U_c as
  // model.init says, nematus with each H x H block of U_g and U_c orthogonal.
  void init(ParamStore<float>& params, const ModelConfig& m, Rng& rng);

  const GruCell<float>& cell() const { return cell_; }

 private:
  int W_g_, b_g_, W_c_, b_c_, U_g_, U_c_;
  NormSite norm_gx_, norm_cx_, norm_gh_, norm_ch_;
  GruCell<float> cell_;
};

}  // namespace nt
