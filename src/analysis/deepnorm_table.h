// DeepNet's constants and init (Wang et al. 2022, Figure 2, its table and §4) as normtool
// resolves and builds them (claim E8).
//
// The constants: RunConfig::deepnorm for each row of DeepNet's table at the depths of its
// experiments (12 layers for the single-stack models, 6L-6L for the encoder-decoder), beside the
// table's formulas evaluated once, to 4 decimals, not by the code under test.
//
// The init: the empirical std of each weight matrix of a deepnorm model built by normtool's model
// code (d = 256, d_ff = 1024, 4 heads; a decoder-only and an encoder-only Transformer with 12
// layers, an encoder-decoder 6L-6L with cross-attention), against DeepNet's init: Xavier normal,
// gain beta (its stack's) for fc1, fc2, v and out of every attention, 1 for q and k.
#pragma once
#include <string>
#include <vector>

namespace nt {

struct DeepNetConstants {
  const char *model, *formula;     // "encoder-only, N = 12", "(2N)^(1/4), (8N)^(-1/4)"
  double alpha, beta;              // as RunConfig::deepnorm resolves them
  double table_alpha, table_beta;  // DeepNet's
};
std::vector<DeepNetConstants> deepnet_constants();

struct InitStd {
  std::string arch, weight;   // "encoder-decoder", "dec.0.cross.v.weight"
  double measured, expected;  // std
};
std::vector<InitStd> deepnorm_init_std();  // the three models' weight matrices, a model's in name order

}  // namespace nt
