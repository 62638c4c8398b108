// Each fused norm against the same norm composed from primitive ops (norms/composite.cpp):
// outputs and every gradient agree to 1e-10 in double. Plus the closed forms the norms
// promise: standardized rows, unit-RMS rows, PyTorch's running-statistics rule.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "gradcheck.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

// Runs f and g on copies of the same inputs with the same dout; compares outputs and gradients.
void expect_same_op(const Builder& fused, const Builder& composite, std::vector<Input> inputs, double tol = 1e-10) {
  std::vector<Input> a = inputs, b = inputs;
  auto run = [](const Builder& f, std::vector<Input>& in, std::vector<double>& out) {
    std::vector<Tensor<double>> ts;
    for (auto& i : in) ts.push_back(i.tensor());
    Graph<double> g;
    Tensor<double> y = f(g, ts);
    out.assign(y.data, y.data + y.size());
    for (int64_t k = 0; k < y.size(); ++k) y.grad[k] = std::sin(1.0 + 0.37 * double(k));  // fixed dout
    g.backward(Tensor<double>{});
  };
  std::vector<double> ya, yb;
  run(fused, a, ya);
  run(composite, b, yb);
  ASSERT_EQ(ya.size(), yb.size());
  for (std::size_t k = 0; k < ya.size(); ++k) EXPECT_NEAR(ya[k], yb[k], tol) << "output " << k;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].differentiate) continue;
    for (std::size_t k = 0; k < a[i].grad.size(); ++k)
      EXPECT_NEAR(a[i].grad[k], b[i].grad[k], tol) << "input " << i << " gradient " << k;
  }
}

TEST(FusedVsComposite, LayerNorm) {
  expect_same_op([](auto& g, auto& t) { return layernorm(g, t[0], t[1], t[2], 1e-5); },
                 [](auto& g, auto& t) { return layernorm_composite(g, t[0], t[1], t[2], 1e-5); },
                 {random_input(7, 16, 1, 3.0, 2.0), random_input(1, 16, 2), random_input(1, 16, 3)});
}

TEST(FusedVsComposite, RMSNorm) {
  expect_same_op([](auto& g, auto& t) { return rmsnorm(g, t[0], t[1], 1e-5); },
                 [](auto& g, auto& t) { return rmsnorm_composite(g, t[0], t[1], 1e-5); },
                 {random_input(7, 16, 1, 3.0, 2.0), random_input(1, 16, 2)});
}

TEST(FusedVsComposite, PRMSNorm) {
  for (double p : {1.0 / 16, 0.3, 1.0})
    expect_same_op([p](auto& g, auto& t) { return prmsnorm(g, t[0], t[1], 1e-5, p); },
                   [p](auto& g, auto& t) { return prmsnorm_composite(g, t[0], t[1], 1e-5, p); },
                   {random_input(7, 16, 1, 3.0, 2.0), random_input(1, 16, 2)});
}

TEST(FusedVsComposite, ScaleNorm) {
  expect_same_op([](auto& g, auto& t) { return scalenorm(g, t[0], t[1], 1e-5); },
                 [](auto& g, auto& t) { return scalenorm_composite(g, t[0], t[1], 1e-5); },
                 {random_input(7, 16, 1, 3.0, 2.0), random_input(1, 1, 2, 1.0, 4.0)});
}

TEST(FusedVsComposite, DyT) {
  expect_same_op([](auto& g, auto& t) { return dyt(g, t[0], t[1], t[2], t[3]); },
                 [](auto& g, auto& t) { return dyt_composite(g, t[0], t[1], t[2], t[3]); },
                 {random_input(7, 16, 1, 3.0, 2.0), random_input(1, 1, 4, 0.2, 0.5), random_input(1, 16, 2),
                  random_input(1, 16, 3)});
}

// Every kind as apply_norm dispatches it, with the gain and bias in its description's shapes:
// the description's two functions are the same norm.
TEST(FusedVsComposite, EveryKindThroughItsDescription) {
  constexpr int N = 6, C = 16;
  for (NormType k : all_norm_types()) {
    SCOPED_TRACE(to_string(k));
    const NormDesc& d = norm_desc(k);
    std::vector<Input> in{random_input(N, C, 1, 3.0, 2.0)};
    if (d.gain != ParamShape::absent) in.push_back(random_input(1, param_count(d.gain, C), 2, 0.5, 1.0));
    if (d.bias != ParamShape::absent) in.push_back(random_input(1, param_count(d.bias, C), 3));
    if (d.alpha) in.push_back(random_input(1, 1, 4, 0.2, 0.5));
    auto norm = [&](bool composite) {
      return [&d, composite](auto& g, auto& t) {
        NormArgs<double> a;
        std::size_t i = 1;
        if (d.gain != ParamShape::absent) a.gamma = t[i++];
        if (d.bias != ParamShape::absent) a.beta = t[i++];
        if (d.alpha) a.alpha = t[i++];
        return (composite ? d.f64.composite : d.f64.fused)(g, t[0], a);
      };
    };
    expect_same_op(norm(false), norm(true), in);
  }
}

