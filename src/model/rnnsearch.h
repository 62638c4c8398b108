// RNNSearch, the GRU encoder-decoder with attention of the RMSNorm paper, in Nematus v0.3's layout
// (nematus/model.py and layers.py, nematus_compat false), at the config's sizes: E = model.d_emb,
// H = model.d_model (the state), annotations and attention 2H wide.
//
//   encoder, over the source s (B*S bytes):
//     x = src_emb[s]                                         (B*S, E)
//     forward and backward GRU over x, the state 0 at each end, its rows 0 on padding (each step
//     runs the rows real there alone: model/live_rows.h)
//     annotation_j = [forward_j; backward_j]                 (B*S, 2H)
//   s_0 = tanh(norm(W_i mean_j(annotation_j) + b_i))         the mean over real positions (B, H)
//   decoder, over its input y = BOS + target (B*T), each step over the rows real there:
//     s1 = GRU1(tgt_emb[y_{t-1}], s_{t-1})                   sites dec1.state_gates, dec1.state_cand
//     c_t = attention(annotations, s1)                       (model/blocks/additive_attention.h)
//     s_t = GRU2(c_t, s1)                                    sites dec2.state_gates, dec2.state_cand
//   o_t = tanh(norm(W_s s_t + b_s + W_y tgt_emb[y_{t-1}] + W_c c_t))    the readout (B*T, E)
//   logits = W_o o_t + b_o
// with the GRU transition of model/blocks/gru.h and its four norm sites (identities for none).
// RnnSearchNet<T> is this computation on Tensor views, for float (the model, rnnsearch.cpp) and
// double (the gradient checks).
#pragma once
#include <cstdint>
#include <vector>

#include "model/blocks/additive_attention.h"
#include "model/blocks/gru.h"
#include "model/live_rows.h"

namespace nt {

template <class T>
struct RnnSearchNet {
  Tensor<T> src_emb, tgt_emb;               // (V, E) each
  GruCell<T> enc_fwd, enc_bwd;              // E -> H
  Tensor<T> W_i, b_i;                       // (H, 2H), (1, H) or absent
  RowNorm<T> norm_init;                     // H
  GruCell<T> dec1, dec2;                    // E -> H, 2H -> H
  AttentionCell<T> attention;               // keys and query 2H wide
  Tensor<T> W_s, b_s, W_y, W_c;             // (E, H), (1, E) or absent, (E, E), (E, 2H)
  RowNorm<T> norm_out;                      // E
  Tensor<T> W_o, b_o;                       // (V, E), (1, V) or absent
  // The products over whole sequences (the GRUs' input terms, the keys, the readout and the head)
  // run over the real rows alone: a padding row is then the norm of its bias (of 0 where there is
  // none), which no step, no attention and no loss reads, so every real value keeps its bits in
  // normtool's kernel (ops linear over RealRows). The model sets it as the Stack does
  // (may_skip_padding, model/norm_site.h).
  bool skip_padding = false;

  struct Input {
    int B;
    const int32_t* src;     // (B*S) source bytes, right-padded
    const float* src_mask;  // (B*S) 1 on real source bytes
    int S;
    const int32_t* tgt;     // (B*Tt) the decoder's input, BOS + target
    int Tt;
    const float* tgt_mask = nullptr;  // (B*Tt) 1 on real targets (right-padded); null: all real
  };
  // The decoder's two GRU steps at each target position (over the rows dec says), and the rows
  // each recurrence runs at each step.
  struct Steps {
    std::vector<typename GruCell<T>::Step> dec1, dec2;
    LiveRows enc_fwd, enc_bwd, dec;
  };
  // logits (B*T, V); at a padded target position b_o with skip_padding, else from a zero state and
  // context; `steps` is rebuilt.
  Tensor<T> logits(Graph<T>& g, const Input& in, Steps& steps) const;

  // The annotations (B*S, 2H), 0 at padded positions; src_real the source's real rows (or none).
  Tensor<T> encode(Graph<T>& g, const Input& in, Steps& steps, RealRows src_real) const;
};

}  // namespace nt
