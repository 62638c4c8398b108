// Decoder-only causal Transformer over bytes (model.arch transformer), and the same stack without
// the causal mask as BERT's masked LM (model.arch encoder), from the blocks of model/blocks/:
//
//   x = tok_emb[tokens] + pos_emb[t]                      Embedding
//   embed_norm: x = norm(x)                               (BERT, BLOOM; site "embed")
//   each layer:
//     x = placement(x, attention)                          Residual, Attention (causal self; encoder:
//                                                          bidirectional, keys the real tokens only)
//     x = placement(x, feed_forward)                       Residual, FeedForward
//   where placement(x, f) is, by model.norm:
//     pre       x + f(norm(x))
//     post      norm(x + f(x))
//     deepnorm  norm(alpha * x + f(x))                     (LayerNorm; DeepNet, Wang et al. 2022)
//   pre with final_norm: x = norm(x)
//   logits = head(x)
// train.precision bf16/fp16: every value passed between ops is stored in the run's format
// (ops/cast.cpp); inside an op (attention's scores, a norm's statistics, the loss) fp32.
// Init (model/init.h): model.init for every Linear weight and both embeddings, biases 0, gains 1.
// DeepNorm, whatever model.init says: v, out, fc1, fc2 Xavier normal with gain beta, q and k with
// gain 1 (DeepNet's recipe, SublayerInit). Parameters are declared, and drawn, in this order:
// embeddings; per layer the two norms, attention, feed-forward; the final norm; the head.
#include <fmt/format.h>

#include <memory>

#include "model/blocks/attention.h"
#include "model/blocks/embedding.h"
#include "model/blocks/feed_forward.h"
#include "model/blocks/residual.h"
#include "model/init.h"
#include "model/layers.h"
#include "model/norm_site.h"
#include "model/shape.h"
#include "ops/ops.h"

namespace nt {

namespace {

class Transformer final : public Model {
 public:
  Transformer(const RunConfig& c, int vocab)
      : precision_(c.train.precision),
        encoder_(c.model.arch == Arch::encoder),
        embed_(params_, 0, vocab, c.data.seq_len, c.model.d_model, precision_,
               c.model.embed_norm ? &c.model.norm : nullptr, positions_of(c)) {
    const ModelConfig& m = c.model;
    const int C = m.d_model, L = m.n_layers;
    const int positions = positions_of(c);
    const float alpha = float(c.deepnorm_alpha());
    for (int l = 0; l < L; ++l)
      layers_.push_back(Layer{
          Residual(params_, m.norm, alpha, precision_, l, "attn_norm", "attn", C, positions),
          Residual(params_, m.norm, alpha, precision_, l, "ffn_norm", "ffn", C, positions),
          Attention(params_, encoder_ ? AttentionKind::self : AttentionKind::causal_self, "attn", l, C, m.n_heads,
                    precision_, m.bias),
          FeedForward(params_, "ffn", l, C, m.d_ff, m.activation, precision_, m.bias)});
    if (wiring_of(m.norm) == Wiring::pre && m.final_norm)
      final_norm_ = std::make_unique<NormSite>(params_, m.norm, L, "final_norm", "final", C, positions);
    head_.declare(params_, "head", L, C, vocab, m.bias);
    params_.finalize();

    Rng rng(uint64_t(c.seed), 1);
    const SublayerInit sublayer{m, m.norm.type == NormType::deepnorm, c.deepnorm_beta()};
    embed_.init(params_, m, rng);
    for (Layer& layer : layers_) {
      layer.attn_res.norm().init(params_);
      layer.ffn_res.norm().init(params_);
      layer.attn.init(params_, sublayer, rng);
      layer.ffn.init(params_, sublayer, rng);
    }
    if (final_norm_) final_norm_->init(params_);
    head_.bind(params_);
    init_linear_weight(head_.W, m, rng);
    head_.zero_bias();
    sites_.reserve(2 * L + 2);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    const int B = batch.B, T = batch.T;
    const float* mask = batch.real_tokens();
    // the encoder's keys: its real tokens; a causal query never sees the padding after it
    const float* keys = encoder_ ? mask : nullptr;
    sites_.clear();
    Tensor<float> x = embed_(g, batch.tokens.data(), B, T, mask, sites_);
    for (Layer& l : layers_) {
      x = l.attn_res(g, x, mask, sites_, [&](Tensor<float> h) { return l.attn(g, B, {h, T}, {h, T, keys}); });
      x = l.ffn_res(g, x, mask, sites_, [&](Tensor<float> h) { return l.ffn(g, h); });
    }
    if (final_norm_) x = cast(g, (*final_norm_)(g, x, mask, sites_), precision_);
    return cast(g, head_(g, x), precision_);
  }

  std::vector<std::vector<float>*> buffers() override {
    std::vector<std::vector<float>*> out;
    embed_.add_buffers(out);
    for (Layer& l : layers_) l.attn_res.norm().add_buffers(out), l.ffn_res.norm().add_buffers(out);
    if (final_norm_) final_norm_->add_buffers(out);
    return out;
  }

 private:
  struct Layer {  // declared in this order: both norms, then the sub-layers
    Residual attn_res, ffn_res;
    Attention attn;
    FeedForward ffn;
  };

  // batchnorm over (B, C) per position (bn_axes batch): a statistic per position
  static int positions_of(const RunConfig& c) {
    const NormConfig& n = c.model.norm;
    return n.type == NormType::batchnorm && n.bn_axes == BnAxes::batch ? c.data.seq_len : 1;
  }

  Precision precision_;
  bool encoder_;
  Embedding embed_;
  std::vector<Layer> layers_;
  std::unique_ptr<NormSite> final_norm_;
  Linear head_;
};

}  // namespace

// The shape of the Transformer above: V vocabulary, T positions, C width, F feed-forward width,
// L layers, B sequences a batch, N = B T rows.
ModelShape transformer_shape(const RunConfig& c, int vocab) {
  const ModelConfig& m = c.model;
  const int64_t V = vocab, T = c.data.seq_len, C = m.d_model, F = m.d_ff, L = m.n_layers;
  const int64_t B = c.train.batch_size, N = B * T, norm = norm_site_params(m.norm, C), bias = m.bias ? 1 : 0;
  const bool final_norm = wiring_of(m.norm) == Wiring::pre && m.final_norm;
  ModelShape s;
  // embeddings; per layer q, k, v, out (C x C and bias), fc1, fc2, two norms; the final norm; the head
  s.params = V * C + T * C + (m.embed_norm ? norm : 0) +
             L * (4 * C * C + 2 * C * F + bias * (4 * C + F + C) + 2 * norm) + (final_norm ? norm : 0) + C * V +
             bias * V;
  // per row and layer: norm C, qkv 3C, attention C, out C, residual C, norm C, fc1 F, act F, fc2 C,
  // residual C; each with its gradient. Attention: P and dS per head. Embeddings and logits.
  s.activations = N * (L * 2 * (9 * C + 2 * F) + 6 * C + 3 * V) + L * 2 * B * m.n_heads * T * T;
  // per sequence and layer: q, k, v, out 4 C^2, fc1 and fc2 2 C F, scores and their use 2 T C; the head C V
  s.forward_flops = double(T) * (2.0 * double(L) * double(4 * C * C + 2 * C * F + 2 * T * C) + 2.0 * double(C * V));
  s.smaller = fmt::format("data.seq_len (= {}), model.d_model (= {}) or model.n_layers (= {})", T, C, L);
  return s;
}

std::unique_ptr<Model> make_transformer(const RunConfig& c, int vocab) {
  return std::make_unique<Transformer>(c, vocab);
}

}  // namespace nt
