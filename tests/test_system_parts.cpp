// The parts of the seed articles' systems that change what a norm sees (docs/presets.md): rotary
// position embedding and no position table (model.position), gated feed-forwards (model.ffn glu:
// SwiGLU, GeGLU), tied embeddings (model.tie_embeddings). normtool's models against PyTorch's
// twin (tests/golden/model_rotary*.json, model_position_none.json, model_swiglu.json, model_geglu_post.json
// from scripts/dump_system_golden.py),
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

namespace nt::test {
namespace {

std::vector<int32_t> ids(const std::vector<float>& v) { return std::vector<int32_t>(v.begin(), v.end()); }

// The golden's model keys as overrides ("model.position=rotary", "model.norm.type=rmsnorm", ...).
void add_overrides(const nlohmann::json& keys, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : keys.items()) {
    if (value.is_object()) add_overrides(value, prefix + key + ".", out);
    else out.push_back(prefix + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
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
  batch.tokens = ids(ref.values("tokens"));
  batch.targets = ids(ref.values("targets"));
  Graph<float> g;
  expect_golden(ref, *model, batch, g);
}

TEST(SystemGolden, RotaryRmsNormWithoutBiases) { check_decoder("model_rotary"); }
TEST(SystemGolden, NoPositionTable) { check_decoder("model_position_none"); }
TEST(SystemGolden, SwigluRmsNormWithoutBiases) { check_decoder("model_swiglu"); }
TEST(SystemGolden, GegluPostLnWithBiases) { check_decoder("model_geglu_post"); }
// tok_emb's gradient: the embedding's rows plus the output layer's product
TEST(SystemGolden, TiedEmbeddings) { check_decoder("model_tied"); }

// Rotary in both stacks' self-attention (after qk_norm), not in cross-attention; padded source and target.
TEST(SystemGolden, RotaryEncoderDecoderWithQkNorm) {
  Golden ref("model_rotary_encdec_qk_norm");
  const auto& c = ref.config();
  std::vector<std::string> overrides = {"data.dataset=synthetic-seq2seq", "data.max_len=" + c["max_len"].dump()};
  add_overrides(c["model"], "model.", overrides);
  auto model = make_model(load_config("{}", "golden", overrides), 256, 256);
  load_parameters(ref, *model);
  Batch batch;
  batch.B = c["B"], batch.T = c["T"], batch.S = c["S"];
  batch.src = ids(ref.values("src"));
  batch.src_mask = ref.values("src_mask");
  batch.tokens = ids(ref.values("tokens"));
  batch.targets = ids(ref.values("targets"));
  batch.mask = ref.values("mask");
  batch.padded = true;
  Graph<float> g;
  expect_golden(ref, *model, batch, g);
}

// The rotary op's backward in double: q and k of two heads turned (columns 0..15 of a qkv row of 24), v copied;
// and with every column turned (the qk_norm path).
TEST(GradCheck, Rotary) {
  for (int rotated : {16, 24}) {
    std::vector<Input> in = {random_input(2 * 5, 24, 11, 1.3, 0.2)};
    const GradCheckResult r =
        gradcheck([&](Graph<double>& g, std::vector<Tensor<double>>& t) { return rotary(g, t[0], 5, 8, rotated, 100.0); },
                  in);
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
    const RunConfig c = load_config("{}", "t", {"data.dataset=synthetic-lm", std::string("model.position=") + position});
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
  const CommandResult r = run_normtool("run --set data.dataset=synthetic-lm --set model.arch=rnn "
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
    EXPECT_EQ(int64_t(a->params().parameter_count() - b->params().parameter_count()), L * (C * F + (std::string(bias) == "true" ? F : 0)));
    EXPECT_EQ(int64_t(a->params().parameter_count()), model_shape(glu, 256, 256).params);
  }
}

// Tied: no head.weight, V x C fewer parameters, and the shape counts them.
TEST(TieEmbeddings, TheHeadHasNoWeightOfItsOwn) {
  for (const char* arch : {"transformer", "encoder"}) {
    const RunConfig tied = load_config("{}", "t", {"data.dataset=synthetic-lm", std::string("model.arch=") + arch,
                                                   "model.tie_embeddings=true"});
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
    RunConfig plain = load_config("{}", "t", {encdec ? "data.dataset=synthetic-seq2seq" : "data.dataset=synthetic-lm",
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
