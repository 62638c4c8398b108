// Every op's backward against central finite differences in double (tests/gradcheck.h):
// relative error <= 1e-6 for every input, and no input with an all-zero gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gemm.h"
#include "gradcheck.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

constexpr double kTolerance = 1e-6;

// Both paths of a backward: adding to the caller's buffers, and writing the graph's own first.
void expect_gradients_match(const Builder& f, std::vector<Input> inputs, bool training = true) {
  for (const bool through_graph : {false, true}) {
    const GradCheckResult r = gradcheck(f, inputs, training, through_graph);
    for (std::size_t i = 0; i < r.errors.size(); ++i) {
      EXPECT_LE(r.errors[i], kTolerance) << "input " << i << (through_graph ? ", through the graph" : "");
      EXPECT_GT(r.norms[i], 1e-8) << "input " << i << " has an all-zero gradient";
    }
  }
}

// Values kept away from 0, where relu has its kink.
Input away_from_zero(Input in) {
  for (auto& v : in.data)
    if (std::abs(v) < 0.05) v = v < 0 ? -0.05 - std::abs(v) : 0.05 + v;
  return in;
}

TEST(GradCheck, Linear) {
  expect_gradients_match([](auto& g, auto& t) { return linear(g, t[0], t[1], t[2]); },
                         {random_input(5, 4, 1), random_input(3, 4, 2), random_input(1, 3, 3)});
}

TEST(GradCheck, LinearNoBias) {
  expect_gradients_match([](auto& g, auto& t) { return linear(g, t[0], t[1], Tensor<double>{}); },
                         {random_input(5, 4, 1), random_input(3, 4, 2)});
}

TEST(GradCheck, Add) {
  expect_gradients_match([](auto& g, auto& t) { return add(g, t[0], t[1]); },
                         {random_input(4, 3, 1), random_input(4, 3, 2)});
}

TEST(GradCheck, AddBroadcast) {
  for (auto [r, c] : {std::pair{1, 3}, {4, 1}, {1, 1}})
    expect_gradients_match([](auto& g, auto& t) { return add(g, t[0], t[1]); },
                           {random_input(4, 3, 1), random_input(r, c, 2)});
}

TEST(GradCheck, Mul) {
  expect_gradients_match([](auto& g, auto& t) { return mul(g, t[0], t[1]); },
                         {random_input(4, 3, 1), random_input(4, 3, 2)});
}

TEST(GradCheck, MulBroadcast) {
  for (auto [r, c] : {std::pair{1, 3}, {4, 1}, {1, 1}})
    expect_gradients_match([](auto& g, auto& t) { return mul(g, t[0], t[1]); },
                           {random_input(4, 3, 1), random_input(r, c, 2)});
}

TEST(GradCheck, Scale) {
  expect_gradients_match([](auto& g, auto& t) { return scale(g, t[0], -2.5); }, {random_input(4, 3, 1)});
}

TEST(GradCheck, SoftCap) {  // c tanh(x / c): the output logits' soft cap (model.logit_softcap)
  expect_gradients_match([](auto& g, auto& t) { return soft_cap(g, t[0], 1.5); }, {random_input(4, 3, 1, 3.0)});
}

TEST(GradCheck, Shift) {  // a + t: model.norm.unit_offset's 1 + w
  expect_gradients_match([](auto& g, auto& t) { return mul(g, t[1], shift(g, t[0], 1.0)); },
                         {random_input(1, 3, 1), random_input(4, 3, 2)});
}

// A graph with thousands of gradient buffers: the graph's index of them grows past its first size
// (it must stay a power of two, or its probing cycles among a few slots and never ends).
TEST(GradCheck, LongChainOfScales) {
  expect_gradients_match(
      [](auto& g, auto& t) {
        auto y = t[0];
        for (int k = 0; k < 3000; ++k) y = scale(g, y, k % 2 ? 1.0005 : 0.9996);
        return y;
      },
      {random_input(2, 2, 1)});
}

TEST(GradCheck, Axpby) {
  expect_gradients_match([](auto& g, auto& t) { return axpby(g, 1.7, t[0], t[1]); },
                         {random_input(4, 3, 1), random_input(4, 3, 2)});
}

TEST(GradCheck, Rsqrt) {
  Input a = random_input(4, 3, 1, 0.3, 2.0);  // positive
  expect_gradients_match([](auto& g, auto& t) { return rsqrt(g, t[0], 1e-3); }, {a});
}

