// DeepNorm's constants (config/config.h: DeepNet, Wang et al. 2022, Figure 2 and its table).
// They are the config's and not norms/layernorm.cpp's: the norm is plain LayerNorm and never reads
// them; they are a model's, from its architecture's stacks and depths (model.arch, n_layers,
// n_dec_layers), for the residual wiring (alpha) and the init (beta), and run --print-config shows them.
#include <cmath>

#include "config/arch.h"
#include "config/config.h"

namespace nt {

DeepNorm deepnorm_single_stack(int N) { return {std::pow(2.0 * N, 0.25), std::pow(8.0 * N, -0.25)}; }
DeepNorm deepnorm_encdec_encoder(int N, int M) {
  const double nm = std::pow(double(N), 4) * M;
  return {0.81 * std::pow(nm, 1.0 / 16), 0.87 * std::pow(nm, -1.0 / 16)};
}
DeepNorm deepnorm_encdec_decoder(int, int M) { return {std::pow(3.0 * M, 0.25), std::pow(12.0 * M, -0.25)}; }
double torchscale_encoder_beta(int N, int M) { return 1.15 * std::pow(std::pow(double(N), 4) * M, -1.0 / 16); }
double glm130b_alpha(int N) { return std::sqrt(2.0 * N); }

DeepNorm RunConfig::deepnorm(StackRole stack) const {
  const int N = model.n_layers, M = model.dec_layers();
  const DeepNorm paper = arch_desc(model.arch).stacks != Stacks::encoder_decoder ? deepnorm_single_stack(N)
                         : stack == StackRole::encoder                           ? deepnorm_encdec_encoder(N, M)
                                                                                 : deepnorm_encdec_decoder(N, M);
  return {model.norm.alpha ? *model.norm.alpha : paper.alpha, model.norm.beta ? *model.norm.beta : paper.beta};
}

}  // namespace nt