TEST(FusedVsComposite, BiasActivationIsAddThenActivation) {
  for (const Activation a : {Activation::relu, Activation::gelu, Activation::tanh, Activation::silu})
    expect_same_op([a](auto& g, auto& t) { return bias_activation(g, t[0], t[1], a); },
                   [a](auto& g, auto& t) { return activation(g, add(g, t[0], t[1]), a); },
                   {random_input(9, 16, 1, 2.0), random_input(1, 16, 2)});
}

TEST(FusedVsComposite, ResidualIsAxpbyThenAddBias) {
  expect_same_op([](auto& g, auto& t) { return residual(g, 2.2, t[0], t[1], t[2]); },
                 [](auto& g, auto& t) { return add(g, axpby(g, 2.2, t[0], t[1]), t[2]); },
                 {random_input(9, 16, 1), random_input(9, 16, 2), random_input(1, 16, 3)});
}

TEST(FusedVsComposite, BatchNormBothAxes) {
  for (int S : {1, 4})
    expect_same_op(
        [S](auto& g, auto& t) { return batchnorm(g, t[0], t[1], t[2], S, 1e-5, BatchNormState<double>{}); },
        [S](auto& g, auto& t) { return batchnorm_composite(g, t[0], t[1], t[2], S, 1e-5, Tensor<double>{}); },
        {random_input(6 * 4, 5, 1, 3.0, 2.0), random_input(1, 5, 2), random_input(1, 5, 3)});
}

TEST(FusedVsComposite, BatchNormMasked) {
  static const double mask[] = {1, 0, 1, 1, 0, 1, 1, 1};
  Input m{{1, 0, 1, 1, 0, 1, 1, 1}, std::vector<double>(8), 8, 1, false};
  expect_same_op(
      [](auto& g, auto& t) {
        BatchNormState<double> st;
        st.mask = mask;
        return batchnorm(g, t[0], t[1], t[2], 1, 1e-5, st);
      },
      [](auto& g, auto& t) { return batchnorm_composite(g, t[0], t[1], t[2], 1, 1e-5, t[3]); },
      {random_input(8, 5, 1, 3.0, 2.0), random_input(1, 5, 2), random_input(1, 5, 3), m});
}

TEST(FusedVsComposite, WeightNorm) {
  expect_same_op([](auto& g, auto& t) { return weightnorm(g, t[0], t[1]); },
                 [](auto& g, auto& t) { return weightnorm_composite(g, t[0], t[1]); },
                 {random_input(6, 9, 1), random_input(6, 1, 2)});
}

// The fused layout (q, k, v side by side in one (B*T, 3C) tensor, heads read in place) against
// split_heads, causal_attention, merge_heads on separate q, k, v; T = 70 crosses the causal row blocks.
TEST(FusedVsComposite, SelfAttentionInPlaceEqualsSplitAttendMerge) {
  for (const int T : {5, 70}) {
    const int B = 2, NH = 2, hs = 4, C = NH * hs, N = B * T;
    std::vector<Input> qkv_parts{random_input(N, C, 1), random_input(N, C, 2), random_input(N, C, 3)};
    const Input dout = random_input(N, C, 4);
    std::vector<double> qkv(std::size_t(N) * 3 * C), dqkv(qkv.size(), 0.0);
    for (int n = 0; n < N; ++n)
      for (int part = 0; part < 3; ++part)
        for (int j = 0; j < C; ++j)
          qkv[std::size_t(n) * 3 * C + part * C + j] = qkv_parts[part].data[std::size_t(n) * C + j];
    Graph<double> fused;
    Tensor<double> o = causal_self_attention(fused, Tensor<double>{qkv.data(), dqkv.data(), N, 3 * C}, B, T, NH);
    std::copy(dout.data.begin(), dout.data.end(), fused.seed(o));
    fused.backward(Tensor<double>{});
    std::vector<std::vector<double>> grads(3, std::vector<double>(std::size_t(N) * C, 0.0));
    Graph<double> split;
    auto heads = [&](int part) {
      return split_heads(split, Tensor<double>{qkv_parts[part].data.data(), grads[part].data(), N, C}, B, T, NH);
    };
    Tensor<double> o2 = merge_heads(split, causal_attention(split, heads(0), heads(1), heads(2), B * NH, T), B, T, NH);
    std::copy(dout.data.begin(), dout.data.end(), split.seed(o2));
    split.backward(Tensor<double>{});
    for (int64_t i = 0; i < o.size(); ++i) ASSERT_NEAR(o.data[i], o2.data[i], 1e-12) << "T " << T;
    for (int n = 0; n < N; ++n)
      for (int part = 0; part < 3; ++part)
        for (int j = 0; j < C; ++j)
          ASSERT_NEAR(dqkv[std::size_t(n) * 3 * C + part * C + j], grads[part][std::size_t(n) * C + j], 1e-12)
              << "T " << T << " part " << part;
  }
}

