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
// Biases 0 and norm gains 1 either way; DeepNorm draws its sub-layers as SublayerInit says.
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

// A Linear weight W (out, in) as model.init says.
inline void init_linear_weight(Tensor<float> w, const ModelConfig& m, Rng& rng) {
  if (m.init == Init::xavier) init_xavier_normal(w, 1.0, rng);
  else if (m.init == Init::nematus && w.rows == w.cols) init_orthogonal(w, rng);
  else init_normal(w, m.init == Init::nematus ? 0.01 : m.init_std, rng);
}

// A recurrent matrix (k H, H) as model.init says: nematus, each H x H block orthogonal.
inline void init_recurrent_weight(Tensor<float> w, const ModelConfig& m, Rng& rng) {
  if (m.init != Init::nematus) return init_linear_weight(w, m, rng);
  for (int r = 0; r < w.rows; r += w.cols)
    init_orthogonal(Tensor<float>{w.data + int64_t(r) * w.cols, nullptr, w.cols, w.cols}, rng);
}

// An embedding table as model.init says.
inline void init_embedding(Tensor<float> table, const ModelConfig& m, Rng& rng) {
  init_normal(table, m.init == Init::xavier ? 1.0 : m.init == Init::nematus ? 0.01 : m.init_std, rng);
}

// The Linear weights of a Transformer's sub-layers: model.init, or DeepNet's recipe for DeepNorm
// whatever model.init says (Xavier normal, gain 1 for q and k, gain beta for v, out, fc1, fc2).
struct SublayerInit {
  const ModelConfig& m;
  bool deepnorm;
  double beta;  // DeepNorm's beta (RunConfig::deepnorm_beta)
  // q and k: they set the attention pattern, DeepNet leaves them at gain 1
  void query_key(Tensor<float> w, Rng& rng) const {
    deepnorm ? init_xavier_normal(w, 1.0, rng) : init_linear_weight(w, m, rng);
  }
  // v, out, fc1, fc2: the path the residual carries, scaled down by beta under DeepNorm
  void value(Tensor<float> w, Rng& rng) const {
    deepnorm ? init_xavier_normal(w, beta, rng) : init_linear_weight(w, m, rng);
  }
};

}  // namespace nt
