// RNNSearch (model.arch rnnsearch, model/rnnsearch.h) and the ops it adds:
// - the whole network in double against central differences on a padded batch (padding in the
//   source and in the target), every norm site, fused and composite norms, the padding computed and
//   skipped; each new op alone; and the rows each recurrence runs at each step;
// - in float, skipping the padding in the whole-sequence products against computing it, to the bit;
// - the model normtool builds against PyTorch (tests/golden/rnnsearch_*.json from
//   scripts/dump_rnnsearch_golden.py): logits, loss and every parameter's gradient;
// - its statistics sites and its configs (the combinations the contract refuses name their key).
// (Learning on gettext-de: tests/test_learning.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/gemm.h"
#include "golden_model.h"
#include "gradcheck.h"
#include "model/live_rows.h"
#include "model/model.h"
#include "model/rnnsearch.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

// ---- the new ops alone ---------------------------------------------------------------------

constexpr int kB = 2, kS = 4;
const float kSrcMask[kB * kS] = {1, 1, 1, 0, 1, 0, 0, 0};  // lengths 3 and 1

void expect_gradients_match(const Builder& f, std::vector<Input> in) {
  for (const bool through_graph : {false, true}) {
    const GradCheckResult r = gradcheck(f, in, true, through_graph);
    for (std::size_t i = 0; i < r.errors.size(); ++i) {
      EXPECT_LE(r.errors[i], 1e-7) << "input " << i << (through_graph ? ", through the graph" : "");
      EXPECT_GT(r.norms[i], 1e-8) << "input " << i << " has an all-zero gradient";
    }
  }
}

TEST(RnnSearchOps, AdditiveAttentionGradients) {
  expect_gradients_match(
      [](Graph<double>& g, std::vector<Tensor<double>>& t) {
        return additive_attention(g, t[0], t[1], t[2], t[3], kSrcMask, kS);
      },
      {random_input(kB * kS, 3, 1), random_input(kB, 3, 2), random_input(1, 3, 3), random_input(kB * kS, 5, 4)});
}

// Queries of some batch rows only (a decoder step over the sequences still running): batch row 0's
// keys and none of row 1's, whose keys and values get no gradient.
const int kQueryRows[] = {0};
TEST(RnnSearchOps, AdditiveAttentionOverSomeBatchRowsGradients) {
  expect_gradients_match(
      [](Graph<double>& g, std::vector<Tensor<double>>& t) {
        return additive_attention(g, t[0], t[1], t[2], t[3], kSrcMask, kS, kQueryRows);
      },
      {random_input(kB * kS, 3, 1), random_input(1, 3, 2), random_input(1, 3, 3), random_input(kB * kS, 5, 4)});
}

// Backward computes tanh(keys_j + query_b) again into a scratch row aligned as row r of a (B*S, D)
// buffer: D = 20 puts the rows at every offset from a 64-byte boundary (Eigen's scalar head and
// packets), and the gradient is still the forward's.
TEST(RnnSearchOps, AdditiveAttentionGradientsAtUnalignedRows) {
  expect_gradients_match(
      [](Graph<double>& g, std::vector<Tensor<double>>& t) {
        return additive_attention(g, t[0], t[1], t[2], t[3], kSrcMask, kS);
      },
      {random_input(kB * kS, 20, 5), random_input(kB, 20, 6), random_input(1, 20, 7), random_input(kB * kS, 5, 8)});
}

// The forward against the formula, summed in double: masked keys get no weight.
TEST(RnnSearchOps, AdditiveAttentionIsTheFormula) {
  std::vector<Input> in = {random_input(kB * kS, 3, 1), random_input(kB, 3, 2), random_input(1, 3, 3),
                           random_input(kB * kS, 5, 4)};
  Graph<double> g(true, false);
  const Tensor<double> y =
      additive_attention(g, in[0].tensor(), in[1].tensor(), in[2].tensor(), in[3].tensor(), kSrcMask, kS);
  for (int b = 0; b < kB; ++b) {
    std::vector<double> e(kS, 0.0);
    double total = 0;
    for (int j = 0; j < kS; ++j) {
      if (!kSrcMask[b * kS + j]) continue;
      for (int d = 0; d < 3; ++d)
        e[j] += in[2].data[d] * std::tanh(in[0].data[(b * kS + j) * 3 + d] + in[1].data[b * 3 + d]);
      total += std::exp(e[j]);
    }
    for (int c = 0; c < 5; ++c) {
      double want = 0;
      for (int j = 0; j < kS; ++j)
        if (kSrcMask[b * kS + j]) want += std::exp(e[j]) / total * in[3].data[(b * kS + j) * 5 + c];
      EXPECT_NEAR(y.data[b * 5 + c], want, 1e-12);
    }
  }
}

