// Bidirectional (masked) self-attention and cross-attention (ops/attention.cpp): against a plain
// sum in double, by central differences in double, and against PyTorch (tests/golden/
// attention_masked.json from scripts/dump_seq2seq_golden.py).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "golden.h"
#include "gradcheck.h"
#include "model/model.h"
#include "ops/ops.h"

namespace nt::test {
namespace {

// o[b, i, h] = sum_j softmax_j(s_ij) v_j, s_ij = q_i . k_j / sqrt(hs) (cap > 0: cap tanh(s_ij / cap)), over
// the keys j the mask keeps (and j <= i when causal), written as the definition: q rows (B*Tq, ldq), k and v
// rows (B*Tk, ldkv), head h at column offset h*hs of each; a row with no key left is 0.
std::vector<double> plain_attention(const double* q, int ldq, const double* k, const double* v, int ldkv, int B, int Tq,
                                    int Tk, int NH, int hs, const std::vector<float>& mask, bool causal,
                                    double cap = 0) {
  std::vector<double> o(std::size_t(B) * Tq * NH * hs, 0.0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int i = 0; i < Tq; ++i) {
        std::vector<double> score(Tk, -std::numeric_limits<double>::infinity());
        double max = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < Tk; ++j) {
          if ((!mask.empty() && mask[std::size_t(b) * Tk + j] == 0.0f) || (causal && j > i)) continue;
          double dot = 0;
          for (int c = 0; c < hs; ++c)
            dot += q[(std::size_t(b) * Tq + i) * ldq + h * hs + c] * k[(std::size_t(b) * Tk + j) * ldkv + h * hs + c];
          score[j] = dot / std::sqrt(double(hs));
          if (cap > 0) score[j] = cap * std::tanh(score[j] / cap);
          max = std::max(max, score[j]);
        }
        if (max == -std::numeric_limits<double>::infinity()) continue;
        double z = 0;
        for (int j = 0; j < Tk; ++j) z += std::exp(score[j] - max);
        for (int j = 0; j < Tk; ++j) {
          const double p = std::exp(score[j] - max) / z;
          for (int c = 0; c < hs; ++c)
            o[(std::size_t(b) * Tq + i) * NH * hs + h * hs + c] += p * v[(std::size_t(b) * Tk + j) * ldkv + h * hs + c];
        }
      }
  return o;
}

std::vector<float> padding_mask(int B, int T, std::vector<int> lengths) {
  std::vector<float> m(std::size_t(B) * T, 0.0f);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < lengths[b]; ++t) m[std::size_t(b) * T + t] = 1.0f;
  return m;
}

void expect_equal(const std::vector<double>& want, Tensor<double> got) {
  ASSERT_EQ(std::size_t(got.size()), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.data[i], want[i], 1e-12) << "element " << i;
}

// T = 37 and Tk = 70 cross the kernel's blocks of 32 rows/columns.
TEST(Attention, BidirectionalMaskedEqualsPlainSum) {
  const int B = 3, T = 37, NH = 2, hs = 3, C = NH * hs;
  const std::vector<float> mask = padding_mask(B, T, {37, 20, 33});
  Input qkv = random_input(B * T, 3 * C, 1);
  for (const bool causal : {false, true}) {
    Graph<double> g(true, false);
    const Tensor<double> o = self_attention(g, qkv.tensor(), B, T, NH, causal, mask.data());
    const double* d = qkv.data.data();
    expect_equal(plain_attention(d, 3 * C, d + C, d + 2 * C, 3 * C, B, T, T, NH, hs, mask, causal), o);
  }
  Graph<double> g(true, false);  // no mask: every key
  const Tensor<double> o = self_attention(g, qkv.tensor(), B, T, NH, false, nullptr);
  const double* d = qkv.data.data();
  expect_equal(plain_attention(d, 3 * C, d + C, d + 2 * C, 3 * C, B, T, T, NH, hs, {}, false), o);
}

TEST(Attention, CrossMaskedEqualsPlainSum) {
  const int B = 2, Tq = 9, Tk = 70, NH = 2, hs = 3, C = NH * hs;
  const std::vector<float> mask = padding_mask(B, Tk, {70, 41});
  Input q = random_input(B * Tq, C, 1), kv = random_input(B * Tk, 2 * C, 2);
  Graph<double> g(true, false);
  const Tensor<double> o = cross_attention(g, q.tensor(), kv.tensor(), B, Tq, Tk, NH, mask.data());
  const double* d = kv.data.data();
  expect_equal(plain_attention(q.data.data(), C, d, d + C, 2 * C, B, Tq, Tk, NH, hs, mask, false), o);
}