TEST(GradCheck, Relu) {
  expect_gradients_match([](auto& g, auto& t) { return relu(g, t[0]); }, {away_from_zero(random_input(6, 5, 1))});
}

TEST(GradCheck, Gelu) {
  expect_gradients_match([](auto& g, auto& t) { return gelu(g, t[0]); }, {random_input(6, 5, 1, 2.0)});
}

TEST(GradCheck, Tanh) {
  expect_gradients_match([](auto& g, auto& t) { return nt::tanh(g, t[0]); }, {random_input(6, 5, 1, 1.5)});
}

TEST(GradCheck, Silu) {
  expect_gradients_match([](auto& g, auto& t) { return silu(g, t[0]); }, {random_input(6, 5, 1, 2.0)});
}

TEST(GradCheck, BiasActivation) {  // act(x + b): relu kept off its kink, gelu, tanh, silu
  for (const Activation a : {Activation::relu, Activation::gelu, Activation::tanh, Activation::silu}) {
    SCOPED_TRACE(kActivationNames[int(a)]);
    expect_gradients_match([a](auto& g, auto& t) { return bias_activation(g, t[0], t[1], a); },
                           {away_from_zero(random_input(5, 7, 1)), random_input(1, 7, 2, 1e-3)});
  }
}

TEST(GradCheck, Residual) {  // alpha x + f + b
  expect_gradients_match([](auto& g, auto& t) { return residual(g, 1.7, t[0], t[1], t[2]); },
                         {random_input(5, 7, 1), random_input(5, 7, 2), random_input(1, 7, 3)});
}

TEST(GradCheck, Softmax) {
  expect_gradients_match([](auto& g, auto& t) { return softmax(g, t[0]); }, {random_input(4, 7, 1, 2.0)});
}

TEST(GradCheck, CrossEntropy) {
  static const int32_t targets[] = {3, 0, 6, 2, 5};
  expect_gradients_match([](auto& g, auto& t) { return cross_entropy(g, t[0], targets, Tensor<double>{}); },
                         {random_input(5, 7, 1, 2.0)});
}

TEST(GradCheck, CrossEntropyMasked) {
  static const int32_t targets[] = {3, 0, 6, 2, 5};
  Input mask;
  mask.rows = 5, mask.cols = 1, mask.data = {1, 0, 1, 1, 0}, mask.grad.assign(5, 0), mask.differentiate = false;
  expect_gradients_match([](auto& g, auto& t) { return cross_entropy(g, t[0], targets, t[1]); },
                         {random_input(5, 7, 1, 2.0), mask});
}

TEST(GradCheck, CrossEntropyMaskedRowsGetNoGradient) {
  static const int32_t targets[] = {3, 0};
  std::vector<Input> in{random_input(2, 4, 1), Input{{1, 0}, {0, 0}, 2, 1, false}};
  gradcheck([](auto& g, auto& t) { return cross_entropy(g, t[0], targets, t[1]); }, in);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(in[0].grad[4 + j], 0.0);
}

TEST(GradCheck, Embedding) {
  static const int32_t ids[] = {2, 0, 2, 4, 1, 2};
  expect_gradients_match([](auto& g, auto& t) { return embedding(g, t[0], ids, 6); }, {random_input(5, 3, 1)});
}

TEST(GradCheck, SumAndMean) {
  for (int axis : {-1, 0, 1}) {
    expect_gradients_match([axis](auto& g, auto& t) { return sum(g, t[0], axis); }, {random_input(4, 3, 1)});
    expect_gradients_match([axis](auto& g, auto& t) { return mean(g, t[0], axis); }, {random_input(4, 3, 1)});
  }
}

TEST(GradCheck, Reshape) {  // a view: the gradient reaches the original buffer through the next op
  expect_gradients_match([](auto& g, auto& t) { return mul(g, reshape(t[0], 3, 4), t[1]); },
                         {random_input(4, 3, 1), random_input(3, 4, 2)});
}

TEST(GradCheck, SplitHeads) {
  const int B = 2, T = 3, NH = 2, hs = 2;
  expect_gradients_match([](auto& g, auto& t) { return split_heads(g, t[0], B, T, NH); },
                         {random_input(B * T, NH * hs, 1)});
}

TEST(GradCheck, MergeHeads) {
  const int B = 2, T = 3, NH = 2, hs = 2;
  expect_gradients_match([](auto& g, auto& t) { return merge_heads(g, t[0], B, T, NH); },
                         {random_input(B * NH * T, hs, 1)});
}

