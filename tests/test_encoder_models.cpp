// The encoder (BERT-style masked LM) and encoder-decoder models built by normtool's model code,
// against PyTorch (tests/golden/model_*.json from scripts/dump_seq2seq_golden.py): with the same
// fixed weights and a fixed batch (padding, a fixed mask), the logits, the loss and the gradient of
// every parameter. Also the masked LM's data: the contract's masking shares and loss positions.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "config/arch.h"
#include "config/config.h"
#include "norms/norm_kind.h"
#include "core/graph.h"
#include "data/dataset.h"
#include "golden_model.h"
#include "helpers.h"
#include "model/model.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

// Every parameter of `model` from the golden file ("p:<layer>:<name>"), then after the backward
// every gradient against "g:<layer>:<name>".
// The floats of the model's parameters (ParamStore::numel counts the alignment padding too).
// The masked LM of golden `name` (config overrides `extra` on top of its sizes): logits, loss, gradients.
void check_encoder(const std::string& name, std::vector<std::string> extra) {
  Golden ref(name);
  const auto& c = ref.config();
  const int B = c["B"], T = c["T"];
  std::vector<std::string> overrides = {"data.dataset=synthetic-lm",
                                        "model.arch=encoder",
                                        "model.embed_norm=true",
                                        "model.norm.placement=post",
                                        "data.seq_len=" + std::to_string(T),
                                        "model.d_model=" + c["d_model"].dump(),
                                        "model.n_heads=" + c["n_heads"].dump(),
                                        "model.d_ff=" + c["d_ff"].dump(),
                                        "model.n_layers=" + c["n_layers"].dump(),
                                        "model.norm.eps=" + c["eps"].dump()};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  const RunConfig config = load_config("{}", "golden", overrides);
  auto model = make_model(config, 256, 256);
  load_parameters(ref, *model);
  Batch batch;
  batch.B = B, batch.T = T;
  batch.tokens = ref.ids("tokens");
  batch.targets = ref.ids("targets");
  batch.mask = ref.values("chosen");
  batch.token_mask = ref.values("real");
  batch.padded = true;
  Graph<float> g;
  Tensor<float> logits = model->logits(g, batch);
  Tensor<float> weight{batch.mask.data(), nullptr, int(batch.mask.size()), 1};
  Tensor<float> loss = cross_entropy(g, logits, batch.targets.data(), weight);
  model->params().zero_grad();
  g.backward(loss);
  ref.expect_close("logits", logits.data, 1e-5, 1e-4, &batch.token_mask);  // the padding's skipped
  ref.expect_close("loss", loss.data, 1e-6, 1e-5);
  expect_gradients(ref, *model);
}

TEST(Golden, EncoderMaskedLm) { check_encoder("model_encoder", {}); }

// BERT's stack with no bias anywhere: model.bias false (no Linear bias, the head's too) and
// model.norm.bias false (LayerNorm's gain alone).
TEST(Golden, EncoderWithoutBiases) {
  check_encoder("model_encoder_nobias", {"model.bias=false", "model.norm.bias=false"});
}

// The encoder-decoder of golden `name` (overrides `extra` on top of its sizes): logits, loss, gradients.
void check_encoder_decoder(const std::string& name, std::vector<std::string> extra) {
  Golden ref(name);
  const auto& c = ref.config();
  const int B = c["B"], S = c["S"], T = c["T"];
  std::vector<std::string> overrides = {"data.dataset=synthetic-seq2seq",
                                        "model.arch=encoder-decoder",
                                        "model.norm.placement=pre",
                                        "data.max_len=" + c["max_len"].dump(),
                                        "model.d_model=" + c["d_model"].dump(),
                                        "model.n_heads=" + c["n_heads"].dump(),
                                        "model.d_ff=" + c["d_ff"].dump(),
                                        "model.n_layers=" + c["n_layers"].dump(),
                                        "model.n_dec_layers=" + c["n_dec_layers"].dump(),
                                        "model.norm.eps=" + c["eps"].dump()};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  const RunConfig config = load_config("{}", "golden", overrides);
  auto model = make_model(config, 256, 256);
  load_parameters(ref, *model);
  Batch batch;
  batch.B = B, batch.T = T, batch.S = S;
  batch.src = ref.ids("src");
  batch.src_mask = ref.values("src_mask");
  batch.tokens = ref.ids("tokens");
  batch.targets = ref.ids("targets");
  batch.mask = ref.values("mask");
  batch.padded = true;
  Graph<float> g;
  Tensor<float> logits = model->logits(g, batch);
  Tensor<float> weight{batch.mask.data(), nullptr, int(batch.mask.size()), 1};
  Tensor<float> loss = cross_entropy(g, logits, batch.targets.data(), weight);
  model->params().zero_grad();
  g.backward(loss);
  ref.expect_close("logits", logits.data, 1e-5, 1e-4, &batch.mask);  // the padding's skipped
  ref.expect_close("loss", loss.data, 1e-6, 1e-5);
  expect_gradients(ref, *model);
  // the encoder's sites are over the source: S positions and its mask
  for (const SiteCapture& s : model->sites()) {
    const bool encoder = std::string(s.place).rfind("enc.", 0) == 0;
    EXPECT_EQ(s.T, encoder ? S : 0) << s.place;
  }
}