// Keys left out by the mask change nothing: their values may be anything.
TEST(Attention, MaskedKeysDoNotReachTheOutput) {
  const int B = 1, Tq = 4, Tk = 6, NH = 1, C = 4;
  const std::vector<float> mask = padding_mask(B, Tk, {3});
  Input q = random_input(B * Tq, C, 1), kv = random_input(B * Tk, 2 * C, 2);
  Graph<double> g1(true, false);
  const Tensor<double> first = cross_attention(g1, q.tensor(), kv.tensor(), B, Tq, Tk, NH, mask.data());
  const std::vector<double> o1(first.data, first.data + first.size());
  for (std::size_t i = 3 * 2 * C; i < kv.data.size(); ++i) kv.data[i] = 1e3;
  Graph<double> g2(true, false);
  const Tensor<double> o2 = cross_attention(g2, q.tensor(), kv.tensor(), B, Tq, Tk, NH, mask.data());
  for (int i = 0; i < Tq * C; ++i) EXPECT_EQ(o1[i], o2.data[i]);
}

// A sequence with no real key (all padding) attends to nothing: output 0, gradient 0, no NaN.
TEST(Attention, RowWithoutKeysIsZero) {
  const int B = 2, T = 5, NH = 1, C = 2;
  const std::vector<float> mask = padding_mask(B, T, {5, 0});
  Input qkv = random_input(B * T, 3 * C, 1);
  Graph<double> g(true, true);
  const Tensor<double> o = self_attention(g, qkv.tensor(), B, T, NH, false, mask.data());
  for (int64_t i = T * C; i < o.size(); ++i) EXPECT_EQ(o.data[i], 0.0);
  std::fill_n(g.seed(o), o.size(), 1.0);
  g.backward(Tensor<double>{});
  for (double v : qkv.grad) EXPECT_TRUE(std::isfinite(v));
  for (int i = T * 3 * C; i < 2 * T * 3 * C; ++i) EXPECT_EQ(qkv.grad[i], 0.0);
}

constexpr double kTolerance = 1e-6;

void expect_gradients_match(const Builder& f, std::vector<Input> inputs) {
  for (const bool through_graph : {false, true}) {
    const GradCheckResult r = gradcheck(f, inputs, true, through_graph);
    for (std::size_t i = 0; i < r.errors.size(); ++i) {
      EXPECT_LE(r.errors[i], kTolerance) << "input " << i << (through_graph ? ", through the graph" : "");
      EXPECT_GT(r.norms[i], 1e-8) << "input " << i << " has an all-zero gradient";
    }
  }
}

// attn_logit_max reads only the pairs the softmax sees: B = 1, one head, hs = 4, T = 3, q_i = k_i
// = c_i e_0 with c = (1, 2, 3): S_ij = c_i c_j / 2. All pairs: S_22 = 4.5, causal too (j <= i);
// without key 2 or query 2 the largest left is S_12 = S_21 = 3; causal without query 2: S_11 = 2.
TEST(Attention, LogitMaxReadsThePairsTheSoftmaxSees) {
  std::vector<float> x(12, 0.0f);
  for (int i = 0; i < 3; ++i) x[std::size_t(i) * 4] = float(i + 1);
  const float drop_last[3] = {1, 1, 0};
  auto max = [&](bool causal, const float* keys, const float* queries) {
    return attention_logit_max(AttentionLogits{0, x.data(), x.data(), 4, 4, 1, 1, 3, 3, 4, causal, keys, queries});
  };
  EXPECT_DOUBLE_EQ(max(false, nullptr, nullptr), 4.5);
  EXPECT_DOUBLE_EQ(max(true, nullptr, nullptr), 4.5);
  EXPECT_DOUBLE_EQ(max(false, drop_last, nullptr), 3.0);  // query 2 x key 1: 3 * 2 / 2
  EXPECT_DOUBLE_EQ(max(false, nullptr, drop_last), 3.0);  // query 1 x key 2
  EXPECT_DOUBLE_EQ(max(true, nullptr, drop_last), 2.0);   // query 1 sees keys 0, 1 only
  x[4] = -5.0f;                                           // q_1 = k_1 = -5 e_0: |S_11| = 12.5
  EXPECT_DOUBLE_EQ(max(true, nullptr, nullptr), 12.5);
}

