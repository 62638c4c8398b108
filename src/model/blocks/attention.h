// The attention sub-layer: multi-head scaled-dot-product attention with its projections.
//
//   attention(x_q, x_kv) = out(sdpa(q(x_q), k(x_kv), v(x_kv))) per head
//   self-attention: x_q = x_kv = x, q, k and v one product of x (their weights one (3C, C) matrix),
//                   heads read in place; causal: position t sees positions <= t
//   cross-attention: queries from one sequence, keys and values from another (an encoder's
//                   output), whose padding the key mask hides
//   model.qk_norm (Dehghani et al. 2023; Wortsman et al. 2023): q = q_norm(q), k = k_norm(k) per
//                   head over its hs features, before the dot product; q, k and v then three products
//                   and q_norm, k_norm norms of the block's type with one gain (and bias) of hs each,
//                   shared by the heads
//   model.position rotary (self-attention only): q and k of each head turned by position (ops/rotary.cpp),
//                   after q_norm and k_norm
// The bias of `out` is left to the residual connection (Branch). train.precision: the qkv
// product, the attention's output and out's product stored in the run's format (ops/cast.cpp).
#pragma once
#include <optional>
#include <string>

#include "model/init.h"
#include "model/layers.h"
#include "model/norm_site.h"

namespace nt {

enum class AttentionKind { causal_self, self, cross };

// One sequence batch as attention reads it: x (B*T, C), mask (B*T) 1 for a real token and 0 for
// padding, or nullptr when every position is real.
// real: x's real rows when their products may skip the padding's (no real query reads a padding
// row: the key mask hides it), else none listed.
struct Sequence {
  Tensor<float> x;
  int T;
  const float* mask = nullptr;
  RealRows real = {};
};

// What an attention has beyond its shape: Linear biases, the query and key norms, rotary positions,
// the scores' soft cap.
struct AttentionOptions {
  bool bias = true;
  const NormConfig* qk_norm = nullptr;  // model.norm, when model.qk_norm
  bool qk_norm_all = false;             // model.qk_norm_scope all: over q's (k's) C features, not each head's
  double rotary_base = 0;               // > 0: RoPE with that base on q and k (a self-attention's)
  double softcap = 0;                   // > 0: the scores softcap tanh(scores / softcap) (model.attn_softcap)
};

class Attention {
 public:
  // Declares "<name>.q", ".k", ".v" and ".out" (weight, and bias with o.bias) of `layer`, C = heads * head
  // size; with o.qk_norm then "<name>.q_norm.*", "<name>.k_norm.*".
  Attention(ParamStore<float>& params, AttentionKind kind, const std::string& name, int layer, int C, int heads,
            Precision precision, const AttentionOptions& o = {});

  // Binds the views (after ParamStore::finalize), biases 0, weights as `init` says: q, k, v, out.
  void init(ParamStore<float>& params, const SublayerInit& init, Rng& rng);

  // queries attend to keys: the same Sequence for self-attention (queries.mask: the positions the
  // statistics count). Returns (B*Tq, C) before out's bias; keeps its q and k by reference (logits()).
  Branch operator()(Graph<float>& g, int B, const Sequence& queries, const Sequence& keys);

  // The scores of the last call, for attn_logit_max (model.h).
  const AttentionLogits& logits() const { return logits_; }

 private:
  AttentionKind kind_;
  int C_, heads_;
  Precision precision_;
  double rotary_base_;  // 0: no rotary embedding
  double softcap_;      // 0: no soft cap on the scores
  bool qk_norm_all_;    // the query and key norms over C features, not each head's
  Linear q_, k_, v_, out_;
  Linear qkv_;  // q, k and v joined: one product computes all three
  std::optional<NormSite> q_norm_, k_norm_;  // model.qk_norm
  RowNorm<float> q_row_, k_row_;             // their norms as applied (after init)
  AttentionLogits logits_;

  // model.qk_norm's path: q, k, v three products, q and k normalized per head.
  Tensor<float> qk_normed(Graph<float>& g, int B, const Sequence& queries, const Sequence& keys);
  // logits_ = q (rows ldq apart) and k (ldk) of this call
  void keep(int B, const Sequence& queries, const Sequence& keys, const float* q, int ldq, const float* k, int ldk);
};

}  // namespace nt
