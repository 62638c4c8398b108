// model.init_mean (RMS §6.1 Fig. 4) and model.init postln-init (DeepNet §3's Post-LN-init): what
// each moves, against closed forms; init_mean's invariance where every Linear feeds a LayerNorm or
// the softmax; the combinations refused.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_problems.h"
#include "model/model.h"
#include "train/session.h"

namespace nt::test {
namespace {

RunConfig config_of(std::vector<std::string> overrides, double mean) {
  overrides.push_back("model.init_mean=" + std::to_string(mean));
  return load_config("{}", "t", overrides);
}

// A Linear's weight by its name: not an embedding, a norm's gain or a bias (the LSTM's "bias" too).
bool linear_weight(const std::string& name) {
  return name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0 && name.find("emb") == std::string::npos &&
         name.find("norm") == std::string::npos;
}

// The same seed with init_mean 0.25: every Linear weight moved by exactly 0.25 (every init rule
// drew the same numbers first), every other parameter not at all.
TEST(InitMean, MovesEveryLinearWeightAndNothingElse) {
  const std::vector<std::vector<std::string>> families = {
      {"data.dataset=synthetic-lm", "model.norm.type=deepnorm"},
      {"data.dataset=synthetic-lm", "model.norm.placement=post", "model.init=postln-init"},
      {"data.dataset=synthetic-seq2seq", "model.arch=encoder-decoder", "model.init=xavier"},
      {"data.dataset=synthetic-lm", "model.arch=rnn", "model.cell=lstm", "model.init=nematus"},
      {"data.dataset=synthetic-lm", "model.arch=rnn", "model.cell=gru"},
      {"data.dataset=synthetic-seq2seq", "model.arch=rnnsearch", "model.init=nematus"},
      {"data.dataset=synthetic-classify", "model.arch=mlp"}};
  for (const auto& f : families) {
    SCOPED_TRACE(f.back());
    const RunConfig c0 = config_of(f, 0.0), c1 = config_of(f, 0.25);
    const bool mlp = f.back() == "model.arch=mlp";
    const int inputs = mlp ? 64 : 256, outputs = mlp ? 10 : 256;
    auto a = make_model(c0, inputs, outputs), b = make_model(c1, inputs, outputs);
    int moved = 0;
    for (int i = 0; i < a->params().count(); ++i) {
      const auto& info = a->params().info(i);
      const Tensor<float> x = a->params().tensor(i), y = b->params().tensor(i);
      const double want = linear_weight(info.name) ? 0.25 : 0.0;
      double worst = 0;
      for (int64_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(double(y.data[k]) - x.data[k] - want));
      EXPECT_LT(worst, 1e-6) << info.layer << ":" << info.name;
      moved += want != 0.0;
    }
    EXPECT_GE(moved, 3);
  }
}

std::vector<double> losses(const RunConfig& c, int steps) {
  Session s(c);
  std::vector<double> out;
  for (int i = 0; i < steps; ++i) out.push_back(s.step().loss);
  return out;
}

// rnn-gru-tiny (configs/rnn-gru-tiny.json, on synthetic data): with LayerNorm every Linear feeds a
// LayerNorm (W_g, W_c, U_g, U_c) or the softmax (the head), and a mean added to a weight adds the same
// to every output of a row, which both remove: the losses are init_mean's at 0 to float rounding.
// RMSNorm keeps the mean: they move.
TEST(InitMean, GruWithLayerNormIsInvariantAndWithRmsNormIsNot) {
  for (const char* norm : {"layernorm", "rmsnorm"}) {
    const std::vector<std::string> o = {"data.dataset=synthetic-lm",
                                        "model.arch=rnn",
                                        "model.cell=gru",
                                        "model.d_emb=64",
                                        "model.d_model=128",
                                        "data.seq_len=64",
                                        "train.batch_size=16",
                                        "train.threads=1",
                                        std::string("model.norm.type=") + norm};
    const std::vector<double> l0 = losses(config_of(o, 0.0), 20), l1 = losses(config_of(o, 0.2), 20);
    double worst = 0;
    for (std::size_t i = 0; i < l0.size(); ++i) worst = std::max(worst, std::abs(l1[i] - l0[i]) / l0[i]);
    if (std::string(norm) == "layernorm")
      EXPECT_LT(worst, 1e-6);
    else
      EXPECT_GT(worst, 1e-2);
  }
}

// The std of each sub-layer weight of block l (1..N) of each stack: Xavier's sqrt(2 / (in + out)),
// divided by k_l = N - l + 1 for v, out (cross-attention's too), fc1, fc2; q, k and the head Xavier;
// embeddings 1.
TEST(PostLnInit, EachBlockStdIsXavierOverNMinusLPlusOne) {
  const RunConfig c = load_config("{}", "t",
                                  {"data.dataset=synthetic-seq2seq", "model.arch=encoder-decoder",
                                   "model.norm.placement=post", "model.init=postln-init", "model.d_model=64",
                                   "model.d_ff=128", "model.n_layers=4", "model.n_dec_layers=3", "data.max_len=64"});
  auto model = make_model(c, 256, 256);
  int checked = 0;
  for (int i = 0; i < model->params().count(); ++i) {
    const auto& info = model->params().info(i);
    if (info.name.find("bias") != std::string::npos || info.name.find("norm") != std::string::npos) continue;
    const Tensor<float> w = model->params().tensor(i);
    double s1 = 0, s2 = 0;
    for (int64_t k = 0; k < w.size(); ++k) s1 += w.data[k], s2 += double(w.data[k]) * w.data[k];
    const double n = double(w.size()), sample = std::sqrt(s2 / n - (s1 / n) * (s1 / n));
    const bool emb = info.name.find("emb") != std::string::npos;
    const int N = info.name.rfind("enc.", 0) == 0 ? 4 : 3;
    const bool divided = info.name.find(".v.") != std::string::npos || info.name.find(".out.") != std::string::npos ||
                         info.name.find(".fc") != std::string::npos;
    double want = emb ? 1.0 : std::sqrt(2.0 / (info.rows + info.cols));
    if (divided) want /= double(N - info.layer);
    // 4096 draws or more: the sample std within 4% (10 standard errors at the smallest)
    EXPECT_NEAR(sample / want, 1.0, 0.04) << info.layer << ":" << info.name;
    ++checked;
  }
  EXPECT_EQ(checked, 4 * 6 + 3 * 10 + 4 + 1);  // blocks' matrices, the four embeddings, the head
}

// postln-init outside a Post-LN Transformer stack, and a non-number init_mean, name the key.
TEST(InitConfig, RefusedCombinationsNameTheKey) {
  const std::vector<std::vector<std::string>> refused = {
      {"data.dataset=synthetic-lm", "model.init=postln-init"},  // pre
      {"data.dataset=synthetic-lm", "model.init=postln-init", "model.norm.placement=peri"},
      {"data.dataset=synthetic-lm", "model.init=postln-init", "model.norm.type=deepnorm"},
      {"data.dataset=synthetic-lm", "model.init=postln-init", "model.norm.type=deepnorm", "model.norm.placement=post"},
      {"data.dataset=synthetic-classify", "model.arch=mlp", "model.init=postln-init", "model.norm.placement=post"},
      {"data.dataset=synthetic-lm", "model.arch=rnn", "model.init=postln-init"}};
  for (const auto& o : refused) {
    const std::string p = problems_of(o);
    EXPECT_NE(p.find("model.init: postln-init"), std::string::npos) << p;
  }
  EXPECT_NE(problems_of({"model.init_mean=\"a\""}).find("model.init_mean:"), std::string::npos);
  for (const char* arch : {"transformer", "encoder"})
    EXPECT_EQ(problems_of({"data.dataset=synthetic-lm", std::string("model.arch=") + arch, "model.init=postln-init",
                           "model.norm.placement=post", "model.norm.type=rmsnorm"}),
              "");
}

}  // namespace
}  // namespace nt::test
