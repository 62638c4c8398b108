// The recurrent language model (model.arch rnn) and its cells (model/blocks/gru.h, lstm.h):
// - the cells' whole recurrence in double against central differences, every norm site through
//   several steps, fused and composite norms;
// - the model normtool builds against PyTorch (tests/golden/rnn_*.json from
//   scripts/dump_rnn_golden.py): logits, loss and every parameter's gradient;
// - configs: the combinations the contract refuses name their key.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "golden_model.h"
#include "gradcheck.h"
#include "model/blocks/gru.h"
#include "model/blocks/lstm.h"
#include "model/model.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

constexpr int B = 2, T = 4, D = 3, H = 4;  // rows, steps, input width, state width

// Norm gains near 1 and biases near 0 (random, so that a swapped gain or bias shows).
Input gain(NormType kind, int C, uint64_t seed) {
  return random_input(1, param_count(norm_desc(kind).gain, C), seed, 0.2, 1.0);
}
Input bias(int C, uint64_t seed) { return random_input(1, C, seed, 0.1); }

// A site of the cell: the kind with its gain t[g] and bias t[g + 1] where the kind has them.
RowNorm<double> site(NormType kind, bool composite, std::vector<Tensor<double>>& t, int g) {
  const NormDesc& d = norm_desc(kind);
  NormArgs<double> a;
  a.eps = 1e-5;
  a.p = 0.5;  // prmsnorm: the RMS of half the features (the default 1/16 of these 4 to 8 reads one, |x_0|:
              // a curvature that central differences at h = 1e-6 resolve to 1e-6 only)
  if (d.gain != ParamShape::absent) a.gamma = t[g];
  if (d.bias != ParamShape::absent) a.beta = t[g + 1];
  return {kind, a, composite};
}

struct Case {
  NormType kind;
  bool composite;
};

class CellGradCheck : public ::testing::TestWithParam<Case> {};

// inputs from first_site on: a gain and a bias per site (a kind without a bias leaves it unread)
void expect_all_match(const Builder& f, std::vector<Input> inputs, NormType kind, std::size_t first_site) {
  const NormDesc& d = norm_desc(kind);
  for (const bool through_graph : {false, true}) {
    const GradCheckResult r = gradcheck(f, inputs, true, through_graph);
    for (std::size_t i = 0; i < r.errors.size(); ++i) {
      const bool unused_bias = i >= first_site && (i - first_site) % 2 == 1 && d.bias == ParamShape::absent;
      if (unused_bias) continue;
      EXPECT_LE(r.errors[i], 1e-6) << "input " << i << (through_graph ? ", through the graph" : "");
      EXPECT_GT(r.norms[i], 1e-8) << "input " << i << " has an all-zero gradient";
    }
  }
}

// x (B*T, D), W_g, b_g, W_c, b_c, U_g, U_c, then per site (gx, cx, gh, ch) a gain and a bias.
TEST_P(CellGradCheck, GruThroughTime) {
  const auto [kind, composite] = GetParam();
  std::vector<Input> in = {random_input(B * T, D, 1),
                           random_input(2 * H, D, 2, 0.5),
                           bias(2 * H, 3),
                           random_input(H, D, 4, 0.5),
                           bias(H, 5),
                           random_input(2 * H, H, 6, 0.5),
                           random_input(H, H, 7, 0.5)};
  if (kind != NormType::none)
    for (int k = 0, widths[] = {2 * H, H, 2 * H, H}; k < 4; ++k)
      in.push_back(gain(kind, widths[k], 10 + k)), in.push_back(bias(widths[k], 20 + k));
  expect_all_match(
      [kind, composite](Graph<double>& g, std::vector<Tensor<double>>& t) {
        GruCell<double> cell;  // norms none unless set
        cell.W_g = t[1], cell.b_g = t[2], cell.W_c = t[3], cell.b_c = t[4], cell.U_g = t[5], cell.U_c = t[6];
        if (kind != NormType::none) {
          cell.norm_gx = site(kind, composite, t, 7), cell.norm_cx = site(kind, composite, t, 9);
          cell.norm_gh = site(kind, composite, t, 11), cell.norm_ch = site(kind, composite, t, 13);
        }
        std::vector<GruCell<double>::Step> steps;
        return cell.run(g, t[0], B, T, steps);
      },
      in, kind, 7);
}

