// Fused ops and norms in float32 against PyTorch 1.13 (tests/golden, scripts/dump_golden.py):
// outputs, input gradients, parameter gradients and BatchNorm's running statistics, each
// within 1e-5 + 1e-5 |ref|.
#include <gtest/gtest.h>

#include "golden.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

TEST(Golden, LayerNorm) {
  Golden ref("layernorm");
  const int N = ref.config()["N"], C = ref.config()["C"];
  auto x = ref.leaf("x", N, C), w = ref.leaf("weight", 1, C), b = ref.leaf("bias", 1, C);
  Graph<float> g;
  Tensor<float> y = layernorm(g, x.tensor(), w.tensor(), b.tensor(), float(ref.config()["eps"]));
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dweight", w.grad.data());
  ref.expect_close("dbias", b.grad.data());
}

TEST(Golden, RMSNorm) {
  Golden ref("rmsnorm");
  const int N = ref.config()["N"], C = ref.config()["C"];
  auto x = ref.leaf("x", N, C), w = ref.leaf("weight", 1, C);
  Graph<float> g;
  Tensor<float> y = rmsnorm(g, x.tensor(), w.tensor(), float(ref.config()["eps"]));
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dweight", w.grad.data());
}

TEST(Golden, PRMSNorm) {
  Golden ref("prmsnorm");
  const int N = ref.config()["N"], C = ref.config()["C"];
  auto x = ref.leaf("x", N, C), w = ref.leaf("weight", 1, C);
  Graph<float> g;
  Tensor<float> y = prmsnorm(g, x.tensor(), w.tensor(), float(ref.config()["eps"]), ref.config()["p"].get<double>());
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dweight", w.grad.data());
}

TEST(Golden, ScaleNorm) {
  Golden ref("scalenorm");
  const int N = ref.config()["N"], C = ref.config()["C"];
  auto x = ref.leaf("x", N, C), w = ref.leaf("weight", 1, 1);
  Graph<float> g;
  Tensor<float> y = scalenorm(g, x.tensor(), w.tensor(), float(ref.config()["eps"]));
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dweight", w.grad.data());
}

TEST(Golden, DyT) {  // gamma * tanh(alpha x) + beta: every gradient, alpha's included
  Golden ref("dyt");
  const int N = ref.config()["N"], C = ref.config()["C"];
  auto x = ref.leaf("x", N, C), a = ref.leaf("alpha", 1, 1), w = ref.leaf("weight", 1, C), b = ref.leaf("bias", 1, C);
  Graph<float> g;
  Tensor<float> y = dyt(g, x.tensor(), a.tensor(), w.tensor(), b.tensor());
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dalpha", a.grad.data());
  ref.expect_close("dweight", w.grad.data());
  ref.expect_close("dbias", b.grad.data());
}

TEST(Golden, BatchNormTrainThenEval) {
  Golden ref("batchnorm");
  const int N = ref.config()["N"], C = ref.config()["C"];
  const float eps = ref.config()["eps"], momentum = ref.config()["momentum"];
  auto x = ref.leaf("x", N, C), w = ref.leaf("weight", 1, C), b = ref.leaf("bias", 1, C);
  std::vector<float> rmean(C, 0.0f), rvar(C, 1.0f);
  BatchNormState<float> st{rmean.data(), rvar.data(), momentum, nullptr};

  Graph<float> train(true, true);
  Tensor<float> y = batchnorm(train, x.tensor(), w.tensor(), b.tensor(), 1, eps, st);
  seed_gradient(train, y, ref.values("dout"));
  train.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dweight", w.grad.data());
  ref.expect_close("dbias", b.grad.data());
  ref.expect_close("running_mean", rmean.data());
  ref.expect_close("running_var", rvar.data());

  auto xe = ref.leaf("x_eval", N, C);
  std::fill(w.grad.begin(), w.grad.end(), 0.0f);
  std::fill(b.grad.begin(), b.grad.end(), 0.0f);
  Graph<float> eval(false, true);
  Tensor<float> ye = batchnorm(eval, xe.tensor(), w.tensor(), b.tensor(), 1, eps, st);
  seed_gradient(eval, ye, ref.values("dout_eval"));
  eval.backward(Tensor<float>{});
  ref.expect_close("y_eval", ye.data);
  ref.expect_close("dx_eval", xe.grad.data());
  ref.expect_close("dweight_eval", w.grad.data());
  ref.expect_close("dbias_eval", b.grad.data());
  ref.expect_close("running_mean", rmean.data());  // eval leaves them alone
}