TEST(Golden, EncoderDecoder) { check_encoder_decoder("model_encdec", {}); }
// model.qk_norm: LayerNorm on each head's q and k in the encoder's, the decoder's and the cross-attention
TEST(Golden, EncoderDecoderWithQKNorm) { check_encoder_decoder("model_encdec_qk_norm", {"model.qk_norm=true"}); }

// T5's normalization: RMSNorm (no mean, no bias, eps 1e-6) in Pre-LN with a final norm in both
// stacks, no Linear bias anywhere (Hugging Face modeling_t5.py, the golden script's RMS).
TEST(Golden, EncoderDecoderAsT5) {
  check_encoder_decoder("model_encdec_t5", {"model.norm.type=rmsnorm", "model.bias=false"});
}

// The contract's masking: about mask_prob of the real positions chosen, of them 0.8 MASK (1), 0.1
// another byte, 0.1 kept; nothing chosen on padding; the targets are the row; the same validation
// masks at every evaluation.
TEST(MaskedLm, MaskingSharesAndPositions) {
  const RunConfig config = load_config("{}", "mlm",
                                       {"data.dataset=synthetic-lm", "model.arch=encoder", "data.layout=padded",
                                        "data.seq_len=64", "data.mask_prob=0.3"});
  const auto data = make_dataset(config);
  EXPECT_TRUE(data->reports_accuracy());
  Rng rng(5, 2);
  Batch batch;
  int64_t real = 0, chosen = 0, masked = 0, kept = 0, chosen_on_padding = 0;
  for (int i = 0; i < 200; ++i) {
    data->train_batch(rng, 16, batch);
    ASSERT_TRUE(batch.padded);
    ASSERT_EQ(batch.token_mask.size(), batch.tokens.size());
    for (std::size_t n = 0; n < batch.tokens.size(); ++n) {
      const bool is_real = batch.token_mask[n] != 0.0f, is_chosen = batch.mask[n] != 0.0f;
      real += is_real;
      chosen_on_padding += is_chosen && !is_real;
      if (!is_chosen) {
        EXPECT_EQ(batch.tokens[n], batch.targets[n]);  // input = the row where not chosen
        continue;
      }
      ++chosen;
      masked += batch.tokens[n] == 1;
      kept += batch.tokens[n] == batch.targets[n];
    }
  }
  EXPECT_EQ(chosen_on_padding, 0);
  const double p = double(chosen) / double(real), mask_share = double(masked) / double(chosen),
               kept_share = double(kept) / double(chosen);
  // binomial standard errors at these counts (real ~ 1e5+): 0.0015 for p, 0.004 for the shares
  EXPECT_NEAR(p, 0.3, 0.01);
  EXPECT_NEAR(mask_share, 0.8, 0.02);
  EXPECT_NEAR(kept_share, 0.1 + 0.1 / 256, 0.02);  // kept, or a random byte that drew the same
  Batch a, b;
  data->val_batch(0, 8, a);
  data->val_batch(0, 8, b);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.mask, b.mask);
}