// The fields the engine asks instead of a norm's name, held against what the norm computes: a kind
// that centers gives the same rows for x and x + c (c one constant per row), one that does not
// changes them; a kind that applies another's norm runs that kind's op; names map back to kinds.
TEST(NormDescription, FieldsMatchWhatTheNormComputes) {
  constexpr int N = 4, C = 16;
  const std::vector<double> x = random_input(N, C, 5, 2.0, 1.0).data;
  std::vector<double> shifted = x;
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) shifted[std::size_t(n) * C + c] += 3.0 + n;
  int centering = 0;
  for (NormType k : all_norm_types()) {
    SCOPED_TRACE(to_string(k));
    const NormDesc& d = norm_desc(k);
    EXPECT_EQ(norm_type_named(d.name), k);
    if (d.applies) {
      EXPECT_EQ(d.f64.fused, norm_desc(norm_type_named(d.applies)).f64.fused);
    }
    if (d.reduction != Reduction::row) continue;  // a constant per row: what a per-row mean absorbs
    auto y = [&](std::vector<double> in) {
      Graph<double> g(true, false);
      const Tensor<double> out = d.f64.fused(g, Tensor<double>{in.data(), nullptr, N, C}, NormArgs<double>{});
      return std::vector<double>(out.data, out.data + out.size());
    };
    const std::vector<double> a = y(x), b = y(shifted);
    double change = 0;
    for (std::size_t i = 0; i < a.size(); ++i) change = std::max(change, std::abs(a[i] - b[i]));
    if (d.centers) {
      EXPECT_LT(change, 1e-12);
      ++centering;
    } else {
      EXPECT_GT(change, 1e-2);
    }
  }
  EXPECT_EQ(centering, 2);  // layernorm, deepnorm
  EXPECT_THROW(norm_type_named("layer-norm"), std::invalid_argument);
}

TEST(NormClosedForms, LayerNormStandardizesEachRow) {  // claim E4: [2,3,5,1,4] -> (x - 3) / sqrt(2 + eps)
  std::vector<double> x{2, 3, 5, 1, 4};
  Graph<double> g(true, false);
  Tensor<double> y = layernorm(g, Tensor<double>{x.data(), nullptr, 1, 5}, {}, {}, 1e-5);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(y.data[j], (x[j] - 3) / std::sqrt(2 + 1e-5), 1e-12);
}

// DyT at its init (gamma 1, beta 0) is tanh(alpha0 x) elementwise, and without alpha tanh(x).
TEST(NormClosedForms, DyTIsTanhOfAlphaX) {
  std::vector<double> x{-3.0, -0.5, 0.0, 0.25, 2.0, 7.0}, alpha{0.5}, gamma(6, 1.0), beta(6, 0.0);
  Graph<double> g;
  const Tensor<double> xt{x.data(), nullptr, 2, 3}, at{alpha.data(), nullptr, 1, 1};
  const Tensor<double> y =
      dyt(g, xt, at, Tensor<double>{gamma.data(), nullptr, 1, 3}, Tensor<double>{beta.data(), nullptr, 1, 3});
  const Tensor<double> plain = dyt(g, xt, {}, {}, {});
  for (int k = 0; k < 6; ++k) {
    EXPECT_NEAR(y.data[k], std::tanh(0.5 * x[k]), 1e-15) << k;
    EXPECT_NEAR(plain.data[k], std::tanh(x[k]), 1e-15) << k;
  }
}

// Nguyen & Salazar 2019 start the scalar gain at sqrt(C): ScaleNorm at init is RMSNorm with gain 1.
TEST(NormClosedForms, ScaleNormAtItsInitialGainIsRMSNorm) {
  constexpr int C = 32;
  const double g0 = norm_desc(NormType::scalenorm).gain_init(C);
  EXPECT_DOUBLE_EQ(g0, std::sqrt(32.0));
  Input x = random_input(3, C, 5, 4.0, 1.0);
  std::vector<double> gain{g0};
  Graph<double> g(true, false);
  const Tensor<double> xt{x.data.data(), nullptr, 3, C};
  const Tensor<double> y = scalenorm(g, xt, Tensor<double>{gain.data(), nullptr, 1, 1}, 0.0),
                       rms = rmsnorm(g, xt, {}, 0.0);
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y.data[i], rms.data[i], 1e-12);
  const Tensor<double> unit = scalenorm(g, xt, {}, 0.0);  // no gain: unit rows
  for (int n = 0; n < 3; ++n) {
    double ss = 0;
    for (int j = 0; j < C; ++j) ss += unit.data[n * C + j] * unit.data[n * C + j];
    EXPECT_NEAR(ss, 1.0, 1e-12);
  }
}

