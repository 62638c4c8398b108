// Encoder-decoder Transformer for seq2seq (model.arch encoder-decoder; torchscale's
// architecture/encoder.py and decoder.py), from the blocks of model/blocks/:
//
//   encoder, over the source s (B*S bytes, padding out of every key through src_mask):
//     h = src_tok_emb[s] + src_pos_emb[t]                   Embedding ("enc." names)
//     embed_norm: h = norm(h)                                site enc.embed
//     n_layers blocks:  h = placement(h, self_attention)     site enc.attn, bidirectional
//                       h = placement(h, feed_forward)       site enc.ffn
//     pre with final_norm: h = norm(h)                       site enc.final
//   decoder, over its input y_in = BOS + target (B*T), keys limited by the target mask:
//     x = tgt_tok_emb[y_in] + tgt_pos_emb[t]                 Embedding ("dec." names)
//     embed_norm: x = norm(x)                                site dec.embed
//     n_dec_layers blocks: x = placement(x, causal self_attention)      site dec.attn
//                          x = placement(x, cross_attention(x, h))      site dec.cross (keys: real source)
//                          x = placement(x, feed_forward)               site dec.ffn
//     pre with final_norm: x = norm(x)                       site dec.final
//   logits = head(x)                                         its own output layer (no tying, no sqrt(d))
// placement(x, f): pre x + f(norm(x)); post norm(x + f(x)); deepnorm norm(alpha x + f(x)) with the
// stack's alpha. DeepNorm init: v, out (of every attention, cross-attention included), fc1, fc2
// Xavier normal with the stack's beta, q and k gain 1 (RunConfig::deepnorm, DeepNet Figure 2).
// Parameters are declared, and drawn, in this order: the encoder's embeddings, its blocks (two
// norms, attention, feed-forward), its final norm; the decoder's embeddings, its blocks (three
// norms, self-attention, cross-attention, feed-forward), its final norm; the head. Layer indices
// count within each stack (layers.jsonl: names "enc.*", "dec.*"); the head is layer n_dec_layers.
#include <fmt/format.h>

#include <memory>

#include "core/check.h"
#include "model/blocks/attention.h"
#include "model/blocks/embedding.h"
#include "model/blocks/feed_forward.h"
#include "model/blocks/residual.h"
#include "model/init.h"
#include "model/layers.h"
#include "model/model.h"
#include "model/norm_site.h"
#include "model/shape.h"
#include "ops/ops.h"