TEST(RnnSearchOps, MaskedMeanAndConcatGradients) {
  expect_gradients_match(
      [](Graph<double>& g, std::vector<Tensor<double>>& t) { return masked_mean_rows(g, t[0], kSrcMask, kB, kS); },
      {random_input(kB * kS, 3, 1)});
  expect_gradients_match(
      [](Graph<double>& g, std::vector<Tensor<double>>& t) {
        return concat_cols(g, t[0], concat_cols(g, t[1], t[0]));  // one input twice
      },
      {random_input(3, 2, 1), random_input(3, 4, 2)});
}

// ---- the rows each step runs ---------------------------------------------------------------

// Three rows of lengths 4, 1 and 2: forward, the state's rows shrink as sequences end; backward,
// they grow as sequences start (from 0: -1).
TEST(LiveRows, EachStepRunsTheRowsRealThere) {
  const float mask[3 * 4] = {1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0};
  struct Want {
    std::vector<int> batch, prev;
    bool same;
  };
  for (const bool backward : {false, true}) {
    LiveRows live;
    live.build(mask, 3, 4, backward);
    const std::vector<Want> want =
        backward ? std::vector<Want>{{{0}, {0}, false},
                                     {{0}, {0}, true},
                                     {{0, 2}, {0, -1}, false},
                                     {{0, 1, 2}, {0, -1, 1}, false}}
                 : std::vector<Want>{
                       {{0, 1, 2}, {0, 1, 2}, true}, {{0, 2}, {0, 2}, false}, {{0}, {0}, false}, {{0}, {0}, true}};
    for (int k = 0; k < 4; ++k) {
      const LiveRows::Step r = live.at(k);
      const int j = backward ? 3 - k : k;
      ASSERT_EQ(r.count, int(want[k].batch.size())) << "step " << k << (backward ? " backward" : "");
      EXPECT_EQ(r.same, want[k].same) << "step " << k << (backward ? " backward" : "");
      EXPECT_EQ(r.all, r.count == 3);
      for (int i = 0; i < r.count; ++i) {
        EXPECT_EQ(r.batch[i], want[k].batch[i]);
        EXPECT_EQ(r.seq[i], want[k].batch[i] * 4 + j);
        EXPECT_EQ(r.prev[i], want[k].prev[i]) << "step " << k << " row " << i << (backward ? " backward" : "");
      }
    }
  }
  const float holed[4] = {1, 0, 1, 0};  // a real position after a padded one
  EXPECT_THROW(LiveRows().build(holed, 1, 4, false), std::logic_error);
}

// ---- the whole network in double -----------------------------------------------------------

constexpr int V = 6, E = 3, H = 3, S = 3, T = 3,
              B = 2;  // H > 2: a LayerNorm over 2 values is \pm 1 (its gradient only through eps)
const int32_t kSrc[B * S] = {4, 5, 1, 3, 0, 0};
const float kMask[B * S] = {1, 1, 1, 1, 0, 0};
const int32_t kTgt[B * T] = {2, 4, 5, 2, 3, 0};
const float kTgtMask[B * T] = {1, 1, 1, 1, 1, 0};
// The live rows' edges: three rows, sources of lengths 4, 0 and 1 (longer than their targets),
// targets of 2, 1 and 0, padded to 3: the decoder's last step has no live row and stops.
constexpr int kEdgeB = 3, kEdgeS = 4, kEdgeT = 3;
const int32_t kEdgeSrc[kEdgeB * kEdgeS] = {1, 2, 3, 4, 0, 0, 0, 0, 5, 0, 0, 0};
const float kEdgeMask[kEdgeB * kEdgeS] = {1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0};
const int32_t kEdgeTgt[kEdgeB * kEdgeT] = {3, 1, 0, 4, 0, 0, 0, 0, 0};
const float kEdgeTgtMask[kEdgeB * kEdgeT] = {1, 1, 0, 1, 0, 0, 0, 0, 0};
const RnnSearchNet<double>::Input kBatches[] = {{B, kSrc, kMask, S, kTgt, T, kTgtMask},
                                                {kEdgeB, kEdgeSrc, kEdgeMask, kEdgeS, kEdgeTgt, kEdgeT, kEdgeTgtMask}};