TEST(GradCheck, CausalAttention) {
  const int BH = 3, T = 5, hs = 4;
  expect_gradients_match([](auto& g, auto& t) { return causal_attention(g, t[0], t[1], t[2], BH, T); },
                         {random_input(BH * T, hs, 1), random_input(BH * T, hs, 2), random_input(BH * T, hs, 3)});
}

TEST(GradCheck, CausalSelfAttention) {  // heads read in place from qkv (B*T, 3*NH*hs)
  const int B = 2, T = 4, NH = 3, hs = 2;
  expect_gradients_match([](auto& g, auto& t) { return causal_self_attention(g, t[0], B, T, NH); },
                         {random_input(B * T, 3 * NH * hs, 1)});
}

// model.qk_norm's attention (model/blocks/attention.cpp): q, k, v three products, q and k normalized
// per head over hs (one gain, LN: and bias, of hs shared by the heads), then multi_head_attention.
// Gradients of x, the three weights and the four norm parameters; causal self-attention, and
// cross-attention to another sequence with a key mask.
TEST(GradCheck, AttentionWithQKNorm) {
  const int B = 2, T = 3, Tk = 4, NH = 2, hs = 3, C = NH * hs;
  static const float key_mask[B * Tk] = {1, 1, 0, 1, 1, 1, 1, 0};
  auto attention = [](bool cross, bool rms) {
    return [cross, rms](auto& g, auto& t) {
      const int rows_k = cross ? B * Tk : B * T;
      const Tensor<double> keys = cross ? t[1] : t[0];
      auto per_head = [&](Tensor<double> x, int rows, Tensor<double> gain, Tensor<double> bias) {
        x = reshape(x, rows * NH, hs);
        return reshape(rms ? rmsnorm(g, x, gain, 1e-5) : layernorm(g, x, gain, bias, 1e-5), rows, C);
      };
      const Tensor<double> q = per_head(linear(g, t[0], t[2], Tensor<double>{}), B * T, t[5], t[6]);
      const Tensor<double> k = per_head(linear(g, keys, t[3], Tensor<double>{}), rows_k, t[7], t[8]);
      const Tensor<double> v = linear(g, keys, t[4], Tensor<double>{});
      return multi_head_attention(g, q, k, v, B, T, cross ? Tk : T, NH, !cross, cross ? key_mask : nullptr);
    };
  };
  for (bool cross : {false, true})
    for (bool rms : {false, true}) {
      SCOPED_TRACE(std::string(cross ? "cross" : "causal self") + (rms ? " rmsnorm" : " layernorm"));
      std::vector<Input> in{
          random_input(B * T, C, 1),   random_input(B * Tk, C, 2),       random_input(C, C, 3, 0.5),
          random_input(C, C, 4, 0.5),  random_input(C, C, 5, 0.5),       random_input(1, hs, 6, 0.5, 1.0),
          random_input(1, hs, 7, 0.3), random_input(1, hs, 8, 0.5, 1.0), random_input(1, hs, 9, 0.3)};
      in[1].differentiate = cross;  // the other sequence: cross-attention's keys
      in[6].differentiate = !rms;   // q_norm's bias: layernorm's only
      in[8].differentiate = false;  // k_norm's bias adds q.b to every key of a query: the softmax drops it, dL = 0
      expect_gradients_match(attention(cross, rms), in);
    }
}

TEST(GradCheck, CausalAttentionAcrossRowBlocks) {  // T = 70: two blocks of 32 rows and a partial one
  const int T = 70;
  expect_gradients_match([](auto& g, auto& t) { return causal_attention(g, t[0], t[1], t[2], 1, T); },
                         {random_input(T, 2, 1), random_input(T, 2, 2), random_input(T, 2, 3)});
  expect_gradients_match([](auto& g, auto& t) { return causal_self_attention(g, t[0], 1, T, 2); },
                         {random_input(T, 6, 4)});
}

TEST(GradCheck, LayerNorm) {
  expect_gradients_match([](auto& g, auto& t) { return layernorm(g, t[0], t[1], t[2], 1e-5); },
                         {random_input(4, 6, 1, 2.0, 0.5), random_input(1, 6, 2, 0.5, 1.0), random_input(1, 6, 3)});
}

TEST(GradCheck, LayerNormNoAffine) {
  expect_gradients_match([](auto& g, auto& t) { return layernorm(g, t[0], Tensor<double>{}, Tensor<double>{}, 1e-5); },
                         {random_input(4, 6, 1, 2.0, 0.5)});
}

