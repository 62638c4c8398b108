// Encoder-decoder Transformer for seq2seq (model.arch encoder-decoder; torchscale's
// architecture/encoder.py and decoder.py): two Stacks (model/blocks/stack.h) and a head,
//
//   encoder, over the source s (B*S bytes, padding out of every key through src_mask):
//     h = src_tok_emb[s] + src_pos_emb[t]                   Embedding ("enc." names)
//     embed_norm: h = norm(h)                                site enc.embed
//     n_layers blocks:  h = placement(h, self_attention)     site enc.attn, bidirectional
//                       h = placement(h, feed_forward)       site enc.ffn
//     pre/peri/reordered, final_norm: h = norm(h)            site enc.final
//   decoder, over its input y_in = BOS + target (B*T), keys limited by the target mask:
//     x = tgt_tok_emb[y_in] + tgt_pos_emb[t]                 Embedding ("dec." names)
//     embed_norm: x = norm(x)                                site dec.embed
//     n_dec_layers blocks: x = placement(x, causal self_attention)      site dec.attn
//                          x = placement(x, cross_attention(x, h))      site dec.cross (keys: real source)
//                          x = placement(x, feed_forward)               site dec.ffn
//     pre/peri/reordered, final_norm: x = norm(x)            site dec.final
//   logits = head(x)                                         its own output layer (no tying, no sqrt(d));
//                                                            a padding row's logits are its bias (RealRows)
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
#include "norms/norms.h"
#include "model/blocks/stack.h"
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
  // the encoder over sources of up to max_len bytes, the decoder over BOS + the longest target
  EncoderDecoder(const RunConfig& c, int vocab)
      : precision_(c.train.precision),
        logit_softcap_(float(c.model.logit_softcap)),
        encoder_(params_, c,
                 {vocab, c.data.max_len, c.model.n_layers, AttentionKind::self, false, c.deepnorm(StackRole::encoder),
                  1, kEncoderStackNames}),
        decoder_(params_, c,
                 {vocab, c.data.max_len + 1, c.model.dec_layers(), AttentionKind::causal_self, true,
                  c.deepnorm(StackRole::decoder), 1, kDecoderStackNames}) {
    const ModelConfig& m = c.model;
    NT_CHECK(!(norm_desc(m.norm.type).reduction == Reduction::batch && m.norm.bn_axes == BnAxes::batch),
             "encoder-decoder: batchnorm per position needs fixed-length rows (config validation refuses it)");
    head_.declare(params_, "head", m.dec_layers(), m.d_model, vocab, m.bias);
    params_.finalize();

    Rng rng(uint64_t(c.seed), 1);
    encoder_.init(params_, m, rng);
    decoder_.init(params_, m, rng);
    head_.bind(params_);
    init_linear_weight(head_.W, m, rng);
    head_.zero_bias();
    sites_.reserve(2 * m.n_layers + 3 * m.dec_layers() + 4);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    NT_CHECK(batch.S > 0 && batch.src.size() == std::size_t(batch.B) * batch.S,
             "encoder-decoder: the batch has no source (a seq2seq dataset fills Batch::src)");
    const int B = batch.B, S = batch.S;
    const float* src_mask = batch.src_mask.data();
    const float* tgt_mask = batch.padded ? batch.mask.data() : nullptr;
    sites_.clear();
    const Sequence memory = encoder_(g, batch.src.data(), B, S, src_mask, src_mask, sites_);
    for (SiteCapture& s : sites_) s.T = S, s.mask = src_mask;  // the encoder's sites are over the source
    const Sequence y = decoder_(g, batch.tokens.data(), B, batch.T, tgt_mask, tgt_mask, sites_, &memory);
    // over the decoder's real rows: the padding's logits are the head's bias, the loss leaves them out
    return cast(g, soft_cap(g, head_(g, y.x, y.real), logit_softcap_), precision_);
  }

  void attention_logits(std::vector<AttentionLogits>& out) const override {
    encoder_.attention_logits(out);
    decoder_.attention_logits(out);
  }

  std::vector<std::vector<float>*> buffers() override {
    std::vector<std::vector<float>*> out;
    encoder_.add_buffers(out);
    decoder_.add_buffers(out);
    return out;
  }

 private:
  Precision precision_;
  float logit_softcap_;  // model.logit_softcap, 0: none
  Stack encoder_, decoder_;
  Linear head_;
};

}  // namespace

ModelShape encoder_decoder_shape(const RunConfig& c, int vocab, int) {
  const ModelConfig& m = c.model;
  // S source positions, T = BOS + target decoder positions (the longest a batch can have)
  const int64_t V = vocab, S = c.data.max_len, T = S + 1, C = m.d_model, F = m.d_ff, N = m.n_layers;
  const int64_t M = m.dec_layers(), B = c.train.batch_size, H = m.n_heads, bias = m.bias ? 1 : 0;
  ModelShape s;
  // the two stacks; the head
  s.params = Stack::params(m, vocab, int(S), int(N), false) + Stack::params(m, vocab, int(T), int(M), true) + C * V +
             bias * V;
  // as the decoder-only's, per row and block, each with its gradient: an encoder block 9C + 2F;
  // a decoder block that and the cross-attention's norm, q, attention, out, residual (5C) on the
  // target and its k, v (2C) on the source; attention P and dS per head; embeddings and logits
  s.activations = B * S * (N * 2 * (9 * C + 2 * F) + 3 * C) + B * T * (M * 2 * (14 * C + 2 * F) + 6 * C + 3 * V) +
                  M * 2 * B * S * 2 * C + 2 * B * H * (N * S * S + M * (T * T + T * S));
  if (m.norm.placement == Placement::peri)  // each sub-layer's f + b and norm_out, with their gradients
    s.activations += B * S * N * 2 * 4 * C + B * T * M * 2 * 6 * C;
  if (m.norm.placement == Placement::reordered)  // each sub-layer's f + b, with its gradient
    s.activations += B * S * N * 2 * 2 * C + B * T * M * 2 * 3 * C;
  if (m.attn_softcap > 0)  // tanh of the capped scores
    s.activations += B * H * (N * S * S + M * (T * T + T * S));
  // per sequence: the encoder's blocks over S; the decoder's over T with the cross-attention's q and
  // out on T and its k and v on S; scores and their use; the head over T
  const double c2 = double(C * C), cf = double(C * F);
  s.forward_flops = 2.0 * double(N * S) * (4 * c2 + 2 * cf + 2.0 * double(S * C)) +
                    2.0 * double(M * T) * (6 * c2 + 2 * cf + 2.0 * double(T * C) + 2.0 * double(S * C)) +
                    2.0 * double(M * S) * 2 * c2 + 2.0 * double(T * C * V);
  s.smaller = fmt::format(
      "data.max_len (= {}), model.d_model (= {}), model.n_layers (= {}) or model.n_dec_layers (= {})", S, C, N, M);
  return s;
}

std::unique_ptr<Model> make_encoder_decoder(const RunConfig& c, int vocab, int) {
  return std::make_unique<EncoderDecoder>(c, vocab);
}

}  // namespace nt
