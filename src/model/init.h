// Weight initialisation, seeded: draws in parameter order from one stream.
//
// model.init (the spec):
//   normal  every Linear weight and both embeddings N(0, init_std)
//   xavier  every Linear weight (the output layer too) Xavier (Glorot) normal with gain 1,
//           std = sqrt(2 / (fan_in + fan_out)), and the embeddings N(0, 1), so inputs have
//           ||x||^2 ~ d: the setting of Xiong et al. 2020 and DeepNet
//   nematus (rnn, rnnsearch; Nematus's norm_weight and ortho_weight) every non-square weight and
//           the embeddings N(0, 0.01^2), a square weight orthogonal, and each square H x H block
//           of a recurrent matrix (U_g, U_c, W_h of (kH, H)) orthogonal
//   postln-init (a Transformer stack in Post-LN; DeepNet §3's Post-LN-init) xavier, then in block
//           l = 1..N of each stack fc1, fc2 and every attention's v and out divided by k_l = N - l + 1
//           (SublayerInit::divisor); q, k and the head untouched
// Biases 0 and norm gains 1 either way; DeepNorm draws its sub-layers as SublayerInit says.
// model.init_mean is added to every Linear weight (recurrent matrices, heads, DeepNorm's and
// Nematus's orthogonal blocks too) after every other rule; embeddings, biases, gains keep theirs.
#pragma once
#include <cmath>

#include "config/config.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace nt {

inline void init_normal(Tensor<float> t, double std, Rng& rng) {
  for (int64_t i = 0; i < t.size(); ++i) t.data[i] = float(std * rng.normal());
}

// Xavier (Glorot) normal with a gain: std = gain * sqrt(2 / (fan_in + fan_out)), W is (out, in).
inline void init_xavier_normal(Tensor<float> w, double gain, Rng& rng) {
  init_normal(w, gain * std::sqrt(2.0 / (w.rows + w.cols)), rng);
}

// A square matrix w (n, n) orthogonal: the Q of a Gaussian matrix's QR, signed so that R's
// diagonal is positive (Gram-Schmidt in double; init.cpp).
void init_orthogonal(Tensor<float> w, Rng& rng);

inline bool xavier_init(const ModelConfig& m) { return m.init == Init::xavier || m.init == Init::postln_init; }

// model.init_mean: the last step of every Linear weight's init.
inline void shift_init_mean(Tensor<float> w, const ModelConfig& m) {
  if (m.init_mean != 0.0)
    for (int64_t i = 0; i < w.size(); ++i) w.data[i] += float(m.init_mean);
}

// A Linear weight W (out, in) as model.init says, before init_mean.
inline void draw_linear_weight(Tensor<float> w, const ModelConfig& m, Rng& rng) {
  if (xavier_init(m)) init_xavier_normal(w, 1.0, rng);
  else if (m.init == Init::nematus && w.rows == w.cols) init_orthogonal(w, rng);
  else init_normal(w, m.init == Init::nematus ? 0.01 : m.init_std, rng);
}

// A Linear weight W (out, in) as model.init and model.init_mean say.
inline void init_linear_weight(Tensor<float> w, const ModelConfig& m, Rng& rng) {
  draw_linear_weight(w, m, rng);
  shift_init_mean(w, m);
}

// A recurrent matrix (k H, H) as model.init says: nematus, each H x H block orthogonal; then init_mean.
inline void init_recurrent_weight(Tensor<float> w, const ModelConfig& m, Rng& rng) {
  if (m.init != Init::nematus) return init_linear_weight(w, m, rng);
  for (int r = 0; r < w.rows; r += w.cols)
    init_orthogonal(Tensor<float>{w.data + int64_t(r) * w.cols, nullptr, w.cols, w.cols}, rng);
  shift_init_mean(w, m);
}

// An embedding table as model.init says.
inline void init_embedding(Tensor<float> table, const ModelConfig& m, Rng& rng) {
  init_normal(table, xavier_init(m) ? 1.0 : m.init == Init::nematus ? 0.01 : m.init_std, rng);
}

// The Linear weights of a Transformer's sub-layers: model.init, or DeepNet's recipe for DeepNorm
// whatever model.init says (Xavier normal, gain 1 for q and k, gain beta for v, out, fc1, fc2);
// postln-init divides v, out, fc1, fc2 of block l by `divisor` = N - l + 1; scaled_residual_init
// divides out and fc2 by sqrt(2 N) (GPT-2). Then init_mean.
struct SublayerInit {
  const ModelConfig& m;
  bool deepnorm;
  double beta;  // DeepNorm's beta (RunConfig::deepnorm_beta)
  double divisor = 1.0;  // postln-init's k_l
  double output_divisor = 1.0;  // model.scaled_residual_init: sqrt(2 N) on out and fc2
  // q and k: they set the attention pattern, DeepNet leaves them at gain 1
  void query_key(Tensor<float> w, Rng& rng) const {
    deepnorm ? init_xavier_normal(w, 1.0, rng) : draw_linear_weight(w, m, rng);
    shift_init_mean(w, m);
  }
  // v, out, fc1, fc2: the path the residual carries, scaled down by beta under DeepNorm
  void value(Tensor<float> w, Rng& rng) const {
    deepnorm ? init_xavier_normal(w, beta, rng) : draw_linear_weight(w, m, rng);
    if (divisor != 1.0)
      for (int64_t i = 0; i < w.size(); ++i) w.data[i] = float(double(w.data[i]) / divisor);
    shift_init_mean(w, m);
  }
  // out, fc2: as value(), then / sqrt(2 N) with model.scaled_residual_init (GPT-2), before init_mean
  void output(Tensor<float> w, Rng& rng) const {
    const double d = divisor * output_divisor;
    deepnorm ? init_xavier_normal(w, beta, rng) : draw_linear_weight(w, m, rng);
    if (d != 1.0)
      for (int64_t i = 0; i < w.size(); ++i) w.data[i] = float(double(w.data[i]) / d);
    shift_init_mean(w, m);
  }
};

}  // namespace nt