// Soft-capped scores (model.attn_softcap, Gemma 2): self (causal and not) and cross-attention with a cap
// of 0.7, well inside tanh's bend for these scores, against the definition; and the cap changes them.
TEST(Attention, SoftCappedScoresEqualPlainSum) {
  const int B = 2, T = 37, Tq = 5, NH = 2, hs = 3, C = NH * hs;
  const double cap = 0.7;
  const std::vector<float> mask = padding_mask(B, T, {37, 20});
  Input qkv = random_input(B * T, 3 * C, 1, 2.0), q = random_input(B * Tq, C, 2, 2.0);
  const double* d = qkv.data.data();
  for (const bool causal : {false, true}) {
    Graph<double> g(true, false);
    const Tensor<double> o = self_attention(g, qkv.tensor(), B, T, NH, causal, mask.data(), cap);
    expect_equal(plain_attention(d, 3 * C, d + C, d + 2 * C, 3 * C, B, T, T, NH, hs, mask, causal, cap), o);
    const std::vector<double> uncapped =
        plain_attention(d, 3 * C, d + C, d + 2 * C, 3 * C, B, T, T, NH, hs, mask, causal);
    double moved = 0;
    for (std::size_t i = 0; i < uncapped.size(); ++i) moved = std::max(moved, std::abs(uncapped[i] - o.data[i]));
    EXPECT_GT(moved, 0.05) << "the cap must change these scores";
  }
  Graph<double> g(true, false);  // cross: Tq queries of q to the keys and values of qkv's k and v columns
  std::vector<double> kv;
  for (int r = 0; r < B * T; ++r) kv.insert(kv.end(), d + r * 3 * C + C, d + r * 3 * C + 3 * C);
  const Tensor<double> o =
      cross_attention(g, q.tensor(), Tensor<double>{kv.data(), nullptr, B * T, 2 * C}, B, Tq, T, NH, mask.data(), cap);
  expect_equal(plain_attention(q.data.data(), C, kv.data(), kv.data() + C, 2 * C, B, Tq, T, NH, hs, mask, false, cap),
               o);
}

TEST(GradCheck, SoftCappedAttention) {
  const int B = 2, T = 37, Tq = 4, Tk = 6, NH = 2;
  static const std::vector<float> mask = padding_mask(B, T, {37, 23}), kmask = padding_mask(B, Tk, {6, 3});
  expect_gradients_match([](auto& g, auto& t) { return self_attention(g, t[0], B, T, NH, true, mask.data(), 0.7); },
                         {random_input(B * T, 3 * NH * 2, 1, 2.0)});
  expect_gradients_match(
      [](auto& g, auto& t) { return cross_attention(g, t[0], t[1], B, Tq, Tk, NH, kmask.data(), 0.7); },
      {random_input(B * Tq, NH * 2, 2, 2.0), random_input(B * Tk, 2 * NH * 2, 3, 2.0)});
  expect_gradients_match(
      [](auto& g, auto& t) { return multi_head_attention(g, t[0], t[1], t[2], B, Tk, Tk, NH, true, nullptr, 0.7); },
      {random_input(B * Tk, NH * 2, 4, 2.0), random_input(B * Tk, NH * 2, 5, 2.0), random_input(B * Tk, NH * 2, 6)});
}

TEST(GradCheck, BidirectionalSelfAttentionMasked) {
  const int B = 2, T = 37, NH = 2;
  static const std::vector<float> mask = padding_mask(B, T, {37, 23});
  expect_gradients_match([](auto& g, auto& t) { return self_attention(g, t[0], B, T, NH, false, mask.data()); },
                         {random_input(B * T, 3 * NH * 2, 1)});
}

TEST(GradCheck, CausalSelfAttentionMasked) {
  const int B = 2, T = 6, NH = 2;
  static const std::vector<float> mask = padding_mask(B, T, {6, 4});
  expect_gradients_match([](auto& g, auto& t) { return self_attention(g, t[0], B, T, NH, true, mask.data()); },
                         {random_input(B * T, 3 * NH * 2, 1)});
}