struct Case {
  NormType kind;
  bool composite;
};

class NetGradCheck : public ::testing::TestWithParam<Case> {};

// The differences' step: smaller than the checks' default 1e-6, since pRMSNorm over 2 of 3 values
// curves the net enough that the truncation error (which grows as the step squared: 4e-5 relative
// at 1e-5) passes 1e-6 there.
constexpr double kStep = 3e-7;

// The parameters of a GRU, then its four sites' gain and bias.
void add_gru(std::vector<Input>& in, int d_in, uint64_t seed, NormType kind) {
  for (auto [rows, cols, scale] :
       {std::tuple{2 * H, d_in, 0.5}, {1, 2 * H, 0.1}, {H, d_in, 0.5}, {1, H, 0.1}, {2 * H, H, 0.5}, {H, H, 0.5}})
    in.push_back(random_input(rows, cols, seed++, scale));
  if (kind != NormType::none)
    for (int w : {2 * H, H, 2 * H, H})
      in.push_back(random_input(1, param_count(norm_desc(kind).gain, w), seed++, 0.2, 1.0)),
          in.push_back(random_input(1, w, seed++, 0.1));
}

void add_norm(std::vector<Input>& in, int width, uint64_t seed, NormType kind) {
  if (kind == NormType::none) return;
  in.push_back(random_input(1, param_count(norm_desc(kind).gain, width), seed, 0.2, 1.0));
  in.push_back(random_input(1, width, seed + 1, 0.1));
}

template <class F>
RowNorm<F> take_norm(NormType kind, bool composite, const std::vector<Tensor<F>>& t, std::size_t& i) {
  if (kind == NormType::none) return {};
  const NormDesc& d = norm_desc(kind);
  NormArgs<F> a;
  a.eps = 1e-5;
  a.p = 0.5;
  if (d.gain != ParamShape::absent) a.gamma = t[i];
  if (d.bias != ParamShape::absent) a.beta = t[i + 1];
  i += 2;
  return {kind, a, composite};
}

template <class F>
GruCell<F> take_gru(NormType kind, bool composite, const std::vector<Tensor<F>>& t, std::size_t& i) {
  GruCell<F> c;
  c.W_g = t[i], c.b_g = t[i + 1], c.W_c = t[i + 2], c.b_c = t[i + 3], c.U_g = t[i + 4], c.U_c = t[i + 5];
  i += 6;
  c.norm_gx = take_norm(kind, composite, t, i), c.norm_cx = take_norm(kind, composite, t, i);
  c.norm_gh = take_norm(kind, composite, t, i), c.norm_ch = take_norm(kind, composite, t, i);
  return c;
}

// The network's parameters, in the order take_net reads them
std::vector<Input> net_inputs(NormType kind) {
  std::vector<Input> in = {random_input(V, E, 1)};  // src_emb
  add_gru(in, E, 10, kind), add_gru(in, E, 30, kind);
  in.push_back(random_input(H, 2 * H, 50, 0.5)), in.push_back(random_input(1, H, 51, 0.1)), add_norm(in, H, 52, kind);
  in.push_back(random_input(V, E, 60));  // tgt_emb
  add_gru(in, E, 70, kind);
  in.push_back(random_input(2 * H, 2 * H, 90, 0.5)), in.push_back(random_input(1, 2 * H, 91, 0.1));
  in.push_back(random_input(2 * H, H, 92, 0.5)), in.push_back(random_input(1, 2 * H, 93, 0.5));
  add_norm(in, 2 * H, 94, kind), add_norm(in, 2 * H, 96, kind);
  add_gru(in, 2 * H, 100, kind);
  for (auto [rows, cols, seed] : {std::tuple{E, H, 120}, {1, E, 121}, {E, E, 122}, {E, 2 * H, 123}})
    in.push_back(random_input(rows, cols, seed, 0.5));
  add_norm(in, E, 124, kind);
  in.push_back(random_input(V, E, 130, 0.5)), in.push_back(random_input(1, V, 131, 0.1));
  return in;
}