TEST(GradCheck, RMSNorm) {
  expect_gradients_match([](auto& g, auto& t) { return rmsnorm(g, t[0], t[1], 1e-5); },
                         {random_input(4, 6, 1, 2.0, 0.5), random_input(1, 6, 2, 0.5, 1.0)});
}

// One scalar gain for the whole (N, C): its gradient sums over every row and feature.
TEST(GradCheck, ScaleNorm) {
  expect_gradients_match([](auto& g, auto& t) { return scalenorm(g, t[0], t[1], 1e-5); },
                         {random_input(4, 6, 1, 2.0, 0.5), random_input(1, 1, 2, 0.5, 2.0)});
  expect_gradients_match([](auto& g, auto& t) { return scalenorm(g, t[0], Tensor<double>{}, 1e-5); },
                         {random_input(3, 16, 3, 2.0, 0.5)});
}

// DyT: the gradients of x, alpha, gamma and beta; inputs at scale 2 reach tanh's curved part.
TEST(GradCheck, DyT) {
  expect_gradients_match([](auto& g, auto& t) { return dyt(g, t[0], t[1], t[2], t[3]); },
                         {random_input(4, 6, 1, 2.0, 0.5), random_input(1, 1, 2, 0.2, 0.7),
                          random_input(1, 6, 3, 0.5, 1.0), random_input(1, 6, 4)});
  expect_gradients_match([](auto& g, auto& t) { return dyt(g, t[0], t[1], Tensor<double>{}, Tensor<double>{}); },
                         {random_input(3, 16, 5, 2.0), random_input(1, 1, 6, 0.2, 0.5)});
}

// C = 10, p = 0.3: the statistic reads the first 3 features; the rest get term 1 only.
TEST(GradCheck, PRMSNorm) {
  expect_gradients_match([](auto& g, auto& t) { return prmsnorm(g, t[0], t[1], 1e-5, 0.3); },
                         {random_input(4, 10, 1, 2.0, 0.5), random_input(1, 10, 2, 0.5, 1.0)});
  expect_gradients_match([](auto& g, auto& t) { return prmsnorm(g, t[0], Tensor<double>{}, 1e-5, 1.0 / 16); },
                         {random_input(3, 64, 3, 2.0, 0.5)});
}

TEST(GradCheck, BatchNormBatchTime) {  // (B*T, C) with statistics over all B*T rows
  expect_gradients_match(
      [](auto& g, auto& t) { return batchnorm(g, t[0], t[1], t[2], 1, 1e-5, BatchNormState<double>{}); },
      {random_input(6, 4, 1, 2.0, 0.5), random_input(1, 4, 2, 0.5, 1.0), random_input(1, 4, 3)});
}

TEST(GradCheck, BatchNormBatchAxes) {  // (B, T, C) with statistics per position over the B rows
  const int S = 3;
  expect_gradients_match(
      [](auto& g, auto& t) { return batchnorm(g, t[0], t[1], t[2], S, 1e-5, BatchNormState<double>{}); },
      {random_input(4 * S, 2, 1, 2.0, 0.5), random_input(1, 2, 2, 0.5, 1.0), random_input(1, 2, 3)});
}

TEST(GradCheck, BatchNormMasked) {
  const int S = 2;
  static const double mask[] = {1, 1, 1, 0, 0, 1, 1, 0, 1, 1};  // (R=5, S=2)
  expect_gradients_match(
      [](auto& g, auto& t) {
        BatchNormState<double> st;
        st.mask = mask;
        return batchnorm(g, t[0], t[1], t[2], S, 1e-5, st);
      },
      {random_input(5 * S, 3, 1, 2.0, 0.5), random_input(1, 3, 2, 0.5, 1.0), random_input(1, 3, 3)});
}

TEST(GradCheck, BatchNormEval) {
  static double running_mean[] = {0.3, -0.2, 0.1}, running_var[] = {1.5, 0.7, 2.0};
  expect_gradients_match(
      [](auto& g, auto& t) {
        BatchNormState<double> st;
        st.running_mean = running_mean;
        st.running_var = running_var;
        return batchnorm(g, t[0], t[1], t[2], 1, 1e-5, st);
      },
      {random_input(5, 3, 1), random_input(1, 3, 2, 0.5, 1.0), random_input(1, 3, 3)}, /*training=*/false);
}

TEST(GradCheck, WeightNorm) {
  expect_gradients_match([](auto& g, auto& t) { return weightnorm(g, t[0], t[1]); },
                         {random_input(4, 5, 1), random_input(4, 1, 2, 0.5, 1.0)});
}