// Combinations that make no sense are errors naming the key.
TEST(EncoderConfig, SenselessCombinationsNameTheKey) {
  auto problem = [](std::vector<std::string> overrides) {
    try {
      load_config("{}", "bad", overrides);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(problem({"model.arch=encoder", "data.dataset=synthetic-classify"}).find("model.arch"), std::string::npos);
  EXPECT_NE(problem({"model.n_dec_layers=3"}).find("model.n_dec_layers"), std::string::npos);
  EXPECT_NE(
      problem({"model.arch=mlp", "data.dataset=synthetic-classify", "model.embed_norm=true"}).find("model.embed_norm"),
      std::string::npos);
  EXPECT_NE(problem({"model.arch=encoder", "model.n_heads=3"}).find("model.n_heads"), std::string::npos);
  EXPECT_EQ(problem({"model.arch=encoder", "model.embed_norm=true", "data.mask_prob=0.2"}), "");
}

// DeepNorm's constants per architecture; an explicit alpha or beta applies to every stack.
TEST(EncoderConfig, DeepNormConstantsPerArchitecture) {
  RunConfig c;
  c.model.norm.type = NormType::deepnorm;
  c.model.arch = Arch::encoder_decoder;
  c.model.n_layers = 6;
  c.model.n_dec_layers = 18;
  EXPECT_NEAR(c.deepnorm(StackRole::encoder).alpha, 0.81 * std::pow(6.0 * 6 * 6 * 6 * 18, 1.0 / 16), 1e-12);
  EXPECT_NEAR(c.deepnorm(StackRole::encoder).beta, 0.87 * std::pow(6.0 * 6 * 6 * 6 * 18, -1.0 / 16), 1e-12);
  EXPECT_NEAR(c.deepnorm(StackRole::decoder).alpha, std::pow(54.0, 0.25), 1e-12);
  EXPECT_NEAR(c.deepnorm(StackRole::decoder).beta, std::pow(216.0, -0.25), 1e-12);
  c.model.norm.beta = 0.5;
  EXPECT_EQ(c.deepnorm(StackRole::encoder).beta, 0.5);
  EXPECT_EQ(c.deepnorm(StackRole::decoder).beta, 0.5);
  EXPECT_NEAR(c.deepnorm(StackRole::decoder).alpha, std::pow(54.0, 0.25), 1e-12);
  c.model.arch = Arch::encoder;
  c.model.n_dec_layers.reset();
  c.model.norm.beta.reset();
  EXPECT_NEAR(c.deepnorm().alpha, std::pow(12.0, 0.25), 1e-12);
  EXPECT_NEAR(c.deepnorm().beta, std::pow(48.0, -0.25), 1e-12);
}

}  // namespace
}  // namespace nt::test

namespace nt {
namespace {

// An encoder-decoder run: each train line's accuracy is the share of the counted target tokens
// (it once divided the correct tokens by the rows, > 1 as soon as a row had two right); the
// statistics name the stack and the sub-layer, the encoder's over the source positions only.
TEST(EncoderDecoderRun, AccuracyIsAShareAndSitesNameTheirStack) {
  test::TempDir dir;
  const auto r = test::run_normtool("run --config " + test::source_dir() +
                                    "/configs/smoke/encdec-layernorm-pre.json "
                                    "train.steps=40 train.log_every=5 train.eval_every=40 train.stats_every=20 -o " +
                                    dir.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int train_lines = 0;
  double last_acc = 0, val_acc = -1;
  for (const auto& line : test::read_jsonl(dir / "metrics.jsonl")) {
    ASSERT_TRUE(line.contains("acc")) << line.dump();
    EXPECT_GE(line["acc"].get<double>(), 0.0) << line.dump();
    EXPECT_LE(line["acc"].get<double>(), 1.0) << line.dump();
    if (line["split"] == "train")
      ++train_lines, last_acc = line["acc"].get<double>();
    else
      val_acc = line["acc"].get<double>();
  }
  EXPECT_GE(train_lines, 8);
  EXPECT_GT(last_acc, 0.02);  // it learns something: a share of the tokens, not nothing
  // the last step's batch (8 rows, ~100 tokens) and the validation set agree within sampling noise
  // (sd ~0.03); right tokens over rows gave 1.0 against 0.07 here
  EXPECT_NEAR(last_acc, val_acc, 0.25);
  std::set<std::string> sites;
  int max_enc_position = -1;
  std::ifstream stats(dir / "stats.csv");
  std::string row;
  std::getline(stats, row);  // header step,layer,site,position,mean,std
  while (std::getline(stats, row)) {
    std::vector<std::string> cells;
    std::stringstream ss(row);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    ASSERT_GE(cells.size(), 4u) << row;
    sites.insert(cells[2]);
    if (cells[2].rfind("enc.", 0) == 0) max_enc_position = std::max(max_enc_position, std::stoi(cells[3]));
  }
  for (const char* s : {"enc.attn.in", "enc.ffn.out", "enc.final.in", "dec.attn.in", "dec.cross.in", "dec.cross.out",
                        "dec.ffn.in", "dec.final.out"})
    EXPECT_TRUE(sites.count(s)) << s;
  EXPECT_LT(max_enc_position, 24);  // the source's positions (max_len 24), not the decoder's 25
  std::set<std::string> stacks;
  for (const auto& line : test::read_jsonl(dir / "layers.jsonl"))
    stacks.insert(line["param"].get<std::string>().substr(0, 4));
  EXPECT_TRUE(stacks.count("enc.") && stacks.count("dec.")) << "layers.jsonl names both stacks";
}

}  // namespace
}  // namespace nt
