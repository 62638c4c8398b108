// A Transformer stack: token and position embeddings, n blocks of residual sub-layers in the
// configured placement, and a final norm in pre placement. The decoder-only model and the encoder
// are one stack; the encoder-decoder is two (scripts/torch_twin.py's Stack):
//
//   x = tok_emb[tokens] + pos_emb[t]                      Embedding (model.position learned; else no pos_emb)
//   embed_norm: x = norm(x)                               site "<stack>embed"
//   each block:
//     x = placement(x, self_attention)                    site "<stack>attn" (causal, or bidirectional;
//                                                          rotary: q and k turned by position, ops/rotary.cpp)
//     with cross: x = placement(x, cross_attention(x, memory))   site "<stack>cross"
//     x = placement(x, feed_forward)                      site "<stack>ffn"
//   pre, peri or reordered with final_norm: x = norm(x)   site "<stack>final"
// placement(x, f) is Residual's (model/blocks/residual.h; peri: its output norms at sites
// "<stack>attn_out", "cross_out", "ffn_out"), with the stack's DeepNorm alpha; DeepNorm draws the
// sub-layers with the stack's beta, postln-init divides them per block (SublayerInit). A padded
// batch whose key mask is its token mask (the encoder, the encoder-decoder's decoder) runs its
// products and attention heads over the real rows alone (Sequence::real), the same bits. Parameters
// are declared, and drawn, in this order: the embeddings; per block its norms (peri: each input
// norm, then its output norm), then its sub-layers (self-attention, cross-attention, feed-forward);
// the final norm, layer n.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "model/blocks/attention.h"
#include "model/blocks/embedding.h"
#include "model/blocks/feed_forward.h"
#include "model/blocks/residual.h"

namespace nt {

// The names a stack gives its parameters ("<prefix>attn_norm.weight") and its norm sites.
// attn_out, cross_out, ffn_out: peri's output norms' sites.
struct StackNames {
  const char *prefix, *embed, *attn, *cross, *ffn, *final, *attn_out, *cross_out, *ffn_out;
};
inline constexpr StackNames kSingleStackNames{"", "embed", "attn", "cross", "ffn", "final",
                                              "attn_out", "cross_out", "ffn_out"};
inline constexpr StackNames kEncoderStackNames{"enc.", "enc.embed", "enc.attn", "enc.cross", "enc.ffn", "enc.final",
                                               "enc.attn_out", "enc.cross_out", "enc.ffn_out"};
inline constexpr StackNames kDecoderStackNames{"dec.", "dec.embed", "dec.attn", "dec.cross", "dec.ffn", "dec.final",
                                               "dec.attn_out", "dec.cross_out", "dec.ffn_out"};

struct StackSpec {
  int vocab;
  int T;             // the longest sequence: the position table's rows
  int n;             // blocks
  AttentionKind self;  // causal_self or self
  bool cross;        // a cross-attention sub-layer in each block (an encoder-decoder's decoder)
  DeepNorm deepnorm;  // the stack's alpha and beta (RunConfig::deepnorm)
  int positions;     // batchnorm's positions (NormSite): T for bn_axes batch, else 1
  StackNames names;
};

class Stack {
 public:
  // Declares the stack's parameters, in the order above.
  Stack(ParamStore<float>& params, const RunConfig& c, const StackSpec& spec);

  // Binds and draws the parameters (after ParamStore::finalize), in the order they were declared.
  void init(ParamStore<float>& params, const ModelConfig& m, Rng& rng);
  void add_buffers(std::vector<std::vector<float>*>& out);  // the norms' running statistics
  void attention_logits(std::vector<AttentionLogits>& out) const;  // each attention's last scores, in order

  // tokens (B*T) -> {x (B*T, C), T, mask, x's real rows}. mask (B*T): the real tokens, for the norms'
  // statistics (nullptr: all);
  // keys: the self-attention's key mask (nullptr: every key); memory: what cross-attention reads.
  // When keys is mask, the products run over the real rows alone (Sequence::real), unless the norms'
  // eps is 0: a padding row of a product is then its bias, 0 at init, and a norm of it 0/0.
  Sequence operator()(Graph<float>& g, const int32_t* tokens, int B, int T, const float* mask, const float* keys,
                      std::vector<SiteCapture>& sites, const Sequence* memory = nullptr);

  int token_table() const { return embed_.token_table(); }  // tok_emb's parameter id (model.tie_embeddings)

  // The parameters of a stack of this spec, as the constructor declares them: the shape's count.
  static int64_t params(const ModelConfig& m, int vocab, int T, int n, bool cross);

 private:
  struct Block {  // declared in this order: the norms, then the sub-layers
    Residual attn_res;
    std::optional<Residual> cross_res;
    Residual ffn_res;
    Attention attn;
    std::optional<Attention> cross;
    FeedForward ffn;
  };

  Precision precision_;
  bool deepnorm_;
  bool skip_padding_;  // products and heads over the real rows (operator()), where may_skip_padding
  double beta_;
  Embedding embed_;
  std::vector<Block> blocks_;
  std::unique_ptr<NormSite> final_norm_;
};

}  // namespace nt