template <class F>
RnnSearchNet<F> take_net(NormType kind, bool composite, const std::vector<Tensor<F>>& t) {
  RnnSearchNet<F> net;
  std::size_t i = 0;
  net.src_emb = t[i++];
  net.enc_fwd = take_gru(kind, composite, t, i), net.enc_bwd = take_gru(kind, composite, t, i);
  net.W_i = t[i], net.b_i = t[i + 1], i += 2, net.norm_init = take_norm(kind, composite, t, i);
  net.tgt_emb = t[i++];
  net.dec1 = take_gru(kind, composite, t, i);
  net.attention.W_a = t[i], net.attention.b_a = t[i + 1], net.attention.U_a = t[i + 2], net.attention.v = t[i + 3];
  i += 4;
  net.attention.norm_keys = take_norm(kind, composite, t, i);
  net.attention.norm_query = take_norm(kind, composite, t, i);
  net.dec2 = take_gru(kind, composite, t, i);
  net.W_s = t[i], net.b_s = t[i + 1], net.W_y = t[i + 2], net.W_c = t[i + 3], i += 4;
  net.norm_out = take_norm(kind, composite, t, i);
  net.W_o = t[i], net.b_o = t[i + 1], i += 2;
  EXPECT_EQ(i, t.size());
  return net;
}