TEST(Golden, BatchNormSequenceAxes) {
  Golden ref("batchnorm_sequence");
  const int B = ref.config()["B"], T = ref.config()["T"], C = ref.config()["C"];
  const float eps = ref.config()["eps"], momentum = ref.config()["momentum"];
  for (const std::string axes : {"batch_time", "batch"}) {
    SCOPED_TRACE(axes);
    const int S = axes == "batch" ? T : 1;
    auto x = ref.leaf("x", B * T, C), w = ref.leaf("weight", 1, C), b = ref.leaf("bias", 1, C);
    std::vector<float> rmean(S * C, 0.0f), rvar(S * C, 1.0f);
    Graph<float> g;
    Tensor<float> y = batchnorm(g, x.tensor(), w.tensor(), b.tensor(), S, eps,
                                BatchNormState<float>{rmean.data(), rvar.data(), momentum, nullptr});
    seed_gradient(g, y, ref.values("dout_" + axes));
    g.backward(Tensor<float>{});
    ref.expect_close("y_" + axes, y.data);
    ref.expect_close("dx_" + axes, x.grad.data());
    ref.expect_close("dweight_" + axes, w.grad.data());
    ref.expect_close("dbias_" + axes, b.grad.data());
    ref.expect_close("running_mean_" + axes, rmean.data());
    ref.expect_close("running_var_" + axes, rvar.data());
  }
}

TEST(Golden, WeightNorm) {
  Golden ref("weightnorm");
  const int N = ref.config()["N"], in = ref.config()["in"], out = ref.config()["out"];
  auto x = ref.leaf("x", N, in), v = ref.leaf("weight_v", out, in), gain = ref.leaf("weight_g", out, 1),
       b = ref.leaf("bias", 1, out);
  Graph<float> g;
  Tensor<float> y = linear(g, x.tensor(), weightnorm(g, v.tensor(), gain.tensor()), b.tensor());
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dweight_v", v.grad.data());
  ref.expect_close("dweight_g", gain.grad.data());
  ref.expect_close("dbias", b.grad.data());
}

TEST(Golden, CausalSelfAttentionLayer) {
  Golden ref("attention");
  const int B = ref.config()["B"], T = ref.config()["T"], C = ref.config()["C"], NH = ref.config()["NH"];
  auto x = ref.leaf("x", B * T, C);
  std::vector<Golden::Leaf> w, b;
  for (const char* n : {"q", "k", "v", "out"}) {
    w.push_back(ref.leaf(std::string(n) + "_weight", C, C));
    b.push_back(ref.leaf(std::string(n) + "_bias", 1, C));
  }
  Graph<float> g;
  auto heads = [&](int i) { return split_heads(g, linear(g, x.tensor(), w[i].tensor(), b[i].tensor()), B, T, NH); };
  Tensor<float> o = causal_attention(g, heads(0), heads(1), heads(2), B * NH, T);
  Tensor<float> y = linear(g, merge_heads(g, o, B, T, NH), w[3].tensor(), b[3].tensor());
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  int i = 0;
  for (const std::string n : {"q", "k", "v", "out"}) {
    ref.expect_close("d" + n + "_weight", w[i].grad.data());
    ref.expect_close("d" + n + "_bias", b[i].grad.data());
    ++i;
  }
}

TEST(Golden, GeluFeedForward) {
  Golden ref("mlp_gelu");
  const int N = ref.config()["N"], C = ref.config()["C"], H = ref.config()["H"];
  auto x = ref.leaf("x", N, C), w1 = ref.leaf("fc1_weight", H, C), b1 = ref.leaf("fc1_bias", 1, H),
       w2 = ref.leaf("fc2_weight", C, H), b2 = ref.leaf("fc2_bias", 1, C);
  Graph<float> g;
  Tensor<float> y = linear(g, gelu(g, linear(g, x.tensor(), w1.tensor(), b1.tensor())), w2.tensor(), b2.tensor());
  seed_gradient(g, y, ref.values("dout"));
  g.backward(Tensor<float>{});
  ref.expect_close("y", y.data);
  ref.expect_close("dx", x.grad.data());
  ref.expect_close("dfc1_weight", w1.grad.data());
  ref.expect_close("dfc1_bias", b1.grad.data());
  ref.expect_close("dfc2_weight", w2.grad.data());
  ref.expect_close("dfc2_bias", b2.grad.data());
}

TEST(Golden, CrossEntropyIgnoringPadding) {
  Golden ref("cross_entropy");
  const int N = ref.config()["N"], V = ref.config()["V"];
  auto logits = ref.leaf("logits", N, V);
  std::vector<int32_t> targets;
  std::vector<float> weight;
  for (float t : ref.values("targets")) {
    targets.push_back(t < 0 ? 0 : int32_t(t));
    weight.push_back(t < 0 ? 0.0f : 1.0f);
  }
  Graph<float> g;
  Tensor<float> loss = cross_entropy(g, logits.tensor(), targets.data(), Tensor<float>{weight.data(), nullptr, N, 1});
  g.backward(loss);
  ref.expect_close("loss", loss.data);
  ref.expect_close("dlogits", logits.grad.data());
}

}  // namespace
}  // namespace nt::test