TEST(GradCheck, WeightNormNoGain) {
  expect_gradients_match([](auto& g, auto& t) { return weightnorm(g, t[0], Tensor<double>{}); },
                         {random_input(4, 5, 1)});
}

// The composites' backward is derived by the tape from the primitives above; check it too.
TEST(GradCheck, CompositeNorms) {
  expect_gradients_match([](auto& g, auto& t) { return layernorm_composite(g, t[0], t[1], t[2], 1e-5); },
                         {random_input(4, 6, 1, 2.0), random_input(1, 6, 2), random_input(1, 6, 3)});
  expect_gradients_match([](auto& g, auto& t) { return rmsnorm_composite(g, t[0], t[1], 1e-5); },
                         {random_input(4, 6, 1, 2.0), random_input(1, 6, 2)});
  expect_gradients_match([](auto& g, auto& t) { return prmsnorm_composite(g, t[0], t[1], 1e-5, 0.5); },
                         {random_input(4, 6, 1, 2.0), random_input(1, 6, 2)});
  expect_gradients_match([](auto& g, auto& t) { return scalenorm_composite(g, t[0], t[1], 1e-5); },
                         {random_input(4, 6, 1, 2.0), random_input(1, 1, 2, 0.5, 2.0)});
  expect_gradients_match(
      [](auto& g, auto& t) { return dyt_composite(g, t[0], t[1], t[2], t[3]); },
      {random_input(4, 6, 1, 2.0), random_input(1, 1, 2, 0.2, 0.5), random_input(1, 6, 3), random_input(1, 6, 4)});
  expect_gradients_match(
      [](auto& g, auto& t) { return batchnorm_composite(g, t[0], t[1], t[2], 2, 1e-5, Tensor<double>{}); },
      {random_input(8, 3, 1, 2.0), random_input(1, 3, 2), random_input(1, 3, 3)});
  expect_gradients_match([](auto& g, auto& t) { return weightnorm_composite(g, t[0], t[1]); },
                         {random_input(4, 5, 1), random_input(4, 1, 2)});
}

// The harness must be able to fail: an op whose backward has a flipped sign is caught.
namespace broken {
struct Context {
  Tensor<double> y, x;
};
void wrong_backward(const void* p, unsigned) {
  const auto& c = *static_cast<const Context*>(p);
  for (int64_t i = 0; i < c.x.size(); ++i) c.x.grad[i] -= c.y.grad[i] * 2 * c.x.data[i];  // should be +=
}
Tensor<double> square(Graph<double>& g, Tensor<double> x) {
  Tensor<double> y = g.output(x.rows, x.cols, x);
  for (int64_t i = 0; i < x.size(); ++i) y.data[i] = x.data[i] * x.data[i];
  if (y.grad) g.record(wrong_backward, Context{y, x}, {x.grad});
  return y;
}
}  // namespace broken

TEST(GradCheckHarness, CatchesAWrongBackward) {
  std::vector<Input> in{random_input(3, 3, 1)};
  const GradCheckResult r = gradcheck([](auto& g, auto& t) { return broken::square(g, t[0]); }, in);
  EXPECT_GT(r.max_error(), 0.5);
}

// The recurrent cells' pointwise ops (ops/gru.cpp, ops/lstm.cpp) and a step's rows (ops/rows.cpp);
// tests/test_rnn.cpp checks them again inside whole recurrences.
TEST(GradCheck, GruTransition) {
  expect_gradients_match([](auto& g, auto& t) { return gru_transition(g, t[0], t[1], t[2], t[3], t[4]); },
                         {random_input(3, 8, 1), random_input(3, 8, 2), random_input(3, 4, 3), random_input(3, 4, 4),
                          random_input(3, 4, 5)});
}

// Rows 1 and 3 of five, then rows 4 and 0 by index: gx, cx taken from sequences (take_rows then
// gru_transition in one op).
const int kRowsByIndex[] = {4, 0};
TEST(GradCheck, GruTransitionRows) {
  for (const Rows rows : {Rows{1, 2}, Rows{.index = kRowsByIndex}})
    expect_gradients_match(
        [rows](auto& g, auto& t) { return gru_transition_rows(g, t[0], t[1], rows, t[2], t[3], t[4]); },
        {random_input(5, 8, 1), random_input(5, 4, 2), random_input(2, 8, 3), random_input(2, 4, 4),
         random_input(2, 4, 5)});
}

