// The shared model blocks (src/model/blocks/): each placement computes its formula, the embedding
// norm normalizes, and attention reads the positions its kind says.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/blocks/attention.h"
#include "model/blocks/embedding.h"
#include "model/blocks/residual.h"
#include "norms/norms.h"

namespace nt {
namespace {

constexpr int N = 3, C = 4;

Tensor<float> filled(Graph<float>& g, float start, float step) {
  Tensor<float> t = g.tensor(N, C, false);
  for (int i = 0; i < t.size(); ++i) t.data[i] = start + step * float(i * i % 7);
  return t;
}

// y = placement(x, f) with f(h) = 2 h + 0.5 (as a product 2 h and a bias 0.5), LayerNorm with gain 1.
std::vector<float> placed(NormType type, Placement placement, float alpha) {
  static Graph<float> g(false, false);
  g.reset();
  ParamStore<float> params;
  NormConfig norm;
  norm.type = type;
  norm.placement = placement;
  Residual res(params, norm, alpha, Precision::fp32, 0, "norm", "attn", C, 1);
  const int f_bias = params.add("f.bias", 0, 1, C);
  params.finalize();
  res.norm().init(params);
  Tensor<float> bias = params.tensor(f_bias);
  std::fill_n(bias.data, C, 0.5f);
  const Tensor<float> x = filled(g, -1.0f, 0.3f);
  std::vector<SiteCapture> sites;
  const Tensor<float> y = res(g, x, nullptr, sites, [&](Tensor<float> h) { return Branch{scale(g, h, 2.0f), bias}; });
  EXPECT_EQ(sites.size(), 1u);
  return std::vector<float>(y.data, y.data + y.size());
}

// LayerNorm of each row of v, gain 1, bias 0, eps 1e-5 (two-pass, biased variance)
std::vector<float> layernorm_rows(std::vector<double> v) {
  std::vector<float> out(v.size());
  for (int r = 0; r < N; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < C; ++c) mean += v[r * C + c] / C;
    for (int c = 0; c < C; ++c) var += (v[r * C + c] - mean) * (v[r * C + c] - mean) / C;
    for (int c = 0; c < C; ++c) out[r * C + c] = float((v[r * C + c] - mean) / std::sqrt(var + 1e-5));
  }
  return out;
}

std::vector<double> input() {
  std::vector<double> x(N * C);
  for (int i = 0; i < N * C; ++i) x[i] = -1.0 + 0.3 * double(i * i % 7);
  return x;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(Blocks, PrePlacementIsXPlusFOfNormX) {
  const std::vector<double> x = input();
  const std::vector<float> n = layernorm_rows(x);
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = float(x[i] + 2.0 * n[i] + 0.5);
  expect_near(placed(NormType::layernorm, Placement::pre, 1.0f), want);
}

TEST(Blocks, PostPlacementIsNormOfXPlusFOfX) {
  std::vector<double> s = input();
  for (double& v : s) v = v + 2.0 * v + 0.5;
  expect_near(placed(NormType::layernorm, Placement::post, 1.0f), layernorm_rows(s));
}

TEST(Blocks, DeepNormIsNormOfAlphaXPlusFOfX) {
  std::vector<double> s = input();
  for (double& v : s) v = 1.7 * v + 2.0 * v + 0.5;
  // DeepNorm ignores model.norm.placement: its formula is its own
  expect_near(placed(NormType::deepnorm, Placement::pre, 1.7f), layernorm_rows(s));
}

TEST(Blocks, EmbeddingNormNormalizesEachRow) {
  Graph<float> g(false, false);
  ParamStore<float> params;
  NormConfig norm;
  norm.type = NormType::layernorm;
  Embedding embed(params, 0, 8, 4, C, /*learned=*/true, Precision::fp32, &norm);
  params.finalize();
  ModelConfig m;
  m.init = Init::xavier;  // embeddings N(0, 1): a variance far above eps
  Rng rng(1, 1);
  embed.init(params, m, rng);
  const std::vector<int32_t> tokens = {1, 5, 7, 2, 0, 3};
  std::vector<SiteCapture> sites;
  const Tensor<float> x = embed(g, tokens.data(), 2, 3, nullptr, sites);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_STREQ(sites[0].place, "embed");
  for (int r = 0; r < x.rows; ++r) {
    double mean = 0, sq = 0;
    for (int c = 0; c < C; ++c) mean += x.data[r * C + c] / C;
    for (int c = 0; c < C; ++c) sq += (x.data[r * C + c] - mean) * (x.data[r * C + c] - mean) / C;
    EXPECT_NEAR(mean, 0.0, 1e-5);
    EXPECT_NEAR(sq, 1.0, 1e-3);  // 1 - eps / var, var ~ 1
  }
}

// Which positions an attention block reads: bidirectional self-attention sees the positions after
// a query, causal does not; cross-attention reads the keys' sequence and never its padding.
TEST(Blocks, AttentionKindsReadWhatTheirKindSays) {
  const int B = 1, T = 3;
  auto run = [&](AttentionKind kind, float last_query, float last_key, const float* key_mask) {
    Graph<float> g(false, false);
    ParamStore<float> params;
    Attention attn(params, kind, "attn", 0, C, 2, Precision::fp32);
    params.finalize();
    ModelConfig m;
    Rng rng(1, 1);
    attn.init(params, SublayerInit{m, false, 1.0}, rng);
    Tensor<float> x = filled(g, -1.0f, 0.3f), keys = filled(g, 0.5f, -0.2f);
    for (int c = 0; c < C; ++c) x.data[(T - 1) * C + c] = last_query, keys.data[(T - 1) * C + c] = last_key;
    const Sequence q{x, T}, k = kind == AttentionKind::cross ? Sequence{keys, T, key_mask} : Sequence{x, T, key_mask};
    const Branch y = attn(g, B, q, k);
    return std::vector<float>(y.product.data, y.product.data + C);  // position 0
  };
  EXPECT_NE(run(AttentionKind::self, 1.0f, 0.0f, nullptr), run(AttentionKind::self, 5.0f, 0.0f, nullptr));
  EXPECT_EQ(run(AttentionKind::causal_self, 1.0f, 0.0f, nullptr), run(AttentionKind::causal_self, 5.0f, 0.0f, nullptr));
  const float mask[T] = {1, 1, 0};
  EXPECT_EQ(run(AttentionKind::self, 1.0f, 0.0f, mask), run(AttentionKind::self, 5.0f, 0.0f, mask));
  EXPECT_NE(run(AttentionKind::cross, 0.0f, 1.0f, nullptr), run(AttentionKind::cross, 0.0f, 5.0f, nullptr));
  EXPECT_EQ(run(AttentionKind::cross, 0.0f, 1.0f, mask), run(AttentionKind::cross, 0.0f, 5.0f, mask));
}

}  // namespace
}  // namespace nt