// x (B*T, D), W_x, W_h, b, then per site (x, h, c) a gain and a bias.
TEST_P(CellGradCheck, LstmThroughTime) {
  const auto [kind, composite] = GetParam();
  std::vector<Input> in = {random_input(B * T, D, 1), random_input(4 * H, D, 2, 0.5), random_input(4 * H, H, 3, 0.5),
                           bias(4 * H, 4)};
  if (kind != NormType::none)
    for (int k = 0, widths[] = {4 * H, 4 * H, H}; k < 3; ++k)
      in.push_back(gain(kind, widths[k], 10 + k)), in.push_back(bias(widths[k], 20 + k));
  expect_all_match(
      [kind, composite](Graph<double>& g, std::vector<Tensor<double>>& t) {
        LstmCell<double> cell;  // norms none unless set
        cell.W_x = t[1], cell.W_h = t[2], cell.b = t[3];
        if (kind != NormType::none) {
          cell.norm_x = site(kind, composite, t, 4), cell.norm_h = site(kind, composite, t, 6);
          cell.norm_c = site(kind, composite, t, 8);
        }
        std::vector<LstmCell<double>::Step> steps;
        return cell.run(g, t[0], B, T, steps);
      },
      in, kind, 4);
}

INSTANTIATE_TEST_SUITE_P(Norms, CellGradCheck,
                         ::testing::Values(Case{NormType::none, false}, Case{NormType::layernorm, false},
                                           Case{NormType::layernorm, true}, Case{NormType::rmsnorm, false},
                                           Case{NormType::rmsnorm, true}, Case{NormType::prmsnorm, false},
                                           Case{NormType::scalenorm, false}),
                         [](const auto& test) {
                           return std::string(to_string(test.param.kind)) + (test.param.composite ? "_composite" : "");
                         });

// The fused op against the ops it replaces, in float: gru_transition_rows is take_rows then
// gru_transition to the bit, its output and every gradient (the sequences' through two steps: the
// first in backward zeroes them, both add their rows). H = 20 puts rows at several offsets from
// 64 bytes.
TEST(GruTransitionRows, IsTakeRowsThenGruTransitionToTheBit) {
  constexpr int Bs = 3, Ts = 5, Hs = 20;
  auto fill = [](Tensor<float> t, uint32_t seed) {
    for (int64_t k = 0; k < t.size(); ++k) t.data[k] = 2.0f * std::sin(float(seed) + 0.61f * float(k));
  };
  auto run = [&](bool fused) {
    Graph<float> g;
    const Tensor<float> gates = g.tensor(Bs * Ts, 2 * Hs, true), cand = g.tensor(Bs * Ts, Hs, true);
    fill(gates, 1), fill(cand, 2);
    std::vector<Tensor<float>> ys, all = {gates, cand};
    for (int t : {3, 1}) {
      const Tensor<float> gh = g.tensor(Bs, 2 * Hs, true), ch = g.tensor(Bs, Hs, true), h = g.tensor(Bs, Hs, true);
      fill(gh, 10 + t), fill(ch, 20 + t), fill(h, 30 + t);
      ys.push_back(fused ? gru_transition_rows(g, gates, cand, Rows{t, Ts}, gh, ch, h)
                         : gru_transition(g, take_rows(g, gates, Rows{t, Ts}, Bs), gh,
                                          take_rows(g, cand, Rows{t, Ts}, Bs), ch, h));
      all.insert(all.end(), {gh, ch, h});
    }
    std::vector<float> bits;
    for (std::size_t i = 0; i < ys.size(); ++i) {
      float* dy = g.seed(ys[i]);
      for (int64_t k = 0; k < ys[i].size(); ++k) dy[k] = std::cos(float(i) + 0.37f * float(k));
      bits.insert(bits.end(), ys[i].data, ys[i].data + ys[i].size());
    }
    g.backward(Tensor<float>{});
    for (const Tensor<float>& t : all) bits.insert(bits.end(), t.grad, t.grad + t.size());
    return bits;
  };
  const std::vector<float> fused = run(true), unfused = run(false);
  ASSERT_EQ(fused.size(), unfused.size());
  for (std::size_t k = 0; k < fused.size(); ++k)
    EXPECT_EQ(std::bit_cast<uint32_t>(fused[k]), std::bit_cast<uint32_t>(unfused[k])) << "value " << k;
}

