// Invariance at model level: a transform applied to the configured model at
// init, reported as the relative change of the first affected norm's output and of the logits.
//
// The transformed "layer" is the one that produces the first norm site's summed inputs:
//   mlp          layer 0's Linear (W and b) for weight transforms; the input rows for data ones
//   transformer  the embedding tables (the input layer of one-hot tokens and positions):
//                rescale multiplies them, recenter adds one scalar per row (the same shift to
//                every unit of a token), vector-rescale scales unit (column) 0; data transforms
//                do not apply to one-hot tokens.
// The model runs in float32 with eps = 1e-30 (so that eps does not blur exact invariance, and a
// row of zeros at a later norm gives 0, not 0/0); a cell whose measurement is not finite never agrees;
// batchnorm uses batch statistics. A change below 1e-4 (float32 rounding through the network)
// counts as invariant.
//
// What theory predicts, per cell:
//   mlp          the layer feeds its norm directly: the norm's output and the logits are
//                invariant exactly when the papers' table says so.
//   pre          the embeddings feed layer 0's norm directly (the table decides the norm's
//                output), but the residual stream x + f(norm(x)) carries them to the output:
//                the logits change, except for recentering under LayerNorm with a final norm,
//                where every read of the stream subtracts the per-token mean that the shift adds.
//   post, deep   the norm sees x + attn(x): where the norm itself is invariant, the block is
//                invariant only as far as attention's softmax weights stay the same, which
//                holds approximately when the scores are near zero (small init) and not
//                otherwise; theory predicts "approximately" there, which is reported, not judged.
#pragma once
#include <string>
#include <vector>

#include "analysis/invariance.h"
#include "config/config.h"

namespace nt {

enum class Prediction { invariant, changed, approximate };
const char* to_string(Prediction p);

struct ModelCell {
  NormType norm;
  Transform transform;
  bool applicable = true;
  std::string site{};                          // the first norm site, e.g. "layer 0 attn"
  Measurement site_change{}, logits_change{};  // float32; invariant below 1e-4, changed above
  Prediction predict_site = Prediction::changed, predict_logits = Prediction::changed;
  bool agrees = true;
  std::string why{};  // the prediction's reason
};

// A UsageError (exit 2) naming model.arch for a family without such an input layer (the
// encoder-decoder, the recurrent LMs, RNNSearch).
// `norm`: "all" (every kind the family takes) or one kind's name, else a UsageError. A kind the
// config refuses (batchnorm beside model.qk_norm, say) gives cells that are not applicable, with why.
std::vector<ModelCell> model_invariance(const RunConfig& config, const std::vector<Transform>& transforms, double delta,
                                        const std::string& norm = "all");

// LayerNorm on the seed article's sample [2,3,5,1,4], and BatchNorm and RMSNorm on a batch.
std::string invariance_example();

}  // namespace nt