TEST(NormClosedForms, RMSNormGivesUnitRootMeanSquare) {
  Input x = random_input(3, 32, 5, 4.0, 1.0);
  Graph<double> g(true, false);
  Tensor<double> y = rmsnorm(g, Tensor<double>{x.data.data(), nullptr, 3, 32}, {}, 0.0);
  for (int n = 0; n < 3; ++n) {
    double ms = 0;
    for (int j = 0; j < 32; ++j) ms += y(n, j) * y(n, j) / 32;
    EXPECT_NEAR(ms, 1.0, 1e-12);
  }
}

// pRMSNorm with p = 1 is RMSNorm; with p < 1 the first k features have unit mean square.
TEST(NormClosedForms, PRMSNormNormalizesItsFirstFeatures) {
  Input x = random_input(3, 32, 5, 4.0, 1.0);
  Graph<double> g(true, false);
  const Tensor<double> xt{x.data.data(), nullptr, 3, 32};
  const Tensor<double> full = prmsnorm(g, xt, {}, 0.0, 1.0), rms = rmsnorm(g, xt, {}, 0.0);
  for (int64_t i = 0; i < full.size(); ++i) EXPECT_NEAR(full.data[i], rms.data[i], 1e-14);
  const Tensor<double> y = prmsnorm(g, xt, {}, 0.0, 0.25);  // k = 8
  ASSERT_EQ(prmsnorm_features(0.25, 32), 8);
  for (int n = 0; n < 3; ++n) {
    double ms = 0;
    for (int j = 0; j < 8; ++j) ms += y(n, j) * y(n, j) / 8;
    EXPECT_NEAR(ms, 1.0, 1e-12);
  }
  EXPECT_EQ(prmsnorm_features(0.0625, 48), 3);
  EXPECT_EQ(prmsnorm_features(0.0625, 8), 1);  // at least one feature
}

TEST(NormClosedForms, BatchNormRunningStatisticsFollowPyTorch) {  // claim E5
  const int m = 8, C = 4;
  Input x = random_input(m, C, 3, 2.0, 1.5);
  std::vector<double> rmean(C, 0.0), rvar(C, 1.0);
  BatchNormState<double> st{rmean.data(), rvar.data(), 0.1, nullptr};
  Graph<double> g(true, false);
  batchnorm(g, Tensor<double>{x.data.data(), nullptr, m, C}, {}, {}, 1, 1e-5, st);
  for (int c = 0; c < C; ++c) {
    double mu = 0, var = 0;
    for (int r = 0; r < m; ++r) mu += x.data[r * C + c] / m;
    for (int r = 0; r < m; ++r) var += (x.data[r * C + c] - mu) * (x.data[r * C + c] - mu) / m;
    EXPECT_NEAR(rmean[c], 0.1 * mu, 1e-12);
    EXPECT_NEAR(rvar[c], 0.9 + 0.1 * double(m) / (m - 1) * var, 1e-12);
  }
  // eval mode: the affine map with the running statistics
  Graph<double> e(false, false);
  Tensor<double> y = batchnorm(e, Tensor<double>{x.data.data(), nullptr, m, C}, {}, {}, 1, 1e-5, st);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < C; ++c) EXPECT_NEAR(y(r, c), (x.data[r * C + c] - rmean[c]) / std::sqrt(rvar[c] + 1e-5), 1e-12);
}

TEST(NormClosedForms, BatchNormMaskedRowsDoNotMoveTheStatistics) {
  // Rows with mask 0 hold garbage; the statistics (and so the other rows' outputs) ignore them.
  Input x = random_input(6, 3, 4);
  const double mask[] = {1, 1, 0, 1, 0, 1};
  Input x2 = x;
  for (int c = 0; c < 3; ++c) x2.data[2 * 3 + c] = 1e3, x2.data[4 * 3 + c] = -7e2;
  BatchNormState<double> st;
  st.mask = mask;
  Graph<double> g(true, false);
  Tensor<double> y1 = batchnorm(g, Tensor<double>{x.data.data(), nullptr, 6, 3}, {}, {}, 1, 1e-5, st);
  Tensor<double> y2 = batchnorm(g, Tensor<double>{x2.data.data(), nullptr, 6, 3}, {}, {}, 1, 1e-5, st);
  for (int r : {0, 1, 3, 5})
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(y1(r, c), y2(r, c), 1e-12);
}

}  // namespace
}  // namespace nt::test
