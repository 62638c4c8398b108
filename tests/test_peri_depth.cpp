// Peri-LN (model.norm.placement peri, Kim et al. 2025) and LayerNorm Scaling
// (model.norm.depth_scaling, Sun et al. 2025): normtool's models against PyTorch's twin
// (tests/golden/model_peri_encdec.json, model_depth_scaling_*.json from scripts/dump_placement_golden.py),
// the gradient of what they add checked in double, their sites, and the combinations they refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_problems.h"
#include "core/graph.h"
#include "data/dataset.h"
#include "golden_model.h"
#include "gradcheck.h"
#include "helpers.h"
#include "model/blocks/residual.h"
#include "model/model.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

// The golden's norm settings as overrides ("model.norm.placement=peri", ...).
std::vector<std::string> norm_overrides(const nlohmann::json& norm) {
  std::vector<std::string> out;
  for (const auto& [key, value] : norm.items())
    out.push_back("model.norm." + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  return out;
}

// The decoder-only LM of golden `name`, every position real.
void check_decoder(const std::string& name) {
  Golden ref(name);
  const auto& c = ref.config();
  std::vector<std::string> overrides = {"data.dataset=synthetic-lm",
                                        "data.seq_len=" + c["T"].dump(),
                                        "model.d_model=" + c["d_model"].dump(),
                                        "model.n_heads=" + c["n_heads"].dump(),
                                        "model.d_ff=" + c["d_ff"].dump(),
                                        "model.n_layers=" + c["n_layers"].dump(),
                                        "model.bias=" + c["bias"].dump()};
  for (const std::string& o : norm_overrides(c["norm"])) overrides.push_back(o);
  auto model = make_model(load_config("{}", "golden", overrides), 256, 256);
  load_parameters(ref, *model);
  Batch batch;
  batch.B = c["B"], batch.T = c["T"];
  batch.tokens = ref.ids("tokens");
  batch.targets = ref.ids("targets");
  Graph<float> g;
  expect_golden(ref, *model, batch, g);
}

TEST(Golden, DepthScalingPreRmsNorm) { check_decoder("model_depth_scaling_pre"); }
TEST(Golden, DepthScalingPeriLayerNormWithoutBiases) { check_decoder("model_depth_scaling_peri"); }

// Peri-LN in both stacks of an encoder-decoder: the output norms of self-attention, cross-attention
// and feed-forward, with padded source keys and targets.
TEST(Golden, PeriEncoderDecoder) {
  Golden ref("model_peri_encdec");
  const auto& c = ref.config();
  std::vector<std::string> overrides = {
      "data.dataset=synthetic-seq2seq",         "model.arch=encoder-decoder",
      "data.max_len=" + c["max_len"].dump(),    "model.d_model=" + c["d_model"].dump(),
      "model.n_heads=" + c["n_heads"].dump(),   "model.d_ff=" + c["d_ff"].dump(),
      "model.n_layers=" + c["n_layers"].dump(), "model.n_dec_layers=" + c["n_dec_layers"].dump()};
  for (const std::string& o : norm_overrides(c["norm"])) overrides.push_back(o);
  auto model = make_model(load_config("{}", "golden", overrides), 256, 256);
  load_parameters(ref, *model);
  Batch batch;
  batch.B = c["B"], batch.T = c["T"], batch.S = c["S"];
  batch.src = ref.ids("src");
  batch.src_mask = ref.values("src_mask");
  batch.tokens = ref.ids("tokens");
  batch.targets = ref.ids("targets");
  batch.mask = ref.values("mask");
  batch.padded = true;
  Graph<float> g;
  expect_golden(ref, *model, batch, g);
  int out_sites = 0;  // per encoder block attn_out, ffn_out; per decoder block attn_out, cross_out, ffn_out
  for (const SiteCapture& s : model->sites()) out_sites += std::string(s.place).find("_out") != std::string::npos;
  EXPECT_EQ(out_sites, 2 * int(c["n_layers"]) + 3 * int(c["n_dec_layers"]));
}

// What peri and depth scaling add, in double: x + norm_out(f(s * norm_in(x)) + b) with f a Linear's
// product, as Residual composes it (model/blocks/residual.h), through LayerNorm and RMSNorm with gains.
TEST(GradCheck, PeriAndDepthScaledSublayer) {
  for (NormType type : {NormType::layernorm, NormType::rmsnorm}) {
    for (double s : {1.0, 1.0 / std::sqrt(3.0)}) {
      // x, norm_in's gain, f's W and b, norm_out's gain, the two LayerNorm biases (unused by RMSNorm)
      std::vector<Input> in = {random_input(6, 5, 1, 1.5, 0.3), random_input(1, 5, 2, 0.3, 1.0),
                               random_input(5, 5, 3, 0.5),      random_input(1, 5, 4, 0.2),
                               random_input(1, 5, 5, 0.3, 1.0), random_input(1, 5, 6, 0.2),
                               random_input(1, 5, 7, 0.2)};
      const bool ln = type == NormType::layernorm;
      auto f = [&](Graph<double>& g, std::vector<Tensor<double>>& t) {
        auto beta = [&](int i) { return ln ? t[i] : Tensor<double>{}; };
        const Tensor<double> h = scale(g, apply_norm(g, type, t[0], NormArgs<double>{t[1], beta(5)}), s);
        const Tensor<double> fh = add(g, linear(g, h, t[2], Tensor<double>{}), t[3]);
        return add(g, t[0], apply_norm(g, type, fh, NormArgs<double>{t[4], beta(6)}));
      };
      const GradCheckResult r = gradcheck(f, in);
      EXPECT_LT(r.max_error(), 1e-7) << to_string(type) << " s " << s;
      for (std::size_t i = 0; i < (ln ? in.size() : 5); ++i) EXPECT_GT(r.norms[i], 1e-3) << i;
    }
  }
}

// The sites a peri block records, and depth scaling's factor in the input norms' outputs alone:
// block l's attn.out = norm(attn.in) / sqrt(l), its attn_out.out unscaled (rows of unit RMS, gain 1).
TEST(PeriDepth, SitesAndTheFactorOfEachBlock) {
  const RunConfig c = load_config(
      "{}", "t",
      {"data.dataset=synthetic-lm", "data.seq_len=4", "model.d_model=8", "model.n_layers=3", "model.norm.type=rmsnorm",
       "model.norm.placement=peri", "model.norm.depth_scaling=true", "model.norm.eps=1e-12"});
  auto model = make_model(c, 256, 256);
  Batch batch;
  batch.B = 2, batch.T = 4;
  for (int i = 0; i < 8; ++i) batch.tokens.push_back(7 * i + 3), batch.targets.push_back(i);
  Graph<float> g(false, false);
  model->logits(g, batch);
  std::vector<std::string> places;
  auto rms = [](const Tensor<float>& t, int r) {
    double sq = 0;
    for (int j = 0; j < t.cols; ++j) sq += double(t.data[r * t.cols + j]) * t.data[r * t.cols + j];
    return std::sqrt(sq / t.cols);
  };
  for (const SiteCapture& s : model->sites()) {
    places.push_back(std::to_string(s.layer) + ":" + s.place);
    const bool input_norm = std::string(s.place) == "attn" || std::string(s.place) == "ffn";
    const double want = input_norm ? 1.0 / std::sqrt(s.layer + 1.0) : 1.0;
    for (int r = 0; r < s.out.rows; ++r) EXPECT_NEAR(rms(s.out, r), want, 1e-3) << s.place << " " << s.layer;
  }
  EXPECT_EQ(places,
            (std::vector<std::string>{"0:attn", "0:attn_out", "0:ffn", "0:ffn_out", "1:attn", "1:attn_out", "1:ffn",
                                      "1:ffn_out", "2:attn", "2:attn_out", "2:ffn", "2:ffn_out", "3:final"}));
  // four gains a block (no bias in rmsnorm), and the final norm's
  int gains = 0;
  for (int i = 0; i < model->params().count(); ++i)
    gains += model->params().info(i).name.find("norm.weight") != std::string::npos;
  EXPECT_EQ(gains, 4 * 3 + 1);
}

// Each combination the papers do not define is refused naming the key.
TEST(PeriDepthConfig, RefusedCombinationsNameTheKey) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"model.norm.placement=peri", "model.arch=mlp", "data.dataset=synthetic-classify"}, "model.norm.placement"},
      {{"model.norm.placement=peri", "model.arch=rnn", "data.dataset=synthetic-lm"}, "model.norm.placement"},
      {{"model.norm.placement=peri", "model.arch=rnnsearch", "data.dataset=synthetic-seq2seq"}, "model.norm.placement"},
      {{"model.norm.placement=peri", "model.norm.type=deepnorm"}, "model.norm.placement"},
      {{"model.norm.placement=peri", "model.norm.type=batchnorm"}, "model.norm.placement"},
      {{"model.norm.placement=peri", "model.norm.type=prmsnorm"}, "model.norm.placement"},
      {{"model.norm.placement=peri", "model.norm.type=scalenorm"}, "model.norm.placement"},
      {{"model.norm.depth_scaling=true", "model.norm.placement=post"}, "model.norm.depth_scaling"},
      {{"model.norm.depth_scaling=true", "model.norm.type=deepnorm"}, "model.norm.depth_scaling"},
      {{"model.norm.depth_scaling=true", "model.norm.type=none"}, "model.norm.depth_scaling"},
      {{"model.norm.depth_scaling=true", "model.norm.type=prmsnorm"}, "model.norm.depth_scaling"},
      {{"model.norm.depth_scaling=true", "model.norm.type=scalenorm"}, "model.norm.depth_scaling"},
      {{"model.norm.depth_scaling=true", "model.norm.type=batchnorm"}, "model.norm.depth_scaling"},
      {{"model.norm.depth_scaling=true", "model.arch=mlp", "data.dataset=synthetic-classify"},
       "model.norm.depth_scaling"},
      {{"model.norm.depth_scaling=true", "model.arch=rnn", "data.dataset=synthetic-lm"}, "model.norm.depth_scaling"},
  };
  for (const auto& [overrides, key] : cases) {
    std::vector<std::string> all = {"data.dataset=synthetic-lm"};
    all.insert(all.end(), overrides.begin(), overrides.end());
    const std::string p = problems_of(all);
    EXPECT_NE(p.find(key + ":"), std::string::npos) << p;
  }
  for (const char* type : {"none", "layernorm", "rmsnorm"})
    for (const char* arch : {"transformer", "encoder"})
      EXPECT_EQ(problems_of({"data.dataset=synthetic-lm", std::string("model.arch=") + arch,
                             "model.norm.placement=peri", std::string("model.norm.type=") + type}),
                "");
  EXPECT_EQ(problems_of({"data.dataset=synthetic-seq2seq", "model.arch=encoder-decoder", "model.norm.placement=peri",
                         "model.norm.depth_scaling=true", "model.norm.type=rmsnorm"}),
            "");
}

// The command line exits 2 naming the key.
TEST(PeriDepthConfig, RunExitsTwoNamingTheKey) {
  const CommandResult peri = run_normtool(
      "run --set data.dataset=synthetic-lm --set model.norm.placement=peri "
      "--set model.norm.type=prmsnorm --out /nonexistent/x");
  EXPECT_EQ(peri.exit_code, 2);
  EXPECT_NE(peri.output.find("model.norm.placement: peri"), std::string::npos) << peri.output;
  const CommandResult depth = run_normtool(
      "run --set data.dataset=synthetic-lm --set model.norm.placement=post "
      "--set model.norm.depth_scaling=true --out /nonexistent/x");
  EXPECT_EQ(depth.exit_code, 2);
  EXPECT_NE(depth.output.find("model.norm.depth_scaling:"), std::string::npos) << depth.output;
}

}  // namespace
}  // namespace nt::test