// Over both batches, with the padding computed and with it skipped (a padding row of the
// whole-sequence products is then its bias: another function, with its own gradient)
TEST_P(NetGradCheck, ThroughEncoderAttentionAndDecoder) {
  const auto [kind, composite] = GetParam();
  std::vector<Input> in = net_inputs(kind);
  const NormDesc& d = norm_desc(kind);
  for (int run = 0; run < 8; ++run) {  // each batch and path, adding to the caller's buffers and through the graph
    const RnnSearchNet<double>::Input& batch = kBatches[run / 2 % 2];
    const bool through_graph = run % 2 == 1, skip_padding = run >= 4;
    SCOPED_TRACE(std::string(batch.B == B ? "the batch" : "the edge batch") +
                 (skip_padding ? ", padding skipped" : ", padding computed"));
    const GradCheckResult r = gradcheck(
        [&](Graph<double>& g, std::vector<Tensor<double>>& t) {
          RnnSearchNet<double> net = take_net(kind, composite, t);
          net.skip_padding = skip_padding;
          RnnSearchNet<double>::Steps steps;
          return net.logits(g, batch, steps);
        },
        in, true, through_graph, kStep);
    for (std::size_t k = 0; k < r.errors.size(); ++k) {
      // a norm's bias input where the kind has none is unread: every other input must match
      const bool unread = r.norms[k] == 0.0 && d.bias == ParamShape::absent && in[k].rows == 1;
      if (unread) continue;
      // relative error 1e-6, or an absolute one under the differences' rounding floor
      // (~1e-16 |L| / kStep) where an input's whole gradient is small
      const double absolute = r.errors[k] * r.norms[k];
      EXPECT_TRUE(r.errors[k] <= 1e-6 || absolute <= 1e-8)
          << "input " << k << (through_graph ? ", through the graph" : "") << ": relative error " << r.errors[k]
          << ", gradient norm " << r.norms[k];
      EXPECT_GT(r.norms[k], 1e-8) << "input " << k << " has an all-zero gradient";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Norms, NetGradCheck,
                         ::testing::Values(Case{NormType::none, false}, Case{NormType::layernorm, false},
                                           Case{NormType::layernorm, true}, Case{NormType::rmsnorm, false},
                                           Case{NormType::rmsnorm, true}, Case{NormType::prmsnorm, false}),
                         [](const auto& test) {
                           return std::string(to_string(test.param.kind)) + (test.param.composite ? "_composite" : "");
                         });

// One path of the float network on batch b: the loss, the real targets' logits and each gradient
// (values), and the padding targets' logits rows, one after another
struct PathRun {
  std::vector<std::vector<float>> values;
  std::vector<float> padding_logits;
};

PathRun run_path(NormType kind, bool composite, const std::vector<Input>& in, const RnnSearchNet<double>::Input& b,
                 bool skip) {
  std::vector<std::vector<float>> data, grad;
  std::vector<Tensor<float>> t;
  for (const Input& x : in) {
    data.emplace_back(x.data.begin(), x.data.end()), grad.emplace_back(x.data.size(), 0.0f);
    t.push_back({data.back().data(), grad.back().data(), x.rows, x.cols});
  }
  RnnSearchNet<float> net = take_net(kind, composite, t);
  net.skip_padding = skip;
  Graph<float> g;
  RnnSearchNet<float>::Steps steps;
  const Tensor<float> logits = net.logits(g, {b.B, b.src, b.src_mask, b.S, b.tgt, b.Tt, b.tgt_mask}, steps);
  const Tensor<float> weights{const_cast<float*>(b.tgt_mask), nullptr, b.B * b.Tt, 1};
  const Tensor<float> loss = cross_entropy(g, logits, b.tgt, weights);
  g.backward(loss);
  PathRun run{{{loss.data[0]}, {}}, {}};
  for (int r = 0; r < logits.rows; ++r) {
    std::vector<float>& to = b.tgt_mask[r] != 0.0f ? run.values[1] : run.padding_logits;
    to.insert(to.end(), logits.data + r * V, logits.data + (r + 1) * V);
  }
  run.values.insert(run.values.end(), grad.begin(), grad.end());
  return run;
}

// In float, in normtool's kernel: skipping the padding's rows in the whole-sequence products gives
// the loss, every gradient and the real targets' logits of the run that computes them, to the bit,
// for every norm RNNSearch allows, fused and composite, with random biases and with every bias 0
// (as at init: a padding row is then a zero row). A padding target's logits are b_o where the
// padding is skipped (so the path ran), the head's product of a padding row where it is not.
TEST(RnnSearchPadding, SkippingItKeepsTheBits) {
  if (std::string_view(gemm_backend()).rfind("normtool", 0) != 0)
    GTEST_SKIP() << "the bits are the normtool kernel's (gemm_backend: " << gemm_backend() << ")";
  for (const NormType kind :
       {NormType::none, NormType::layernorm, NormType::rmsnorm, NormType::prmsnorm, NormType::scalenorm})
    for (const bool composite : {false, true})
      for (const bool zero_biases : {false, true}) {
        if (composite && kind == NormType::none) continue;
        std::vector<Input> in = net_inputs(kind);
        for (Input& x : in)  // the 1-row inputs but the gains (centred on 1): the biases and v
          if (zero_biases && x.rows == 1 && std::accumulate(x.data.begin(), x.data.end(), 0.0) < 0.5 * x.cols)
            std::fill(x.data.begin(), x.data.end(), 0.0);
        const std::vector<float> b_o(in.back().data.begin(), in.back().data.end());
        for (const RnnSearchNet<double>::Input& b : kBatches) {
          SCOPED_TRACE(std::string(to_string(kind)) + (composite ? " composite" : "") +
                       (zero_biases ? ", biases 0" : "") + (b.B == B ? ", the batch" : ", the edge batch"));
          const PathRun computed = run_path(kind, composite, in, b, false),
                        skipped = run_path(kind, composite, in, b, true);
          ASSERT_EQ(computed.values.size(), skipped.values.size());
          for (std::size_t k = 0; k < computed.values.size(); ++k) {
            const std::vector<float>&x = computed.values[k], &y = skipped.values[k];
            ASSERT_EQ(x.size(), y.size());
            EXPECT_EQ(0, std::memcmp(x.data(), y.data(), x.size() * sizeof(float)))
                << (k == 0   ? "the loss"
                    : k == 1 ? "the real logits"
                             : "gradient of input " + std::to_string(k - 2));
          }
          ASSERT_FALSE(skipped.padding_logits.empty());
          for (std::size_t r = 0; r < skipped.padding_logits.size(); r += V)
            EXPECT_EQ(0, std::memcmp(skipped.padding_logits.data() + r, b_o.data(), V * sizeof(float)))
                << "row " << r / V;
          if (!zero_biases) {
            EXPECT_NE(computed.padding_logits, skipped.padding_logits);
          }
        }
      }
}

// ---- against PyTorch -----------------------------------------------------------------------

RunConfig rnnsearch_config(std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), {"model.arch=rnnsearch", "data.dataset=synthetic-seq2seq"});
  return load_config("{}", "rnnsearch", overrides);
}