TEST(GradCheck, LstmCellAndOutput) {
  expect_gradients_match([](auto& g, auto& t) { return lstm_cell(g, t[0], t[1], t[2]); },
                         {random_input(3, 16, 1), random_input(3, 16, 2), random_input(3, 4, 3)});
  expect_gradients_match([](auto& g, auto& t) { return lstm_output(g, t[0], t[1], t[2]); },
                         {random_input(3, 16, 1), random_input(3, 16, 2), random_input(3, 4, 3)});
}

// Rows 1, 5, 9 of twelve; then by index, a row twice and a zero row (-1: a sequence that starts)
const int kTaken[] = {7, -1, 2, 7};
TEST(GradCheck, TakeRows) {
  expect_gradients_match([](auto& g, auto& t) { return take_rows(g, t[0], Rows{1, 4}, 3); }, {random_input(12, 3, 1)});
  expect_gradients_match([](auto& g, auto& t) { return take_rows(g, t[0], Rows{.index = kTaken}, 4); },
                         {random_input(12, 3, 1)});
}

// A Linear over rows 0 and 2 of a batch of three: the same gradients as any Linear. And over 9
// scattered rows of a batch of 32, the bits of the Linear over the whole batch whose other rows'
// gradient is 0 (sequences that have ended): the weight's summed over the rows in the batch's order,
// the bias's over the whole batch. A plain Linear over the 9 rows alone sums the bias's gradient in
// another tree, and its bits differ (which is why linear takes the batch's rows).
const int kBatchRows[] = {0, 2};
const int kLiveRows[] = {0, 3, 4, 9, 15, 16, 22, 27, 31};
TEST(GradCheck, LinearOverRowsOfABatch) {
  expect_gradients_match([](auto& g, auto& t) { return linear(g, t[0], t[1], t[2], kBatchRows, 3); },
                         {random_input(2, 5, 1), random_input(4, 5, 2), random_input(1, 4, 3)});
  constexpr int kBatch = 32, kLive = 9, kIn = 20, kOut = 40;
  enum Form { batch_rows, whole_batch, rows_alone };
  auto run = [&](Form form) {
    Graph<float> g;
    const Tensor<float> x = g.tensor(kBatch, kIn, true), w = g.tensor(kOut, kIn, true), b = g.tensor(1, kOut, true);
    for (int64_t k = 0; k < x.size(); ++k) x.data[k] = std::sin(0.3f * float(k));
    for (int64_t k = 0; k < w.size(); ++k) w.data[k] = std::cos(0.7f * float(k));
    std::fill_n(b.data, kOut, 0.5f);
    Tensor<float> y;
    if (form == whole_batch) {
      y = linear(g, x, w, b);
    } else {
      Tensor<float> xs = g.tensor(kLive, kIn, true);
      for (int i = 0; i < kLive; ++i) std::copy_n(x.data + kLiveRows[i] * kIn, kIn, xs.data + i * kIn);
      y = form == batch_rows ? linear(g, xs, w, b, kLiveRows, kBatch) : linear(g, xs, w, b);
    }
    float* dy = g.seed(y);
    for (int i = 0; i < y.rows; ++i) {
      const int row = form == whole_batch ? i : kLiveRows[i];  // the batch's row
      const bool live = std::find(std::begin(kLiveRows), std::end(kLiveRows), row) != std::end(kLiveRows);
      for (int k = 0; k < kOut; ++k) dy[i * kOut + k] = live ? std::sin(1.3f * float(row * kOut + k)) : 0.0f;
    }
    g.backward(Tensor<float>{});
    std::vector<float> bits(w.grad, w.grad + w.size());
    bits.insert(bits.end(), b.grad, b.grad + kOut);
    return bits;
  };
  const std::vector<float> some = run(batch_rows), all = run(whole_batch), alone = run(rows_alone);
  int differ = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    EXPECT_EQ(std::bit_cast<uint32_t>(some[k]), std::bit_cast<uint32_t>(all[k])) << "value " << k;
    differ += std::bit_cast<uint32_t>(alone[k]) != std::bit_cast<uint32_t>(all[k]);
  }
  EXPECT_GT(differ, 0) << "the rows alone give the whole batch's bits: the test shows nothing";
}

