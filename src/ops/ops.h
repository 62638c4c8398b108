// The differentiable ops, as functions of a Graph. Each takes its inputs, returns its output,
// and (when a gradient must flow) records its backward on the graph's tape. Forward and
// backward of each op sit side by side in the .cpp named after it. T is float for training
// and double for gradient checks and the exact invariance tables; both are instantiated.
//
// Shapes: N rows of C features; a sequence batch is N = B*T rows; attention heads use
// (B*NH*T, hs) with hs = C / NH. An empty Tensor (data == nullptr) means "absent" where an
// argument is optional (a bias, a mask).
#pragma once
#include "ops/activation_kind.h"
#include <cstdint>

#include "core/graph.h"
#include "core/number_format.h"

namespace nt {

// Which rows of a (rows, C) tensor an op reads or writes: row i is index[i] (the caller's array,
// which the op copies for its backward), or first + i * stride when there is none.
struct Rows {
  int first = 0, stride = 1;
  const int* index = nullptr;
  int64_t operator[](int i) const { return index ? index[i] : first + int64_t(i) * stride; }
  // Rows 0 .. count - 1 all in [0, limit) (or, by index, -1 with zero_rows: take_rows's zero row)
  bool inside(int count, int64_t limit, bool zero_rows = false) const {
    bool ok = stride >= 1 && (index || first >= 0);
    for (int i = 0; ok && i < count; ++i) {
      const int64_t r = (*this)[i];
      ok = r < limit && (r >= 0 || (zero_rows && index && r == -1));
    }
    return ok;
  }
  // No row named twice, as the rows an op writes or scatters gradients to must be (a row named
  // twice would lose one of its writes): an index strictly increasing
  bool increasing(int count) const {
    for (int i = 1; index && i < count; ++i)
      if (index[i] <= index[i - 1]) return false;
    return true;
  }
};

// linear.cpp: y = x W^T + b.  x (N, in), W (out, in), b (1, out) or absent -> y (N, out)
template <class T> Tensor<T> linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b);
// The same for x's rows the rows batch_rows[i] (increasing) of a batch of `batch` rows, the others absent (a
// recurrence's sequences that have ended): b's gradient is summed as over the whole batch with
// the absent rows' 0, so its bits are those of the product over every row.
template <class T>
Tensor<T> linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b, const int* batch_rows, int batch);
// The same by a weight every step of a recurrence multiplies by (its U h): W's panels for the
// product and for dx prepared once a graph (core/gemm.h), by the first step that needs them, and
// read by the others; the same bits.
template <class T>
Tensor<T> step_linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b, const int* batch_rows = nullptr,
                      int batch = 0);

// The real rows of a padded batch of N rows, index[0..count) increasing (index null: every row).
// Ops given them compute those rows alone.
struct RealRows {
  const int* index = nullptr;
  int count = 0;
};
// rows.cpp: the rows of an N-row batch that `mask` marks real (non-zero), kept on g's tape; none
// listed when mask is null or every row is real.
template <class T> RealRows real_rows(Graph<T>& g, const float* mask, int N);
// The same over a padded batch's real rows: a padding row of y is b (0 without b) and sends no
// gradient to x; W's gradient sums the real rows' terms (the padding's are 0 when its dy is, as
// after a masked loss: then the bits are the product's over every row, each entry one chain of
// fused multiply-adds in normtool's kernel, core/gemm_kernel.cpp), b's sums dy over every row.
template <class T> Tensor<T> linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b, RealRows real);

// elementwise.cpp: b broadcasts to a's shape from (N, C), (N, 1), (1, C) or (1, 1).
template <class T> Tensor<T> add(Graph<T>& g, Tensor<T> a, Tensor<T> b);
template <class T> Tensor<T> mul(Graph<T>& g, Tensor<T> a, Tensor<T> b);
template <class T> Tensor<T> scale(Graph<T>& g, Tensor<T> a, T s);               // s * a
template <class T> Tensor<T> shift(Graph<T>& g, Tensor<T> a, T t);               // a + t
template <class T> Tensor<T> axpby(Graph<T>& g, T alpha, Tensor<T> a, Tensor<T> b);  // alpha*a + b, same shape
template <class T> Tensor<T> rsqrt(Graph<T>& g, Tensor<T> a, T eps);              // 1 / sqrt(a + eps)
// alpha x + f + b, b (1, C) on every row: a residual connection with the bias of f's last
// Linear folded in; x and f (N, C).
template <class T> Tensor<T> residual(Graph<T>& g, T alpha, Tensor<T> x, Tensor<T> f, Tensor<T> b);