void expect_golden(const std::string& name) {
  Golden ref(name);
  const auto& c = ref.config();
  const int Vg = c["V"], Bg = c["B"], Sg = c["S"], Tg = c["T"];
  const RunConfig config = rnnsearch_config(
      {"model.norm.type=" + c["norm"].get<std::string>(), "model.d_model=" + c["d_model"].dump(),
       "model.d_emb=" + c["d_emb"].dump(), "model.norm.eps=" + c["eps"].dump(), "data.max_len=" + std::to_string(Sg)});
  auto model = make_model(config, Vg, Vg);
  load_parameters(ref, *model);
  Batch batch;
  batch.B = Bg, batch.T = Tg, batch.S = Sg, batch.padded = true;
  batch.src = ref.ids("src");
  batch.src_mask = ref.values("src_mask");
  batch.tokens = ref.ids("tokens");
  batch.targets = ref.ids("targets");
  batch.mask = ref.values("mask");
  Graph<float> g;
  const Tensor<float> logits = model->logits(g, batch);
  const Tensor<float> loss =
      cross_entropy(g, logits, batch.targets.data(), Tensor<float>{batch.mask.data(), nullptr, Bg * Tg, 1});
  model->params().zero_grad();
  g.backward(loss);
  // at the real targets: normtool's decoder does not run where a target has ended, PyTorch's does
  ref.expect_close("logits", logits.data, 1e-5, 1e-4, &batch.mask);
  ref.expect_close("loss", loss.data, 1e-6, 1e-5);
  expect_gradients(ref, *model);
  // the decoder's recurrent sites, over the target positions, masked as the targets are
  const auto& sites = model->sites();
  ASSERT_EQ(sites.size(), 4u);
  const char* places[] = {"dec1.state_gates", "dec1.state_cand", "dec2.state_gates", "dec2.state_cand"};
  for (int k = 0; k < 4; ++k) {
    EXPECT_STREQ(sites[k].place, places[k]);
    EXPECT_EQ(sites[k].in.rows, Bg * Tg);
    EXPECT_EQ(sites[k].T, Tg);
    EXPECT_EQ(sites[k].mask, batch.mask.data());
  }
}

TEST(Golden, RnnSearchLayerNorm) { expect_golden("rnnsearch_layernorm"); }
TEST(Golden, RnnSearchRmsNorm) { expect_golden("rnnsearch_rmsnorm"); }
TEST(Golden, RnnSearchNone) { expect_golden("rnnsearch_none"); }

// ---- configs -------------------------------------------------------------------------------

std::string problem(std::vector<std::string> overrides) {
  try {
    rnnsearch_config(std::move(overrides));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RnnSearchConfig, SenselessCombinationsNameTheKey) {
  EXPECT_NE(problem({"model.norm.type=batchnorm"}).find("model.norm.type"), std::string::npos);
  EXPECT_NE(problem({"model.norm.type=deepnorm"}).find("model.norm.type"), std::string::npos);
  EXPECT_NE(problem({"model.norm.placement=post"}).find("model.norm.placement"), std::string::npos);
  EXPECT_NE(problem({"model.bias=false"}).find("model.bias"), std::string::npos);
  EXPECT_NE(problem({"data.dataset=fortunes"}).find("model.arch"), std::string::npos);
  EXPECT_NE(problem({"train.precision=bf16"}).find("train.precision"), std::string::npos);
  EXPECT_EQ(problem({"model.d_emb=16", "model.init=nematus", "model.norm.type=rmsnorm"}), "");
  EXPECT_NE(problem({"model.n_heads=3"}).find("model.n_heads: model.arch rnnsearch does not read it"),
            std::string::npos);  // refused, not ignored
}

}  // namespace
}  // namespace nt::test
