// The parts of the seed articles' systems that change what a norm sees (docs/presets.md): rotary
// position embedding and no position table (model.position), gated feed-forwards (model.ffn glu:
// SwiGLU, GeGLU), tied embeddings (model.tie_embeddings), and Gemma's: the (1 + w) gain
// (model.norm.unit_offset), the token embedding times sqrt(d_model) (model.embed_scale) and the soft
// caps (model.attn_softcap, model.logit_softcap); OLMo 2's reordered norm (model.norm.placement reordered) and
// query and key norms over all features (model.qk_norm_scope all). normtool's models against PyTorch's twin
// (tests/golden/model_*.json from scripts/dump_system_golden.py),
// the gradient of each new op in double, what it must leave invariant, and the combinations refused.
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
#include "model/model.h"
#include "model/shape.h"
#include "ops/ops.h"
#include "train/optimizer.h"

namespace nt::test {
namespace {

// The golden's model keys as overrides ("model.position=rotary", "model.norm.type=rmsnorm", ...).
void add_overrides(const nlohmann::json& keys, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : keys.items()) {
    if (value.is_object())
      add_overrides(value, prefix + key + ".", out);
    else
      out.push_back(prefix + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  }
}

// The decoder-only LM of golden `name`, every position real.
void check_decoder(const std::string& name) {
  Golden ref(name);
  const auto& c = ref.config();
  std::vector<std::string> overrides = {"data.dataset=synthetic-lm", "data.seq_len=" + c["T"].dump()};
  add_overrides(c["model"], "model.", overrides);
  auto model = make_model(load_config("{}", "golden", overrides), 256, 256);
  load_parameters(ref, *model);
  Batch batch;
  batch.B = c["B"], batch.T = c["T"];
  batch.tokens = ref.ids("tokens");
  batch.targets = ref.ids("targets");
  Graph<float> g;
  expect_golden(ref, *model, batch, g);
}

TEST(SystemGolden, RotaryRmsNormWithoutBiases) { check_decoder("model_rotary"); }
TEST(SystemGolden, NoPositionTable) { check_decoder("model_position_none"); }
TEST(SystemGolden, SwigluRmsNormWithoutBiases) { check_decoder("model_swiglu"); }
TEST(SystemGolden, GegluPostLnWithBiases) { check_decoder("model_geglu_post"); }
// tok_emb's gradient: the embedding's rows plus the output layer's product
TEST(SystemGolden, TiedEmbeddings) { check_decoder("model_tied"); }

// Gemma 2's block: sandwich (peri) RMSNorm with (1 + w) gains, GeGLU, rotary, tied, the token embedding
// times sqrt(d_model), soft-capped attention scores and logits (caps of 2 and 3, so that tanh bends), no biases.
TEST(SystemGolden, GemmaSandwichUnitOffsetGainsScaledEmbedding) { check_decoder("model_gemma2"); }

// OLMo 2's block: the reordered norm x + norm(f(x)) (RMSNorm, no input norm) and a final norm, query and key
// RMSNorms over all d_model features before the heads split, then rotary (base 500000); SwiGLU; no biases.
TEST(SystemGolden, Olmo2ReorderedNormQkNormOverAllFeatures) { check_decoder("model_olmo2"); }

// The encoder-decoder of golden `name`: padded source and target.
void check_encoder_decoder(const std::string& name) {
  Golden ref(name);
  const auto& c = ref.config();
  std::vector<std::string> overrides = {"data.dataset=synthetic-seq2seq", "data.max_len=" + c["max_len"].dump()};
  add_overrides(c["model"], "model.", overrides);
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
}

// Rotary in both stacks' self-attention (after qk_norm), not in cross-attention; padded source and target.
TEST(SystemGolden, RotaryEncoderDecoderWithQkNorm) { check_encoder_decoder("model_rotary_encdec_qk_norm"); }
// (1 + w) in every norm, the query and key norms too (a recurrent cell's path), LayerNorm with its bias;
// both stacks' token embeddings scaled, then their learned positions added; scores capped in self- and
// cross-attention, logits capped.
TEST(SystemGolden, UnitOffsetLayerNormQkNormScaledEmbeddingEncoderDecoder) {
  check_encoder_decoder("model_unit_offset_encdec");
}

// reordered in both stacks, cross-attention too; LayerNorm with biases; q and k norms over all features.
TEST(SystemGolden, ReorderedLayerNormEncoderDecoderQkNormOverAllFeatures) {
  check_encoder_decoder("model_reordered_encdec");
}

// The forward's loss on a fixed batch, the gradients in the model's store.
double loss_and_gradients(Model& model, const Batch& batch) {
  Graph<float> g;
  Tensor<float> logits = model.logits(g, batch);
  Tensor<float> loss = cross_entropy(g, logits, batch.targets.data(), Tensor<float>{});
  model.params().zero_grad();
  g.backward(loss);
  return loss.data[0];
}

Batch lm_batch(int B, int T) {
  Batch batch;
  batch.B = B, batch.T = T;
  for (int i = 0; i < B * T; ++i)
    batch.tokens.push_back((37 * i + 11) % 256), batch.targets.push_back((53 * i + 7) % 256);
  return batch;
}

bool is_norm_gain(const std::string& name) {
  return name.find("norm") != std::string::npos && name.ends_with(".weight");
}

// Gemma's (1 + w): w starts at 0, so at init it is the model with gains from 1, to the bit: the same
// loss, every gradient the same. The difference is weight decay's pull: after one AdamW step from the
// same gradients, 1 + w exceeds the plain gain by exactly lr * wd (decay shrinks w, not the gain).
TEST(UnitOffset, TheSameModelAtInitAndWeightDecayPullsTheGainTowardOne) {
  for (const char* norm : {"rmsnorm", "layernorm"}) {
    RunConfig plain =
        load_config("{}", "t",
                    {"data.dataset=synthetic-lm", "data.seq_len=8", "model.n_layers=2",
                     std::string("model.norm.type=") + norm, "model.norm.placement=peri", "model.qk_norm=true",
                     "train.optimizer=adamw", "train.lr=0.01", "train.weight_decay=0.1"});
    RunConfig offset = plain;
    offset.model.norm.unit_offset = true;
    auto a = make_model(plain, 256, 256), b = make_model(offset, 256, 256);
    const Batch batch = lm_batch(2, 8);
    EXPECT_EQ(loss_and_gradients(*a, batch), loss_and_gradients(*b, batch)) << norm;
    ParamStore<float>&pa = a->params(), &pb = b->params();
    ASSERT_EQ(pa.parameter_count(), pb.parameter_count());
    int gains = 0;
    for (int i = 0; i < pa.count(); ++i) {
      const auto& info = pa.info(i);
      const bool gain = is_norm_gain(info.name);
      gains += gain;
      for (std::size_t j = info.offset; j < info.offset + info.size(); ++j) {
        ASSERT_EQ(pb.data()[j] + (gain ? 1.0f : 0.0f), pa.data()[j]) << info.name;
        ASSERT_EQ(pb.grad()[j], pa.grad()[j]) << info.name;
      }
    }
    EXPECT_EQ(gains, 2 * 6 + 1) << norm;  // per block attn, attn_out, ffn, ffn_out, q_norm, k_norm; the final norm
    OptimizerState sa(plain.train, pa.parameter_count()), sb(offset.train, pb.parameter_count());
    sa.step(pa.data(), pa.grad(), plain.train.lr);
    sb.step(pb.data(), pb.grad(), offset.train.lr);
    for (int i = 0; i < pa.count(); ++i) {
      const auto& info = pa.info(i);
      if (!is_norm_gain(info.name)) continue;
      for (std::size_t j = info.offset; j < info.offset + info.size(); ++j)
        ASSERT_NEAR(1.0 + pb.data()[j] - pa.data()[j], 0.01 * 0.1, 1e-6) << info.name;
    }
  }
  for (const char* refused : {"model.norm.type=scalenorm", "model.norm.type=none", "model.norm.affine=false"})
    EXPECT_NE(problems_of({"data.dataset=synthetic-lm", "model.norm.unit_offset=true", refused})
                  .find("model.norm.unit_offset:"),
              std::string::npos)
        << refused;
  for (const char* kept : {"model.norm.type=dyt", "model.norm.type=batchnorm", "model.norm.type=deepnorm"})
    EXPECT_EQ(problems_of({"data.dataset=synthetic-lm", "model.norm.unit_offset=true", kept}), "") << kept;
  EXPECT_EQ(
      problems_of({"data.dataset=synthetic-lm", "model.arch=rnn", "model.cell=lstm", "model.norm.unit_offset=true"}),
      "");
}

// OLMo 2's reordered norm: a norm of the block's kind after f (none, layernorm, rmsnorm), in a Transformer
// stack, with the pre placement's parameters; not with LayerNorm Scaling, which scales input norms. The query
// and key norms' scope needs the norms.
TEST(Reordered, ThePreParametersAndTheRefusedCombinations) {
  for (const char* arch : {"transformer", "encoder-decoder"}) {
    const std::string data =
        std::string(arch) == "transformer" ? "data.dataset=synthetic-lm" : "data.dataset=synthetic-seq2seq";
    const RunConfig reordered =
        load_config("{}", "t", {data, std::string("model.arch=") + arch, "model.norm.placement=reordered"});
    RunConfig pre = reordered;
    pre.model.norm.placement = Placement::pre;
    EXPECT_EQ(make_model(reordered, 256, 256)->params().parameter_count(),
              make_model(pre, 256, 256)->params().parameter_count())
        << arch;
    EXPECT_EQ(int64_t(make_model(reordered, 256, 256)->params().parameter_count()),
              model_shape(reordered, 256, 256).params);
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"model.norm.placement=reordered", "model.norm.type=batchnorm"}, "model.norm.placement:"},
      {{"model.norm.placement=reordered", "model.norm.type=deepnorm"}, "model.norm.placement:"},
      {{"model.norm.placement=reordered", "model.norm.type=scalenorm"}, "model.norm.placement:"},
      {{"model.norm.placement=reordered", "model.arch=rnn"}, "model.norm.placement:"},
      {{"model.norm.placement=reordered", "model.norm.depth_scaling=true"}, "model.norm.depth_scaling:"},
      {{"model.qk_norm_scope=all"}, "model.qk_norm_scope:"},
      {{"model.attn_softcap=50", "model.arch=rnn"}, "model.attn_softcap:"},
      {{"model.logit_softcap=30", "model.arch=mlp", "data.dataset=synthetic-classify"}, "model.logit_softcap:"},
  };
  for (auto [overrides, key] : refused) {
    if (overrides.back().find("synthetic-classify") == std::string::npos)
      overrides.push_back("data.dataset=synthetic-lm");
    EXPECT_NE(problems_of(overrides).find(key), std::string::npos) << key << " " << overrides[0];
  }
  EXPECT_EQ(problems_of({"data.dataset=synthetic-lm", "model.norm.placement=reordered", "model.norm.type=none"}), "");
  EXPECT_EQ(problems_of({"data.dataset=synthetic-lm", "model.qk_norm=true", "model.qk_norm_scope=all"}), "");
}