TEST(GradCheck, CrossAttentionMasked) {
  const int B = 2, Tq = 35, Tk = 7, NH = 2;
  static const std::vector<float> mask = padding_mask(B, Tk, {7, 3});
  expect_gradients_match([](auto& g, auto& t) { return cross_attention(g, t[0], t[1], B, Tq, Tk, NH, mask.data()); },
                         {random_input(B * Tq, NH * 2, 1), random_input(B * Tk, 2 * NH * 2, 2)});
}

TEST(GradCheck, CrossAttentionAcrossColumnBlocks) {  // Tk = 40: a block of 32 key columns and a partial one
  const int B = 1, Tq = 3, Tk = 40, NH = 1;
  expect_gradients_match([](auto& g, auto& t) { return cross_attention(g, t[0], t[1], B, Tq, Tk, NH, nullptr); },
                         {random_input(B * Tq, 3, 1), random_input(B * Tk, 6, 2)});
}

// The one-pass path for small heads (ops/attention_one_pass.cpp): hs = 8 and Tk up to 16 take it in
// double with AVX-512 and with AVX2 (each test checks that they do); Tk 45 and 61, six and eight
// vectors of keys, the scores in two passes of four vectors, with AVX-512 only (with AVX2 they test
// the blocked products). Tq = 7 and 13 leave a partial block of four query rows; Tk = 13 pads the
// scores to whole vectors; a sequence with no key left (length 0), padding keys, causal rows and two
// heads read in place.
constexpr int kSmallHs = 8;
struct OnePassSizes {
  int T, Tq, Tk;
};
constexpr OnePassSizes kOnePassSizes[] = {{13, 7, 11}, {45, 7, 61}};

TEST(Attention, OnePassEqualsPlainSum) {
  const int B = 3, NH = 2, hs = kSmallHs, C = NH * hs;
  ASSERT_TRUE(attention_in_one_pass<double>(hs, 13, 0));
  for (const auto [T, Tq, Tk] : kOnePassSizes) {
    SCOPED_TRACE(testing::Message() << "T " << T << ", Tk " << Tk
                                    << (attention_in_one_pass<double>(hs, Tk, 0) ? ", one pass" : ", blocked"));
    const std::vector<float> mask = padding_mask(B, T, {T, 5, 0});
    Input qkv = random_input(B * T, 3 * C, 1, 2.0);
    const double* d = qkv.data.data();
    for (const bool causal : {false, true}) {
      SCOPED_TRACE(causal ? "causal" : "bidirectional");
      Graph<double> g(true, false);
      expect_equal(plain_attention(d, 3 * C, d + C, d + 2 * C, 3 * C, B, T, T, NH, hs, mask, causal),
                   self_attention(g, qkv.tensor(), B, T, NH, causal, mask.data()));
    }
    const std::vector<float> kmask = padding_mask(B, Tk, {Tk, 0, 4});
    Input q = random_input(B * Tq, C, 2, 2.0), kv = random_input(B * Tk, 2 * C, 3, 2.0);
    Graph<double> g(true, false);
    const double* k = kv.data.data();
    expect_equal(plain_attention(q.data.data(), C, k, k + C, 2 * C, B, Tq, Tk, NH, hs, kmask, false),
                 cross_attention(g, q.tensor(), kv.tensor(), B, Tq, Tk, NH, kmask.data()));
  }
}

