// Decoder-only causal Transformer over bytes (model.arch transformer), and the same stack without
// the causal mask as BERT's masked LM (model.arch encoder): one Stack (model/blocks/stack.h) and a head,
//
//   x = tok_emb[tokens] + pos_emb[t]                      Embedding (model.position learned; none and
//                                                          rotary: tok_emb[tokens] alone)
//   embed_norm: x = norm(x)                               (BERT, BLOOM; site "embed")
//   each layer:
//     x = placement(x, attention)                          Residual, Attention (causal self; encoder:
//                                                          bidirectional, keys the real tokens only;
//                                                          rotary: q, k turned by position, ops/rotary.cpp)
//     x = placement(x, feed_forward)                       Residual, FeedForward (glu: SwiGLU, GeGLU)
//   where placement(x, f) is, by model.norm:
//     pre       x + f(norm(x))
//     post      norm(x + f(x))
//     deepnorm  norm(alpha * x + f(x))                     (LayerNorm; DeepNet, Wang et al. 2022)
//     peri      x + norm_out(f(norm(x)))                   (Peri-LN, Kim et al. 2025)
//   depth_scaling: block l's input norms times 1 / sqrt(l) (LayerNorm Scaling, Sun et al. 2025)
//   pre, peri or reordered with final_norm: x = norm(x)
//   logits = head(x)                                       (tie_embeddings: x tok_emb^T + b, GPT-2)
// train.precision bf16/fp16: every value passed between ops is stored in the run's format
// (ops/cast.cpp); inside an op (attention's scores, a norm's statistics, the loss) fp32.
// Init (model/init.h): model.init for every Linear weight and both embeddings, biases 0, gains 1.
// DeepNorm, whatever model.init says: v, out, fc1, fc2 Xavier normal with gain beta, q and k with
// gain 1 (DeepNet's recipe, SublayerInit). Parameters are declared, and drawn, in this order:
// embeddings; per layer the two norms, attention, feed-forward; the final norm; the head.
#include <fmt/format.h>

#include <memory>

#include "model/blocks/stack.h"
#include "norms/norms.h"
#include "model/init.h"
#include "model/layers.h"
#include "model/norm_site.h"
#include "model/shape.h"
#include "ops/ops.h"

namespace nt {

namespace {

class Transformer final : public Model {
 public:
  Transformer(const RunConfig& c, int vocab, bool encoder)
      : precision_(c.train.precision),
        logit_softcap_(float(c.model.logit_softcap)),
        encoder_(encoder),
        stack_(params_, c,
               {vocab, c.data.seq_len, c.model.n_layers, encoder ? AttentionKind::self : AttentionKind::causal_self,
                false, c.deepnorm(), positions_of(c), kSingleStackNames}) {
    const ModelConfig& m = c.model;
    if (!m.tie_embeddings) head_.declare(params_, "head", m.n_layers, m.d_model, vocab, m.bias);
    else if (m.bias) head_.b = params_.add("head.bias", m.n_layers, 1, vocab);
    if (m.tie_embeddings) head_.w = stack_.token_table();  // (V, C): logits = x tok_emb^T + b
    params_.finalize();

    Rng rng(uint64_t(c.seed), 1);
    stack_.init(params_, m, rng);
    head_.bind(params_);
    if (!m.tie_embeddings) init_linear_weight(head_.W, m, rng);
    head_.zero_bias();
    sites_.reserve(2 * m.n_layers + 2);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    const float* mask = batch.real_tokens();
    // the encoder's keys: its real tokens; a causal query never sees the padding after it
    sites_.clear();
    const Tensor<float> x = stack_(g, batch.tokens.data(), batch.B, batch.T, mask, encoder_ ? mask : nullptr, sites_).x;
    return cast(g, soft_cap(g, head_(g, x), logit_softcap_), precision_);
  }

  void attention_logits(std::vector<AttentionLogits>& out) const override { stack_.attention_logits(out); }

  std::vector<std::vector<float>*> buffers() override {
    std::vector<std::vector<float>*> out;
    stack_.add_buffers(out);
    return out;
  }

 private:
  // batchnorm over (B, C) per position (bn_axes batch): a statistic per position
  static int positions_of(const RunConfig& c) {
    const NormConfig& n = c.model.norm;
    return norm_desc(n.type).reduction == Reduction::batch && n.bn_axes == BnAxes::batch ? c.data.seq_len : 1;
  }

  Precision precision_;
  float logit_softcap_;  // model.logit_softcap, 0: none
  bool encoder_;
  Stack stack_;
  Linear head_;
};

}  // namespace

// The shape of the Transformer above: V vocabulary, T positions, C width, F feed-forward width,
// L layers, B sequences a batch, N = B T rows.
ModelShape transformer_shape(const RunConfig& c, int vocab, int) {
  const ModelConfig& m = c.model;
  const int64_t V = vocab, T = c.data.seq_len, C = m.d_model, F = m.d_ff, L = m.n_layers;
  const int64_t B = c.train.batch_size, N = B * T, bias = m.bias ? 1 : 0;
  ModelShape s;
  const int64_t head = m.tie_embeddings ? 0 : C * V;  // tied: the head's weight is tok_emb
  s.params = Stack::params(m, vocab, c.data.seq_len, m.n_layers, false) + head + bias * V;  // the stack; the head
  // per row and layer: norm C, qkv 3C, attention C, out C, residual C, norm C, fc1 F, act F, fc2 C,
  // residual C; each with its gradient. Attention: P and dS per head. Embeddings and logits.
  s.activations = N * (L * 2 * (9 * C + 2 * F) + 6 * C + 3 * V) + L * 2 * B * m.n_heads * T * T;
  if (m.norm.placement == Placement::peri) s.activations += N * L * 2 * 4 * C;  // each sub-layer's f + b, norm_out
  if (m.norm.placement == Placement::reordered) s.activations += N * L * 2 * 2 * C;  // each sub-layer's f + b
  if (m.attn_softcap > 0) s.activations += L * B * m.n_heads * T * T;  // tanh of the capped scores
  if (m.ffn == Ffn::glu) s.activations += N * L * 2 * 2 * F;  // fc3 x and the gated product
  if (m.position == Position::rotary) s.activations += N * L * 2 * 3 * C;  // the turned qkv and its gradient
  // per sequence and layer: q, k, v, out 4 C^2, fc1 and fc2 2 C F, scores and their use 2 T C; the head C V
  const int64_t ffn = (m.ffn == Ffn::glu ? 3 : 2) * C * F;  // fc1, fc2 (, fc3)
  s.forward_flops = double(T) * (2.0 * double(L) * double(4 * C * C + ffn + 2 * T * C) + 2.0 * double(C * V));
  s.smaller = fmt::format("data.seq_len (= {}), model.d_model (= {}) or model.n_layers (= {})", T, C, L);
  return s;
}

// The encoder's shape is the same stack's, its attention bidirectional.
ModelShape encoder_shape(const RunConfig& c, int vocab, int) { return transformer_shape(c, vocab, vocab); }

std::unique_ptr<Model> make_transformer(const RunConfig& c, int vocab, int) {
  return std::make_unique<Transformer>(c, vocab, /*encoder=*/false);
}
std::unique_ptr<Model> make_encoder(const RunConfig& c, int vocab, int) {
  return std::make_unique<Transformer>(c, vocab, /*encoder=*/true);
}

}  // namespace nt