// activation.cpp
template <class T> Tensor<T> relu(Graph<T>& g, Tensor<T> x);
template <class T> Tensor<T> gelu(Graph<T>& g, Tensor<T> x);  // exact: x * Phi(x)
template <class T> Tensor<T> tanh(Graph<T>& g, Tensor<T> x);
template <class T> Tensor<T> silu(Graph<T>& g, Tensor<T> x);  // x sigmoid(x)
// cap tanh(x / cap), composed of scale and tanh: Gemma 2's soft-capping of the output logits; cap <= 0: x
template <class T> Tensor<T> soft_cap(Graph<T>& g, Tensor<T> x, T cap);
template <class T> Tensor<T> activation(Graph<T>& g, Tensor<T> x, Activation a);
// act(x + b), b (1, C) on every row: a Linear's bias folded into the activation after it.
template <class T> Tensor<T> bias_activation(Graph<T>& g, Tensor<T> x, Tensor<T> b, Activation a);

// softmax.cpp: over the last axis (each row)
template <class T> Tensor<T> softmax(Graph<T>& g, Tensor<T> x);

// cross_entropy.cpp: mean over the rows whose weight is non-zero of -log softmax(logits)[target].
// logits (N, V); targets N ids; weight (N, 1) of 0/1 or absent (all rows count) -> (1, 1).
template <class T>
Tensor<T> cross_entropy(Graph<T>& g, Tensor<T> logits, const int32_t* targets, Tensor<T> weight);

// embedding.cpp: rows of table (V, C) picked by ids (N) -> (N, C)
template <class T> Tensor<T> embedding(Graph<T>& g, Tensor<T> table, const int32_t* ids, int n);

// reduce.cpp: axis 0 -> (1, C), axis 1 -> (N, 1), axis -1 -> (1, 1)
template <class T> Tensor<T> sum(Graph<T>& g, Tensor<T> x, int axis = -1);
template <class T> Tensor<T> mean(Graph<T>& g, Tensor<T> x, int axis = -1);

// layout.cpp: the same memory seen as (rows, cols); shares data and gradient, records nothing.
template <class T> Tensor<T> reshape(Tensor<T> x, int rows, int cols);

// layout.cpp: (B*T, NH*hs) <-> (B*NH*T, hs), the transposes multi-head attention needs.
template <class T> Tensor<T> split_heads(Graph<T>& g, Tensor<T> x, int B, int T_, int NH);
template <class T> Tensor<T> merge_heads(Graph<T>& g, Tensor<T> x, int B, int T_, int NH);

// attention.cpp: scaled-dot-product attention per head (causal, bidirectional, cross).
// q, k, v (BH*T, hs) -> softmax(q k^T / sqrt(hs) + causal mask) v, (BH*T, hs).
template <class T> Tensor<T> causal_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int BH, int T_);
// The same for qkv (B*T, 3*NH*hs), q, k and v side by side as one product writes them, heads read
// in place -> (B*T, NH*hs): equal to merge_heads(causal_attention(split_heads(q), split_heads(k),
// split_heads(v))) without the copies.
template <class T> Tensor<T> causal_self_attention(Graph<T>& g, Tensor<T> qkv, int B, int T_, int NH);
// Self-attention on qkv laid out as above, causal (decoder) or not (encoder), keys limited by
// key_mask (B*T, 1 per real token, 0 per padding; nullptr: every key) -> (B*T, NH*hs). cap > 0:
// the scores soft-capped, cap tanh(scores / cap), before the mask and the softmax (Gemma 2).
// query_mask (B*T, 0 per padding query; nullptr: none): a padding query's output row is 0 and
// takes no gradient, and the heads skip the rows past the last real query and the keys past the
// last real key, the same bits in every other row.
template <class T>
Tensor<T> self_attention(Graph<T>& g, Tensor<T> qkv, int B, int T_, int NH, bool causal, const float* key_mask,
                         double cap = 0, const float* query_mask = nullptr);
// Cross-attention: queries q (B*Tq, NH*hs) from one sequence, keys and values kv (B*Tk, 2*NH*hs),
// k and v side by side, from another; key_mask (B*Tk), cap and query_mask (B*Tq) as above -> (B*Tq,
// NH*hs). Not causal.
template <class T>
Tensor<T> cross_attention(Graph<T>& g, Tensor<T> q, Tensor<T> kv, int B, int Tq, int Tk, int NH, const float* key_mask,
                          double cap = 0, const float* query_mask = nullptr);