// model.embed_scale multiplies the token rows by sqrt(d_model) before the positions are added: the same
// logits as a model whose token table is sqrt(d) times larger, and sqrt(d) times its table's gradient.
TEST(EmbedScale, TheTokenTableTimesSqrtD) {
  RunConfig scaled = load_config("{}", "t", {"data.dataset=synthetic-lm", "data.seq_len=8", "model.embed_scale=true"});
  RunConfig plain = scaled;
  plain.model.embed_scale = false;
  auto a = make_model(scaled, 256, 256), b = make_model(plain, 256, 256);
  const double s = std::sqrt(double(scaled.model.d_model));
  ParamStore<float>&pa = a->params(), &pb = b->params();
  std::copy(pa.data(), pa.data() + pa.parameter_count(), pb.data());
  int table = -1;
  for (int i = 0; i < pa.count(); ++i)
    if (pa.info(i).name == "tok_emb.weight") table = i;
  ASSERT_GE(table, 0);
  const auto& info = pa.info(table);
  for (std::size_t j = info.offset; j < info.offset + info.size(); ++j) pb.data()[j] = float(s * pa.data()[j]);
  const Batch batch = lm_batch(2, 8);
  EXPECT_NEAR(loss_and_gradients(*a, batch), loss_and_gradients(*b, batch), 1e-5);
  double largest = 0;
  for (std::size_t j = info.offset; j < info.offset + info.size(); ++j) {
    ASSERT_NEAR(pa.grad()[j], s * pb.grad()[j], 1e-6 + 1e-4 * std::abs(pa.grad()[j])) << j;
    largest = std::max(largest, double(std::abs(pa.grad()[j])));
  }
  EXPECT_GT(largest, 1e-4);
  EXPECT_NE(
      problems_of({"model.embed_scale=true", "model.arch=rnn", "data.dataset=synthetic-lm"}).find("model.embed_scale:"),
      std::string::npos);
}