namespace nt {

namespace {

class EncoderDecoder final : public Model {
 public:
  EncoderDecoder(const RunConfig& c, int vocab)
      : precision_(c.train.precision),
        src_embed_(params_, 0, vocab, c.data.max_len, c.model.d_model, precision_,
                   c.model.embed_norm ? &c.model.norm : nullptr, 1, "enc.", "enc.embed") {
    const ModelConfig& m = c.model;
    const int C = m.d_model, N = m.n_layers, M = m.dec_layers();
    NT_CHECK(!(m.norm.type == NormType::batchnorm && m.norm.bn_axes == BnAxes::batch),
             "encoder-decoder: batchnorm per position needs fixed-length rows (config validation refuses it)");
    const DeepNorm enc = c.deepnorm(Stack::encoder), dec = c.deepnorm(Stack::decoder);
    const bool final_norm = wiring_of(m.norm) == Wiring::pre && m.final_norm;
    for (int l = 0; l < N; ++l)
      encoder_.push_back(EncoderLayer{
          Residual(params_, m.norm, float(enc.alpha), precision_, l, "enc.attn_norm", "enc.attn", C, 1),
          Residual(params_, m.norm, float(enc.alpha), precision_, l, "enc.ffn_norm", "enc.ffn", C, 1),
          Attention(params_, AttentionKind::self, "enc.attn", l, C, m.n_heads, precision_, m.bias),
          FeedForward(params_, "enc.ffn", l, C, m.d_ff, m.activation, precision_, m.bias)});
    if (final_norm) enc_final_ = std::make_unique<NormSite>(params_, m.norm, N, "enc.final_norm", "enc.final", C, 1);
    // the decoder's positions: BOS + the longest target
    tgt_embed_ = std::make_unique<Embedding>(params_, 0, vocab, c.data.max_len + 1, C, precision_,
                                             m.embed_norm ? &m.norm : nullptr, 1, "dec.", "dec.embed");
    for (int l = 0; l < M; ++l)
      decoder_.push_back(DecoderLayer{
          Residual(params_, m.norm, float(dec.alpha), precision_, l, "dec.attn_norm", "dec.attn", C, 1),
          Residual(params_, m.norm, float(dec.alpha), precision_, l, "dec.cross_norm", "dec.cross", C, 1),
          Residual(params_, m.norm, float(dec.alpha), precision_, l, "dec.ffn_norm", "dec.ffn", C, 1),
          Attention(params_, AttentionKind::causal_self, "dec.attn", l, C, m.n_heads, precision_, m.bias),
          Attention(params_, AttentionKind::cross, "dec.cross", l, C, m.n_heads, precision_, m.bias),
          FeedForward(params_, "dec.ffn", l, C, m.d_ff, m.activation, precision_, m.bias)});
    if (final_norm) dec_final_ = std::make_unique<NormSite>(params_, m.norm, M, "dec.final_norm", "dec.final", C, 1);
    head_.declare(params_, "head", M, C, vocab, m.bias);
    params_.finalize();

    Rng rng(uint64_t(c.seed), 1);
    const bool deepnorm = m.norm.type == NormType::deepnorm;
    const SublayerInit enc_init{m, deepnorm, enc.beta}, dec_init{m, deepnorm, dec.beta};
    src_embed_.init(params_, m, rng);
    for (EncoderLayer& l : encoder_) {
      l.attn_res.norm().init(params_);
      l.ffn_res.norm().init(params_);
      l.attn.init(params_, enc_init, rng);
      l.ffn.init(params_, enc_init, rng);
    }
    if (enc_final_) enc_final_->init(params_);
    tgt_embed_->init(params_, m, rng);
    for (DecoderLayer& l : decoder_) {
      l.attn_res.norm().init(params_);
      l.cross_res.norm().init(params_);
      l.ffn_res.norm().init(params_);
      l.attn.init(params_, dec_init, rng);
      l.cross.init(params_, dec_init, rng);
      l.ffn.init(params_, dec_init, rng);
    }
    if (dec_final_) dec_final_->init(params_);
    head_.bind(params_);
    init_linear_weight(head_.W, m, rng);
    head_.zero_bias();
    sites_.reserve(2 * N + 3 * M + 4);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    NT_CHECK(batch.S > 0 && batch.src.size() == std::size_t(batch.B) * batch.S,
             "encoder-decoder: the batch has no source (a seq2seq dataset fills Batch::src)");
    const int B = batch.B, S = batch.S, T = batch.T;
    const float* src_mask = batch.src_mask.data();
    const float* tgt_mask = batch.padded ? batch.mask.data() : nullptr;
    sites_.clear();
    Tensor<float> h = src_embed_(g, batch.src.data(), B, S, src_mask, sites_);
    for (EncoderLayer& l : encoder_) {
      h = l.attn_res(g, h, src_mask, sites_, [&](Tensor<float> u) { return l.attn(g, B, {u, S}, {u, S, src_mask}); });
      h = l.ffn_res(g, h, src_mask, sites_, [&](Tensor<float> u) { return l.ffn(g, u); });
    }
    if (enc_final_) h = cast(g, (*enc_final_)(g, h, src_mask, sites_), precision_);
    for (SiteCapture& s : sites_) s.T = S, s.mask = src_mask;  // the encoder's sites are over the source
    const Sequence memory{h, S, src_mask};
    Tensor<float> x = (*tgt_embed_)(g, batch.tokens.data(), B, T, tgt_mask, sites_);
    for (DecoderLayer& l : decoder_) {
      x = l.attn_res(g, x, tgt_mask, sites_, [&](Tensor<float> u) { return l.attn(g, B, {u, T}, {u, T, tgt_mask}); });
      x = l.cross_res(g, x, tgt_mask, sites_, [&](Tensor<float> u) { return l.cross(g, B, {u, T}, memory); });
      x = l.ffn_res(g, x, tgt_mask, sites_, [&](Tensor<float> u) { return l.ffn(g, u); });
    }
    if (dec_final_) x = cast(g, (*dec_final_)(g, x, tgt_mask, sites_), precision_);
    return cast(g, head_(g, x), precision_);
  }