// In float, as the models run it (hs 16 and 32, up to 128 keys with AVX-512): within float's rounding
// of the plain sum in double, cross-attention over 41 and 100 keys and causal self-attention over 128.
TEST(Attention, OnePassInFloatIsCloseToPlainSum) {
  const int B = 2, Tq = 23;
  auto expect_close = [](const std::vector<double>& want, Tensor<float> got, const char* what) {
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.data[i], want[i], 2e-6) << what << ", element " << i;
  };
  for (const int hs : {16, 32}) {
    SCOPED_TRACE(testing::Message() << "hs " << hs);
    const int NH = 2, C = NH * hs;
    for (const int Tk : {41, 100}) {
      const std::vector<float> kmask = padding_mask(B, Tk, {Tk, 17});
      Input q = random_input(B * Tq, C, 4, 1.0), kv = random_input(B * Tk, 2 * C, 5, 1.0);
      std::vector<float> qf(q.data.begin(), q.data.end()), kvf(kv.data.begin(), kv.data.end());
      std::vector<double> qd(qf.begin(), qf.end()), kvd(kvf.begin(), kvf.end());
      Graph<float> g(true, false);
      expect_close(plain_attention(qd.data(), C, kvd.data(), kvd.data() + C, 2 * C, B, Tq, Tk, NH, hs, kmask, false),
                   cross_attention(g, Tensor<float>{qf.data(), nullptr, B * Tq, C},
                                   Tensor<float>{kvf.data(), nullptr, B * Tk, 2 * C}, B, Tq, Tk, NH, kmask.data()),
                   Tk == 41 ? "41 keys" : "100 keys");
    }
    const int T = 128;
    const std::vector<float> mask = padding_mask(B, T, {T, 90});
    Input qkv = random_input(B * T, 3 * C, 6, 1.0);
    std::vector<float> f(qkv.data.begin(), qkv.data.end());
    std::vector<double> d(f.begin(), f.end());
    Graph<float> g(true, false);
    expect_close(plain_attention(d.data(), 3 * C, d.data() + C, d.data() + 2 * C, 3 * C, B, T, T, NH, hs, mask, true),
                 self_attention(g, Tensor<float>{f.data(), nullptr, B * T, 3 * C}, B, T, NH, true, mask.data()),
                 "causal, 128");
  }
}

TEST(GradCheck, OnePassAttention) {
  const int B = 2, NH = 2, hs = kSmallHs, C = NH * hs;
  for (const auto [T, Tq, Tk] : kOnePassSizes) {
    SCOPED_TRACE(testing::Message() << "T " << T << ", Tk " << Tk);
    const std::vector<float> mask = padding_mask(B, T, {T, 6}), kmask = padding_mask(B, Tk, {Tk, 4});
    for (const bool causal : {false, true}) {
      SCOPED_TRACE(causal ? "causal" : "bidirectional");
      expect_gradients_match(
          [&mask, causal, T = T](auto& g, auto& t) { return self_attention(g, t[0], B, T, NH, causal, mask.data()); },
          {random_input(B * T, 3 * C, 1)});
    }
    expect_gradients_match(
        [&kmask, Tq = Tq, Tk = Tk](auto& g, auto& t) {
          return cross_attention(g, t[0], t[1], B, Tq, Tk, NH, kmask.data());
        },
        {random_input(B * Tq, C, 2), random_input(B * Tk, 2 * C, 3)});
    expect_gradients_match(  // q, k, v three tensors, each gradient its own
        [&kmask, Tq = Tq, Tk = Tk](auto& g, auto& t) {
          return multi_head_attention(g, t[0], t[1], t[2], B, Tq, Tk, NH, false, kmask.data());
        },
        {random_input(B * Tq, C, 4), random_input(B * Tk, C, 5), random_input(B * Tk, C, 6)});
  }
}

// With a query mask (the models' padded batches, Sequence::real): a padding query's output row is
// 0, every other row the plain sum; by central differences its gradients too. T 13 and 45 take the
// one-pass path in double with AVX-512, 70 keys the blocked products (and hs 3 in the gradients);
// a batch row has its real queries not a prefix (the rule is the mask, not where the padding starts).
TEST(Attention, PaddingQueriesReadNothing) {
  const int B = 3, NH = 2;
  auto masks = [](int T) {
    std::pair<std::vector<float>, std::vector<float>> m{padding_mask(B, T, {T, 5, 9}), {}};
    m.second = m.first;
    m.second[std::size_t(2) * T + 3] = 0.0f;
    return m;
  };
  for (const int T : {13, 45, 70}) {
    SCOPED_TRACE(testing::Message() << "T " << T);
    const int hs = kSmallHs, C = NH * hs;
    const auto [keys, queries] = masks(T);
    Input qkv = random_input(B * T, 3 * C, 1, 2.0);
    const double* d = qkv.data.data();
    for (const bool causal : {false, true}) {
      std::vector<double> want = plain_attention(d, 3 * C, d + C, d + 2 * C, 3 * C, B, T, T, NH, hs, keys, causal);
      for (std::size_t i = 0; i < want.size(); ++i)
        if (queries[i / C] == 0.0f) want[i] = 0;
      Graph<double> g(true, false);
      expect_equal(want, self_attention(g, qkv.tensor(), B, T, NH, causal, keys.data(), 0, queries.data()));
    }
  }
  const int T = 13, Tk = 11;
  const auto [keys, queries] = masks(T);
  const std::vector<float> kmask = padding_mask(B, Tk, {Tk, 0, 4});
  for (const int hs : {kSmallHs, 3}) {
    SCOPED_TRACE(attention_in_one_pass<double>(hs, T, 0) ? "one pass" : "blocked");
    const int C = NH * hs;
    for (const bool causal : {false, true})
      expect_gradients_match(
          [&, causal](auto& g, auto& t) {
            return self_attention(g, t[0], B, T, NH, causal, keys.data(), 0, queries.data());
          },
          {random_input(B * T, 3 * C, 2)});
    expect_gradients_match(
        [&](auto& g, auto& t) { return cross_attention(g, t[0], t[1], B, T, Tk, NH, kmask.data(), 0, queries.data()); },
        {random_input(B * T, C, 3), random_input(B * Tk, 2 * C, 4)});
  }
}