// The rotary op's backward in double: q and k of two heads turned (columns 0..15 of a qkv row of 24), v copied;
// and with every column turned (the qk_norm path).
TEST(GradCheck, Rotary) {
  for (int rotated : {16, 24}) {
    std::vector<Input> in = {random_input(2 * 5, 24, 11, 1.3, 0.2)};
    const GradCheckResult r = gradcheck(
        [&](Graph<double>& g, std::vector<Tensor<double>>& t) { return rotary(g, t[0], 5, 8, rotated, 100.0); }, in);
    EXPECT_LT(r.max_error(), 1e-8) << rotated;
    EXPECT_GT(r.norms[0], 1e-3);
  }
}

// Rotary's point: q_t . k_u depends on t - u alone, and it turns each pair without changing its length.
// The same q and k vectors at every position, turned, then the dot products compared along the diagonals.
TEST(Rotary, ScoresDependOnTheRelativePositionAndLengthsStay) {
  const int T = 7, hs = 8;
  Input q = random_input(1, hs, 3), k = random_input(1, hs, 4);
  std::vector<double> rows(std::size_t(T) * 2 * hs);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < hs; ++j) rows[t * 2 * hs + j] = q.data[j], rows[t * 2 * hs + hs + j] = k.data[j];
  Graph<double> g(false, false);
  const Tensor<double> y = rotary(g, Tensor<double>{rows.data(), nullptr, T, 2 * hs}, T, hs, 2 * hs, 10000.0);
  auto dot = [&](int t, int u) {
    double s = 0;
    for (int j = 0; j < hs; ++j) s += y.data[t * 2 * hs + j] * y.data[u * 2 * hs + hs + j];
    return s;
  };
  for (int d = 0; d < T; ++d)
    for (int u = 0; u + d < T; ++u) EXPECT_NEAR(dot(u + d, u), dot(d, 0), 1e-12) << d << " " << u;
  EXPECT_GT(std::abs(dot(3, 0) - dot(0, 0)), 1e-3);  // and it does depend on it
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < hs / 2; ++i) {
      const double* row = y.data + t * 2 * hs;
      EXPECT_NEAR(std::hypot(row[i], row[i + hs / 2]), std::hypot(q.data[i], q.data[i + hs / 2]), 1e-12);
    }
  for (int j = 0; j < 2 * hs; ++j) EXPECT_EQ(y.data[j], rows[j]);  // position 0: unturned
}