// q (B*Tq, NH*hs), k, v (B*Tk, NH*hs) as three tensors (queries and keys normalized per head,
// model.qk_norm), heads read in place; causal (Tq == Tk) or not, key_mask, cap and query_mask as above
// -> (B*Tq, NH*hs).
template <class T>
Tensor<T> multi_head_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int B, int Tq, int Tk, int NH,
                               bool causal, const float* key_mask, double cap = 0, const float* query_mask = nullptr);
// Whether heads of hs features over Tk keys run attention's one-pass path (no soft cap; hs whole
// vectors of T, at most four; Tk at most eight vectors with AVX-512, four with AVX2) instead of its
// blocked products.
template <class T> bool attention_in_one_pass(int hs, int Tk, double cap);
// rotary.cpp: rotary position embedding (RoPE), GPT-NeoX's half split: in each head of hs features of
// columns [0, rotated) of x (B*T_, cols), feature i < hs/2 and i + hs/2 turned by the angle
// t * base^(-2i/hs), t = row % T_; the other columns copied -> (B*T_, cols).
template <class T> Tensor<T> rotary(Graph<T>& g, Tensor<T> x, int T_, int hs, int rotated, double base);
// rows.cpp: one time step's rows of a batch-major (B*T, C) sequence, rows[i] for i < count (Rows).
// take_rows -> (count, C), a zero row where an index is -1; put_rows writes x (count, C) into the
// graph tensor y (made with a gradient), its rows increasing.
template <class T> Tensor<T> take_rows(Graph<T>& g, Tensor<T> x, Rows rows, int count);
template <class T> void put_rows(Graph<T>& g, Tensor<T> y, Tensor<T> x, Rows rows);
// rows.cpp: x (B*S, C) -> (B, C), row b the mean of the rows b*S + j whose mask[b*S + j] is non-zero.
template <class T> Tensor<T> masked_mean_rows(Graph<T>& g, Tensor<T> x, const float* mask, int B, int S);
// layout.cpp: a (N, Ca), b (N, Cb) -> [a, b] (N, Ca + Cb).
template <class T> Tensor<T> concat_cols(Graph<T>& g, Tensor<T> a, Tensor<T> b);
// additive_attention.cpp: Bahdanau's attention as Nematus computes it, per query row i of batch
// row b = batch_rows[i] (increasing; i when null) over the keys j with key_mask[b*S + j] non-zero:
// e_j = v . tanh(keys_j + query_i), alpha = softmax(e), y_i = sum_j alpha_j values_j.
// keys (B*S, D), query (N, D), v (1, D), values (B*S, C) -> (N, C).
template <class T>
Tensor<T> additive_attention(Graph<T>& g, Tensor<T> keys, Tensor<T> query, Tensor<T> v, Tensor<T> values,
                             const float* key_mask, int S, const int* batch_rows = nullptr);

// gru.cpp: h' = u h + (1 - u) tanh(cx + r ch), [r, u] = sigmoid(gx + gh); gx, gh (N, 2H), cx, ch,
// h (N, H) -> (N, H). The GRU transition of model/blocks/gru.h.
template <class T>
Tensor<T> gru_transition(Graph<T>& g, Tensor<T> gx, Tensor<T> gh, Tensor<T> cx, Tensor<T> ch, Tensor<T> h);
// gru_transition_rows: the same with gx, cx the rows rows[n] of the sequences gx_seq (rows, 2H),
// cx_seq (rows, H): take_rows then gru_transition in one op, the same bits.
template <class T>
Tensor<T> gru_transition_rows(Graph<T>& g, Tensor<T> gx_seq, Tensor<T> cx_seq, Rows rows, Tensor<T> gh, Tensor<T> ch,
                              Tensor<T> h);

// lstm.cpp: the LN-LSTM's pointwise steps, gates a = xg + hg (N, 4H) as [f, i, o, g]:
// lstm_cell c' = sigmoid(f) c + sigmoid(i) tanh(g); lstm_output h' = sigmoid(o) tanh(cn).
template <class T> Tensor<T> lstm_cell(Graph<T>& g, Tensor<T> xg, Tensor<T> hg, Tensor<T> c);
template <class T> Tensor<T> lstm_output(Graph<T>& g, Tensor<T> xg, Tensor<T> hg, Tensor<T> cn);

// cast.cpp: x (graph memory) rounded in place to the number format p, and its gradient rounded
// the same way in backward: a value stored between ops at train.precision. fp32: x untouched.
Tensor<float> cast(Graph<float>& g, Tensor<float> x, Precision p);

}  // namespace nt