  std::vector<std::vector<float>*> buffers() override {
    std::vector<std::vector<float>*> out;
    src_embed_.add_buffers(out);
    for (EncoderLayer& l : encoder_) l.attn_res.norm().add_buffers(out), l.ffn_res.norm().add_buffers(out);
    if (enc_final_) enc_final_->add_buffers(out);
    tgt_embed_->add_buffers(out);
    for (DecoderLayer& l : decoder_)
      l.attn_res.norm().add_buffers(out), l.cross_res.norm().add_buffers(out), l.ffn_res.norm().add_buffers(out);
    if (dec_final_) dec_final_->add_buffers(out);
    return out;
  }

 private:
  struct EncoderLayer {  // declared in this order: both norms, then the sub-layers
    Residual attn_res, ffn_res;
    Attention attn;
    FeedForward ffn;
  };
  struct DecoderLayer {  // the three norms, then the sub-layers
    Residual attn_res, cross_res, ffn_res;
    Attention attn, cross;
    FeedForward ffn;
  };

  Precision precision_;
  Embedding src_embed_;
  std::vector<EncoderLayer> encoder_;
  std::unique_ptr<NormSite> enc_final_;
  std::unique_ptr<Embedding> tgt_embed_;
  std::vector<DecoderLayer> decoder_;
  std::unique_ptr<NormSite> dec_final_;
  Linear head_;
};

}  // namespace

ModelShape encoder_decoder_shape(const RunConfig& c, int vocab) {
  const ModelConfig& m = c.model;
  // S source positions, T = BOS + target decoder positions (the longest a batch can have)
  const int64_t V = vocab, S = c.data.max_len, T = S + 1, C = m.d_model, F = m.d_ff, N = m.n_layers;
  const int64_t M = m.dec_layers(), B = c.train.batch_size, H = m.n_heads, norm = norm_site_params(m.norm, C);
  const bool final_norm = wiring_of(m.norm) == Wiring::pre && m.final_norm;
  const int64_t bias = m.bias ? 1 : 0;  // every Linear's
  const int64_t attention = 4 * C * C + bias * 4 * C, ffn = 2 * C * F + bias * (F + C), stack_end = (final_norm ? norm : 0);
  const int64_t embed_norm = m.embed_norm ? norm : 0;
  ModelShape s;
  // per stack: token and position embeddings (and their norm), the blocks, the final norm; the head
  s.params = (V * C + S * C + embed_norm) + N * (attention + ffn + 2 * norm) + stack_end +
             (V * C + T * C + embed_norm) + M * (2 * attention + ffn + 3 * norm) + stack_end + C * V + bias * V;
  // as the decoder-only's, per row and block, each with its gradient: an encoder block 9C + 2F;
  // a decoder block that and the cross-attention's norm, q, attention, out, residual (5C) on the
  // target and its k, v (2C) on the source; attention P and dS per head; embeddings and logits
  s.activations = B * S * (N * 2 * (9 * C + 2 * F) + 3 * C) + B * T * (M * 2 * (14 * C + 2 * F) + 6 * C + 3 * V) +
                  M * 2 * B * S * 2 * C + 2 * B * H * (N * S * S + M * (T * T + T * S));
  // per sequence: the encoder's blocks over S; the decoder's over T with the cross-attention's q and
  // out on T and its k and v on S; scores and their use; the head over T
  const double c2 = double(C * C), cf = double(C * F);
  s.forward_flops = 2.0 * double(N * S) * (4 * c2 + 2 * cf + 2.0 * double(S * C)) +
                    2.0 * double(M * T) * (6 * c2 + 2 * cf + 2.0 * double(T * C) + 2.0 * double(S * C)) +
                    2.0 * double(M * S) * 2 * c2 + 2.0 * double(T * C * V);
  s.smaller = fmt::format("data.max_len (= {}), model.d_model (= {}), model.n_layers (= {}) or model.n_dec_layers (= {})",
                          S, C, N, M);
  return s;
}

std::unique_ptr<Model> make_encoder_decoder(const RunConfig& c, int vocab) {
  return std::make_unique<EncoderDecoder>(c, vocab);
}

}  // namespace nt
