// The attention sub-layer: multi-head scaled-dot-product attention with its projections.
//
//   attention(x_q, x_kv) = out(sdpa(q(x_q), k(x_kv), v(x_kv))) per head
//   self-attention: x_q = x_kv = x, q, k and v one product of x (their weights one (3C, C) matrix),
//                   heads read in place; causal: position t sees positions <= t
//   cross-attention: queries from one sequence, keys and values from another (an encoder's
//                   output), whose padding the key mask hides
// The bias of `out` is left to the residual connection (Branch). train.precision: the qkv
// product, the attention's output and out's product stored in the run's format (ops/cast.cpp).
#pragma once
#include <string>

#include "model/init.h"
#include "model/layers.h"

namespace nt {

enum class AttentionKind { causal_self, self, cross };

// One sequence batch as attention reads it: x (B*T, C), mask (B*T) 1 for a real token and 0 for
// padding, or nullptr when every position is real.
struct Sequence {
  Tensor<float> x;
  int T;
  const float* mask = nullptr;
};

class Attention {
 public:
  // Declares "<name>.q", ".k", ".v" and ".out" (weight, and bias with `bias`) of `layer`, C = heads * head size.
  Attention(ParamStore<float>& params, AttentionKind kind, const std::string& name, int layer, int C, int heads,
            Precision precision, bool bias = true);

  // Binds the views (after ParamStore::finalize), biases 0, weights as `init` says: q, k, v, out.
  void init(ParamStore<float>& params, const SublayerInit& init, Rng& rng);

  // queries attend to keys: the same Sequence for self-attention. Returns (B*Tq, C) before out's bias.
  Branch operator()(Graph<float>& g, int B, const Sequence& queries, const Sequence& keys) const;

 private:
  AttentionKind kind_;
  int C_, heads_;
  Precision precision_;
  Linear q_, k_, v_, out_;
  Linear qkv_;  // q, k and v joined: one product computes all three
};

}  // namespace nt
