// The measurements of the Post-LN claims in the encoder-decoder (src/claims/postln_gradients.cpp),
// checked by value against the model's own gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "claims/evidence.h"
#include "claims/postln.h"
#include "data/dataset.h"
#include "train/session.h"

namespace nt::test {
namespace {

// C7's per-stack profile: the Frobenius norm of the batch-averaged W2 gradient, computed here
// parameter by parameter from a second session with the same init and data stream.
TEST(PostLnClaims, W2GradientNormsAreEachStacksOwnLayerByLayer) {
  const RunConfig c = session_config("encdec-tiny.json", {"data.dataset=synthetic-seq2seq", "model.n_layers=2",
                                                          "model.n_dec_layers=3", "model.norm.placement=post",
                                                          "model.init=xavier", "model.activation=relu", "model.d_ff=64",
                                                          "train.batch_size=8", "seed=7"});
  const std::shared_ptr<const Dataset> data = make_dataset(c);
  const int batches = 3;
  const auto norms = w2_gradient_norms(c, data, batches);
  ASSERT_EQ(norms.size(), 2u);
  ASSERT_EQ(norms.at("enc.").size(), 2u);
  ASSERT_EQ(norms.at("dec.").size(), 3u);

  Session run(c, data);
  ParamStore<float>& ps = run.params();
  std::map<std::pair<std::string, int>, std::vector<double>> sums;  // (name, layer) -> summed gradient
  for (int b = 0; b < batches; ++b) {
    run.next_batch();
    run.forward_backward(run.batch());
    for (int i = 0; i < ps.count(); ++i) {
      const auto& info = ps.info(i);
      if (info.name != "enc.ffn.fc2.weight" && info.name != "dec.ffn.fc2.weight") continue;
      auto& s = sums[{info.name, info.layer}];
      s.resize(info.size(), 0.0);
      for (std::size_t k = 0; k < info.size(); ++k) s[k] += ps.grad()[info.offset + k];
    }
  }
  ASSERT_EQ(sums.size(), 5u);
  for (const auto& [key, s] : sums) {
    double s2 = 0;
    for (double g : s) s2 += (g / batches) * (g / batches);
    const double expected = std::sqrt(s2);
    const double got = norms.at(key.first.substr(0, 4)).at(key.second);
    EXPECT_GT(expected, 0.0);
    EXPECT_NEAR(got, expected, 1e-9 + 1e-6 * expected) << key.first << " layer " << key.second;
  }
  // the decoder-only transformer is one stack, named ""
  const RunConfig lm = session_config("lm-tiny.json", {"model.n_layers=3", "train.batch_size=4"});
  const auto lm_norms = w2_gradient_norms(lm, make_dataset(lm), 1);
  ASSERT_EQ(lm_norms.size(), 1u);
  EXPECT_EQ(lm_norms.at("").size(), 3u);
}

}  // namespace
}  // namespace nt::test