// A Linear over the real rows 0, 2, 3 of a padded batch of five: the padding rows are b (0 without
// it) and send no gradient back. And over a padded batch of 1100 rows (more than one of the
// kernel's passes over k in W's gradient), in normtool's kernel, the bits of the Linear over every
// row where the padding's dy is 0 (after a masked loss): y's real rows, dx's, W's and b's
// gradients, each written first (the graph's own tensors) and added to (the caller's buffers).
const int kRealRows[] = {0, 2, 3};
TEST(GradCheck, LinearOverRealRows) {
  const RealRows real{kRealRows, 3};
  expect_gradients_match([real](auto& g, auto& t) { return linear(g, t[0], t[1], t[2], real); },
                         {random_input(5, 4, 1), random_input(3, 4, 2), random_input(1, 3, 3)});
  expect_gradients_match([real](auto& g, auto& t) { return linear(g, t[0], t[1], Tensor<double>{}, real); },
                         {random_input(5, 4, 1), random_input(3, 4, 2)});
  if (std::string_view(gemm_backend()).rfind("normtool", 0) != 0)
    GTEST_SKIP() << "the bits are the normtool kernel's (gemm_backend: " << gemm_backend() << ")";
  constexpr int kBatch = 1100, kIn = 20, kOut = 40;
  std::vector<int> rows;
  for (int i = 0; i < kBatch; ++i)
    if (i % 7 < 4) rows.push_back(i);
  auto run = [&](bool all_rows, bool add) {
    Graph<float> g;
    std::vector<float> x_data(kBatch * kIn), w_data(kOut * kIn), b_data(kOut), gx(x_data.size(), 0.5f),
        gw(w_data.size(), 0.25f), gb(kOut, -1.0f);  // the caller's gradient buffers: added to
    const auto leaf = [&](std::vector<float>& d, std::vector<float>& grad, int r, int c) {
      return add ? Tensor<float>{d.data(), grad.data(), r, c} : g.tensor(r, c, true);
    };
    const Tensor<float> x = leaf(x_data, gx, kBatch, kIn), w = leaf(w_data, gw, kOut, kIn), b = leaf(b_data, gb, 1, kOut);
    for (int64_t k = 0; k < x.size(); ++k) x.data[k] = std::sin(0.3f * float(k));
    for (int64_t k = 0; k < w.size(); ++k) w.data[k] = std::cos(0.7f * float(k));
    for (int k = 0; k < kOut; ++k) b.data[k] = 0.1f * float(k);
    const Tensor<float> y = all_rows ? linear(g, x, w, b) : linear(g, x, w, b, RealRows{rows.data(), int(rows.size())});
    std::vector<float> out(y.data, y.data + y.size());
    float* dy = g.seed(y);
    for (int i = 0; i < kBatch; ++i)
      for (int k = 0; k < kOut; ++k) dy[i * kOut + k] = i % 7 < 4 ? std::sin(1.3f * float(i * kOut + k)) : 0.0f;
    g.backward(Tensor<float>{});
    out.insert(out.end(), x.grad, x.grad + x.size());
    out.insert(out.end(), w.grad, w.grad + w.size());
    out.insert(out.end(), b.grad, b.grad + kOut);
    return out;
  };
  for (const bool add : {false, true}) {
    SCOPED_TRACE(add ? "added to the caller's gradients" : "written first");
    const std::vector<float> some = run(false, add), all = run(true, add);
    ASSERT_EQ(some.size(), all.size());
    int padding_rows_differ = 0;
    for (std::size_t k = 0; k < all.size(); ++k) {
      const bool y = k < std::size_t(kBatch) * kOut, padding = y && int(k / kOut) % 7 >= 4;
      if (padding) {  // y's padding rows: b, not x W^T + b
        EXPECT_EQ(some[k], 0.1f * float(k % kOut)) << "y entry " << k;
        padding_rows_differ += some[k] != all[k];
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(some[k]), std::bit_cast<uint32_t>(all[k])) << "value " << k;
      }
    }
    EXPECT_GT(padding_rows_differ, 0) << "the padding rows were computed: the test shows nothing";
  }
}

