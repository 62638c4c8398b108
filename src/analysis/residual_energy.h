// Xiong et al. 2020 Lemma 1-2 measured (claim E7): at initialization the vector entering a Post-LN
// layer's FFN norm, x + FFN(x), has E||x||^2/d = 3/2 at every layer, while Pre-LN's residual
// stream x_l grows linearly with depth.
//
// Xiong's assumptions: a square FFN (d_ff = d) with ReLU, every weight N(0, 1/d), biases 0, eps 0;
// a Transformer LM (synthetic-lm, sequences of 32, 4 heads) built by normtool's model code. The
// lemmas are expectations over the init: each layer's value is averaged over `inits` weight
// initializations (seeds 1..inits) and 2 batches of 16 sequences of each.
#pragma once
#include <vector>

#include "analysis/stats.h"

namespace nt {

struct RunConfig;

// E||x||^2/d of the vector entering each layer's `place` ("ffn", "attn") norm site, at init, over
// seeds 1..inits of `c` and 2 of its training batches each.
std::vector<double> residual_energy(RunConfig c, const char* place, int inits);

struct ResidualEnergy {
  std::vector<double> post, pre;  // per layer: Post-LN at the FFN site, Pre-LN at the attention site
  LinearFit pre_fit;              // pre against the layer index
};
ResidualEnergy xiong_residual_energy(int layers = 12, int d = 64, int inits = 16);

}  // namespace nt