// In float, as the models run it: the real rows of o, and every gradient where dO is 0 on the
// padding queries (after a masked loss), have the bits they have without the query mask; the
// padding's rows are 0 (they were sums of zeros). Causal and bidirectional self-attention, cross-attention.
TEST(Attention, PaddingQueriesKeepTheRealRowsBits) {
  const int B = 3, NH = 2, hs = 16, C = NH * hs, T = 45, Tk = 37;
  const std::vector<float> mask = padding_mask(B, T, {T, 23, 9}), kmask = padding_mask(B, Tk, {30, 37, 4});
  const Input x = random_input(B * T, 3 * C, 7, 1.0), kv = random_input(B * Tk, 2 * C, 8, 1.0);
  enum Kind { bidirectional, causal, cross };
  auto run = [&](Kind kind, const float* queries, bool add) {
    Graph<float> g;
    std::vector<float> a(x.data.begin(), x.data.end()), b(kv.data.begin(), kv.data.end());
    std::vector<float> da(a.size(), 0.25f), db(b.size(), 0.25f);  // the caller's gradients: added to
    const int cols = kind == cross ? C : 3 * C;
    Tensor<float> ta{a.data(), da.data(), B * T, cols}, tb{b.data(), db.data(), B * Tk, 2 * C};
    if (!add) {  // the graph's own tensors: their gradients written first
      ta = g.tensor(B * T, cols, true), tb = g.tensor(B * Tk, 2 * C, true);
      std::copy_n(a.data(), ta.size(), ta.data), std::copy_n(b.data(), tb.size(), tb.data);
    }
    const Tensor<float> o = kind == cross ? cross_attention(g, ta, tb, B, T, Tk, NH, kmask.data(), 0, queries)
                                          : self_attention(g, ta, B, T, NH, kind == causal, mask.data(), 0, queries);
    std::vector<float> out(o.data, o.data + o.size());
    float* dO = g.seed(o);
    for (int64_t i = 0; i < o.size(); ++i) dO[i] = mask[i / C] != 0.0f ? std::sin(0.37f * float(i)) : 0.0f;
    g.backward(Tensor<float>{});
    out.insert(out.end(), ta.grad, ta.grad + ta.size());
    if (kind == cross) out.insert(out.end(), tb.grad, tb.grad + tb.size());
    return out;
  };
  for (const auto& [kind, add] : {std::pair{bidirectional, false}, {causal, false}, {cross, false}, {bidirectional, true},
                                  {causal, true}, {cross, true}}) {
    SCOPED_TRACE(testing::Message() << (kind == cross ? "cross" : kind == causal ? "causal" : "bidirectional")
                                    << (add ? ", added to" : ", written first"));
    const std::vector<float> skipped = run(kind, mask.data(), add), all = run(kind, nullptr, add);
    ASSERT_EQ(skipped.size(), all.size());
    int padding_rows_differ = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const bool padding_output = i < std::size_t(B) * T * C && mask[i / C] == 0.0f;
      if (padding_output) {
        EXPECT_EQ(skipped[i], 0.0f) << "o entry " << i;
        padding_rows_differ += all[i] != 0.0f;
      } else {
        EXPECT_EQ(skipped[i], all[i]) << "value " << i;  // 0 and -0 alike: a padding row's gradient
        if (skipped[i] != 0.0f) {
          EXPECT_EQ(std::bit_cast<uint32_t>(skipped[i]), std::bit_cast<uint32_t>(all[i])) << "value " << i;
        }
      }
    }
    EXPECT_GT(padding_rows_differ, 0) << "the padding queries were computed: the test shows nothing";
  }
}