// step_linear: linear whose W's panels are prepared once a graph for every step. Its gradients in
// double (nothing to prepare there) with and without batch rows; in float, in normtool's kernel,
// three steps by one weight give linear's bits, forward and backward, and after a reset and a new
// W the graph prepares the new one (a stale W's panels would give the old products); the graph
// holds W^T's and W's panels, and a step reads them (NaN panels give a NaN product).
const int kStepRows[] = {0, 2, 3};
TEST(GradCheck, StepLinear) {
  expect_gradients_match([](auto& g, auto& t) { return step_linear(g, t[0], t[1], t[2]); },
                         {random_input(5, 4, 1), random_input(3, 4, 2), random_input(1, 3, 3)});
  expect_gradients_match([](auto& g, auto& t) { return step_linear(g, t[0], t[1], t[2], kStepRows, 6); },
                         {random_input(3, 4, 1), random_input(3, 4, 2), random_input(1, 3, 3)});
  if (std::string_view(gemm_backend()).rfind("normtool", 0) != 0)
    GTEST_SKIP() << "the bits are the normtool kernel's (gemm_backend: " << gemm_backend() << ")";
  constexpr int kRows = 32, kIn = 128, kOut = 128;  // square, as U_c: W^T and W both packed by the kernel
  std::vector<float> w_data(kOut * kIn), gw(w_data.size());
  const Tensor<float> w{w_data.data(), gw.data(), kOut, kIn};
  Graph<float> g;
  auto run = [&](bool steps) {  // three steps, each from the last's output
    g.reset();
    std::fill(gw.begin(), gw.end(), 0.0f);
    Tensor<float> x = g.tensor(kRows, kIn, true);
    for (int64_t k = 0; k < x.size(); ++k) x.data[k] = std::sin(0.3f * float(k));
    const Tensor<float> x0 = x;
    std::vector<float> out;
    for (int t = 0; t < 3; ++t) {
      const Tensor<float> y = steps ? step_linear(g, x, w, Tensor<float>{}) : linear(g, x, w, Tensor<float>{});
      out.insert(out.end(), y.data, y.data + y.size());
      x = y;
    }
    float* dy = g.seed(x);
    for (int64_t k = 0; k < x.size(); ++k) dy[k] = std::cos(1.3f * float(k));
    g.backward(Tensor<float>{});
    out.insert(out.end(), x0.grad, x0.grad + x0.size());
    out.insert(out.end(), gw.begin(), gw.end());
    return out;
  };
  for (const float scale : {0.05f, -0.03f}) {  // the second W after the first's graph was reset
    for (int64_t k = 0; k < w.size(); ++k) w.data[k] = scale * std::cos(0.7f * float(k));
    const std::vector<float> plain = run(false), steps = run(true);
    ASSERT_EQ(plain.size(), steps.size());
    EXPECT_EQ(0, std::memcmp(plain.data(), steps.data(), plain.size() * sizeof(float))) << "W scaled by " << scale;
  }
  auto panels = [&](bool transposed, bool& fresh) {  // as linear.cpp keys them: op(W)'s K, N and transpose
    const int K = transposed ? kIn : kOut, N = transposed ? kOut : kIn;
    const std::size_t n = prepared_size<float>(transposed, K, N);
    return std::pair{g.memo(w.data, uint64_t(K) << 32 | uint64_t(N) << 1 | uint64_t(transposed), n, fresh), n};
  };
  bool fresh = true;
  for (const bool transposed : {false, true}) {
    panels(transposed, fresh);
    EXPECT_FALSE(fresh) << (transposed ? "W^T's" : "W's") << " panels were not prepared";
  }
  const auto [w_t, n] = panels(true, fresh);
  std::fill_n(w_t, n, std::numeric_limits<float>::quiet_NaN());
  const Tensor<float> ones = g.tensor(kRows, kIn, false);
  std::fill_n(ones.data, ones.size(), 1.0f);
  const Tensor<float> y = step_linear(g, ones, w, Tensor<float>{});
  EXPECT_TRUE(std::isnan(y.data[0])) << "the step did not read the prepared panels";
}

// Rows an op writes or scatters gradients to must not repeat (one write would be lost), and a
// strided form has no zero row: each refused with a message, not computed wrong.
const int kTwice[] = {1, 1}, kDown[] = {2, 0};
TEST(Rows, RepeatedOrDecreasingWrittenRowsAreRefused) {
  Graph<float> g;
  const Tensor<float> seq = g.tensor(4, 3, true), x = g.tensor(2, 3, true), w = g.tensor(5, 3, true),
                      b = g.tensor(1, 5, true);
  EXPECT_THROW(put_rows(g, seq, x, Rows{.index = kTwice}), std::logic_error);
  EXPECT_THROW(put_rows(g, seq, x, Rows{.index = kDown}), std::logic_error);
  EXPECT_THROW(linear(g, x, w, b, kTwice, 3), std::logic_error);
  EXPECT_THROW(take_rows(g, seq, Rows{-1, 1}, 2), std::logic_error);
  EXPECT_NO_THROW(take_rows(g, seq, Rows{.index = kTwice}, 2));  // reading a row twice is fine
  const int up[] = {0, 3};
  EXPECT_NO_THROW(put_rows(g, seq, x, Rows{.index = up}));
}

}  // namespace
}  // namespace nt::test