// normtool's model with PyTorch's weights: the logits, the loss and every gradient.
void expect_golden(const std::string& name) {
  Golden ref(name);
  const auto& c = ref.config();
  const int V = c["V"], Bg = c["B"], Tg = c["T"];
  const RunConfig config =
      load_config("{}", "golden",
                  {"model.arch=rnn", "model.cell=" + c["cell"].get<std::string>(),
                   "model.norm.type=" + c["norm"].get<std::string>(), "data.seq_len=" + std::to_string(Tg),
                   "model.d_model=" + c["d_model"].dump(), "model.d_emb=" + c["d_emb"].dump(),
                   "model.n_layers=" + c["n_layers"].dump(), "model.norm.eps=" + c["eps"].dump()});
  auto model = make_model(config, V, V);
  load_parameters(ref, *model);
  ParamStore<float>& ps = model->params();
  Batch batch;
  batch.B = Bg, batch.T = Tg;
  batch.tokens = ref.ids("tokens");
  batch.targets = ref.ids("targets");
  Graph<float> g;
  const Tensor<float> logits = model->logits(g, batch);
  const Tensor<float> loss = cross_entropy(g, logits, batch.targets.data(), Tensor<float>{});
  ps.zero_grad();
  g.backward(loss);
  ref.expect_close("logits", logits.data, 1e-5, 1e-4);
  ref.expect_close("loss", loss.data, 1e-6, 1e-5);
  expect_gradients(ref, *model);
  // the recurrent sites, each over the batch's T positions
  const bool lstm = c["cell"] == "lstm";
  ASSERT_EQ(model->sites().size(), 2u * c["n_layers"].get<std::size_t>());
  EXPECT_STREQ(model->sites()[0].place, lstm ? "rnn.state" : "rnn.state_gates");
  EXPECT_STREQ(model->sites()[1].place, lstm ? "rnn.cell" : "rnn.state_cand");
  EXPECT_EQ(model->sites()[0].in.rows, Bg * Tg);
}

TEST(Golden, RnnGruLayerNorm) { expect_golden("rnn_gru_layernorm"); }
TEST(Golden, RnnGruRmsNorm) { expect_golden("rnn_gru_rmsnorm"); }
TEST(Golden, RnnLstmLayerNorm) { expect_golden("rnn_lstm_layernorm"); }
TEST(Golden, RnnLstmNone) { expect_golden("rnn_lstm_none"); }

std::string problem(std::vector<std::string> overrides) {
  try {
    load_config("{}", "bad", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RnnConfig, SenselessCombinationsNameTheKey) {
  auto names = [](std::vector<std::string> o, const char* key) {
    o.insert(o.begin(), "model.arch=rnn");
    return problem(o).find(key) != std::string::npos;
  };
  EXPECT_TRUE(names({"model.norm.type=batchnorm"}, "model.norm.type"));
  EXPECT_TRUE(names({"model.norm.type=deepnorm"}, "model.norm.type"));
  EXPECT_TRUE(names({"model.norm.placement=post"}, "model.norm.placement"));
  EXPECT_TRUE(names({"model.embed_norm=true"}, "model.embed_norm"));
  EXPECT_TRUE(names({"data.dataset=synthetic-classify"}, "model.arch"));
  EXPECT_TRUE(names({"model.cell=gruu"}, "model.cell"));
  EXPECT_NE(problem({"model.d_emb=32"}).find("model.d_emb"), std::string::npos);  // a transformer has no d_emb
  EXPECT_NE(problem({"model.init=nematus"}).find("model.init"), std::string::npos);
  EXPECT_EQ(
      problem({"model.arch=rnn", "model.cell=lstm", "model.d_emb=32", "model.init=nematus", "model.norm.type=rmsnorm"}),
      "");
  EXPECT_NE(problem({"model.arch=rnn", "model.n_heads=3"}).find("model.n_heads: model.arch rnn does not read it"),
            std::string::npos);  // refused, not ignored
}

// nematus: each H x H block of a recurrent matrix orthogonal, the non-square weights N(0, 0.01^2).
TEST(RnnInit, NematusBlocksAreOrthogonal) {
  const RunConfig config = load_config(
      "{}", "n", {"model.arch=rnn", "model.init=nematus", "model.d_model=16", "model.d_emb=8", "model.n_layers=1"});
  auto model = make_model(config, 256, 256);
  ParamStore<float>& ps = model->params();
  int checked = 0;
  for (int i = 0; i < ps.count(); ++i) {
    const auto& info = ps.info(i);
    const float* w = ps.data() + info.offset;
    if (info.name == "gru.U_g.weight" || info.name == "gru.U_c.weight") {
      for (int blk = 0; blk < info.rows / 16; ++blk)
        for (int a = 0; a < 16; ++a)
          for (int b = 0; b < 16; ++b) {
            double dot = 0;
            for (int k = 0; k < 16; ++k) dot += double(w[(blk * 16 + a) * 16 + k]) * w[(blk * 16 + b) * 16 + k];
            EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << info.name;
          }
      ++checked;
    }
    if (info.name == "gru.W_g.weight") {
      double sq = 0;
      for (std::size_t k = 0; k < info.size(); ++k) sq += double(w[k]) * w[k];
      EXPECT_NEAR(std::sqrt(sq / double(info.size())), 0.01, 0.001);  // 256 draws: se of the std ~4%
    }
  }
  EXPECT_EQ(checked, 2);
}

}  // namespace
}  // namespace nt::test