// A padded batch row in the one-pass heads (stopped at its last real query and at the vector of its
// last real key) against the same row without its padding: o and every gradient at the real rows
// have the same bits. 45 positions with 30 real, and 29 with 20 (key vectors cut with AVX2's
// eight lanes); a size the one-pass heads do not take here is left out.
TEST(Attention, PaddingGivesTheBitsOfTheRowWithoutIt) {
  const int NH = 2, hs = 16, C = NH * hs;
  int sizes = 0;
  for (const auto& [T, real] : {std::pair{45, 30}, {29, 20}}) {
    if (!attention_in_one_pass<float>(hs, T, 0)) continue;
    ++sizes;
    SCOPED_TRACE(testing::Message() << real << " of " << T);
    const std::vector<float> mask = padding_mask(1, T, {real});
    const Input x = random_input(T, 3 * C, 9, 1.0), q = random_input(12, C, 10, 1.0);
    // self-attention (bidirectional and causal) and cross-attention of 12 queries over the row's keys
    auto run = [&](int kind, int n, const float* m) {
      Graph<float> g;
      const int cols = kind == 2 ? 2 * C : 3 * C;
      const Tensor<float> a = g.tensor(n, cols, true), qt = g.tensor(12, C, true);
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < cols; ++c) a.data[i * cols + c] = float(x.data[std::size_t(i) * 3 * C + c]);
      std::copy(q.data.begin(), q.data.end(), qt.data);
      const Tensor<float> o = kind == 2 ? cross_attention(g, qt, a, 1, 12, n, NH, m)
                                        : self_attention(g, a, 1, n, NH, kind == 1, m, 0, m);
      float* dO = g.seed(o);
      for (int64_t i = 0; i < o.size(); ++i) dO[i] = kind == 2 || i / C < real ? std::sin(0.41f * float(i)) : 0.0f;
      std::vector<float> out(o.data, o.data + (kind == 2 ? o.size() : int64_t(real) * C));
      g.backward(Tensor<float>{});
      out.insert(out.end(), a.grad, a.grad + int64_t(real) * cols);
      if (kind == 2) out.insert(out.end(), qt.grad, qt.grad + qt.size());
      return out;
    };
    for (const int kind : {0, 1, 2}) {
      SCOPED_TRACE(kind == 2 ? "cross" : kind == 1 ? "causal" : "bidirectional");
      const std::vector<float> padded = run(kind, T, mask.data()), alone = run(kind, real, nullptr);
      ASSERT_EQ(padded.size(), alone.size());
      for (std::size_t i = 0; i < padded.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(padded[i]), std::bit_cast<uint32_t>(alone[i])) << "value " << i;
    }
  }
  EXPECT_GT(sizes, 0) << "no size takes the one-pass heads here";
}

TEST(Golden, MaskedSelfAndCrossAttention) {
  Golden ref("attention_masked");
  const auto& c = ref.config();
  const int B = c["B"], T = c["T"], Tq = c["Tq"], Tk = c["Tk"], C = c["C"], NH = c["NH"];
  auto qkv = ref.leaf("qkv", B * T, 3 * C), q = ref.leaf("q", B * Tq, C), kv = ref.leaf("kv", B * Tk, 2 * C);
  const std::vector<float> mask = ref.values("mask"), xmask = ref.values("xmask");
  Graph<float> g;
  Tensor<float> o = self_attention(g, qkv.tensor(), B, T, NH, false, mask.data());
  Tensor<float> xo = cross_attention(g, q.tensor(), kv.tensor(), B, Tq, Tk, NH, xmask.data());
  seed_gradient(g, o, ref.values("dout"));
  seed_gradient(g, xo, ref.values("xdout"));
  g.backward(Tensor<float>{});
  ref.expect_close("o", o.data);
  ref.expect_close("dqkv", qkv.grad.data());
  ref.expect_close("xo", xo.data);
  ref.expect_close("dq", q.grad.data());
  ref.expect_close("dkv", kv.grad.data());
}

}  // namespace
}  // namespace nt::test