// rotary and none drop the position table; the count of parameters follows.
TEST(Position, NoTableWithoutLearnedPositions) {
  for (const char* position : {"learned", "none", "rotary"}) {
    const RunConfig c =
        load_config("{}", "t", {"data.dataset=synthetic-lm", std::string("model.position=") + position});
    auto model = make_model(c, 256, 256);
    bool table = false;
    for (int i = 0; i < model->params().count(); ++i) table |= model->params().info(i).name == "pos_emb.weight";
    EXPECT_EQ(table, std::string(position) == "learned") << position;
  }
}

TEST(PositionConfig, RefusedCombinationsNameTheKey) {
  const std::vector<std::vector<std::string>> refused = {
      {"model.position=rotary", "model.arch=rnn", "data.dataset=synthetic-lm"},
      {"model.position=none", "model.arch=rnnsearch", "data.dataset=synthetic-seq2seq"},
      {"model.position=rotary", "model.arch=mlp", "data.dataset=synthetic-classify"},
      {"model.position=rotary", "model.d_model=12", "model.n_heads=4", "data.dataset=synthetic-lm"},  // d_head 3
  };
  for (const auto& overrides : refused) EXPECT_NE(problems_of(overrides).find("model.position:"), std::string::npos);
  EXPECT_EQ(problems_of({"model.position=rotary", "model.arch=encoder", "data.dataset=synthetic-lm"}), "");
  const CommandResult r = run_normtool(
      "run --set data.dataset=synthetic-lm --set model.arch=rnn "
      "--set model.position=rotary --out /nonexistent/x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("model.position: rotary"), std::string::npos) << r.output;
}

// glu adds fc3 (d_model x d_ff, and its bias) to every block; the shape's count is the model's.
TEST(Ffn, GluAddsFc3AndTheShapeCountsIt) {
  for (const char* bias : {"true", "false"}) {
    std::vector<std::string> o = {"data.dataset=synthetic-lm", "model.ffn=glu", "model.activation=silu",
                                  std::string("model.bias=") + bias};
    const RunConfig glu = load_config("{}", "t", o);
    o[1] = "model.ffn=mlp";
    const RunConfig mlp = load_config("{}", "t", o);
    auto a = make_model(glu, 256, 256), b = make_model(mlp, 256, 256);
    const int64_t C = glu.model.d_model, F = glu.model.d_ff, L = glu.model.n_layers;
    EXPECT_EQ(int64_t(a->params().parameter_count() - b->params().parameter_count()),
              L * (C * F + (std::string(bias) == "true" ? F : 0)));
    EXPECT_EQ(int64_t(a->params().parameter_count()), model_shape(glu, 256, 256).params);
  }
}

// Tied: no head.weight, V x C fewer parameters, and the shape counts them.
TEST(TieEmbeddings, TheHeadHasNoWeightOfItsOwn) {
  for (const char* arch : {"transformer", "encoder"}) {
    const RunConfig tied = load_config(
        "{}", "t", {"data.dataset=synthetic-lm", std::string("model.arch=") + arch, "model.tie_embeddings=true"});
    RunConfig untied = tied;
    untied.model.tie_embeddings = false;
    auto a = make_model(tied, 256, 256), b = make_model(untied, 256, 256);
    EXPECT_EQ(b->params().parameter_count() - a->params().parameter_count(), std::size_t(256 * tied.model.d_model));
    EXPECT_EQ(int64_t(a->params().parameter_count()), model_shape(tied, 256, 256).params);
    for (int i = 0; i < a->params().count(); ++i) EXPECT_NE(a->params().info(i).name, "head.weight");
  }
  EXPECT_NE(problems_of({"model.tie_embeddings=true", "model.arch=encoder-decoder", "data.dataset=synthetic-seq2seq"})
                .find("model.tie_embeddings:"),
            std::string::npos);
  EXPECT_NE(problems_of({"model.tie_embeddings=true", "model.arch=rnn", "data.dataset=synthetic-lm"})
                .find("model.tie_embeddings:"),
            std::string::npos);
}

// GPT-2's init: the same draws, out and fc2 divided by sqrt(2 N) exactly, every other weight untouched.
TEST(ScaledResidualInit, OutAndFc2DividedBySqrtTwoN) {
  for (const char* arch : {"transformer", "encoder-decoder"}) {
    const bool encdec = std::string(arch) == "encoder-decoder";
    RunConfig plain = load_config("{}", "t",
                                  {encdec ? "data.dataset=synthetic-seq2seq" : "data.dataset=synthetic-lm",
                                   std::string("model.arch=") + arch, "model.n_layers=3"});
    RunConfig scaled = plain;
    scaled.model.scaled_residual_init = true;
    auto a = make_model(plain, 256, 256), b = make_model(scaled, 256, 256);
    int scaled_weights = 0;
    for (int i = 0; i < a->params().count(); ++i) {
      const auto& info = a->params().info(i);
      const bool output = info.name.ends_with("out.weight") || info.name.ends_with("fc2.weight");
      const double d = output ? std::sqrt(2.0 * 3) : 1.0;  // both stacks of 3 blocks
      scaled_weights += output;
      for (std::size_t j = 0; j < info.size(); ++j)
        ASSERT_NEAR(b->params().data()[info.offset + j], a->params().data()[info.offset + j] / d, 1e-7) << info.name;
    }
    EXPECT_EQ(scaled_weights, encdec ? 3 * 2 + 3 * 3 : 3 * 2) << arch;
  }
  EXPECT_NE(problems_of({"model.scaled_residual_init=true", "model.arch=rnn", "data.dataset=synthetic-lm"})
                .find("model.scaled_residual_init:"),
            std::string::npos);
}

TEST(FfnConfig, GluOutsideTransformerStacksIsRefused) {
  EXPECT_NE(problems_of({"model.ffn=glu", "model.arch=rnn", "data.dataset=synthetic-lm"}).find("model.ffn:"),
            std::string::npos);
  EXPECT_NE(problems_of({"model.ffn=glu", "model.arch=mlp", "data.dataset=synthetic-classify"}).find("model.ffn:"),
            std::string::npos);
  EXPECT_EQ(problems_of({"model.ffn=glu", "model.arch=encoder-decoder", "data.dataset=synthetic-seq2seq"}), "");
}

}  // namespace
}  // namespace nt::test
