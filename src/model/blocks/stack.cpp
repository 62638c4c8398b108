#include "model/blocks/stack.h"
#include "norms/norms.h"

#include <cmath>
#include <string>

#include "model/norm_site.h"
#include "model/shape.h"
#include "ops/ops.h"

namespace nt {

Stack::Stack(ParamStore<float>& params, const RunConfig& c, const StackSpec& s)
    : precision_(c.train.precision),
      deepnorm_(norm_desc(c.model.norm.type).scaled_residual),
      skip_padding_(may_skip_padding(c.model.norm)),
      beta_(s.deepnorm.beta),
      embed_(params, 0, s.vocab, s.T, c.model.d_model, c.model.position == Position::learned, precision_,
             c.model.embed_norm ? &c.model.norm : nullptr,
             s.positions, s.names.prefix, s.names.embed) {
  const ModelConfig& m = c.model;
  const int C = m.d_model;
  const std::string prefix = s.names.prefix;
  const float alpha = float(s.deepnorm.alpha);
  // q_norm and k_norm in every attention, rotary positions in self-attention's alone
  const AttentionOptions cross{m.bias, m.qk_norm ? &m.norm : nullptr, m.qk_norm_scope == QkNormScope::all, 0.0,
                               m.attn_softcap};
  AttentionOptions self = cross;
  self.rotary_base = m.position == Position::rotary ? m.rotary_base : 0.0;
  auto residual = [&](int l, const char* sub, const char* place, const char* out_place) {
    return Residual(params, m.norm, alpha, precision_, l, prefix + sub + "_norm", place, C, s.positions,
                    prefix + sub + "_out_norm", out_place);
  };
  for (int l = 0; l < s.n; ++l)
    blocks_.push_back(Block{
        residual(l, "attn", s.names.attn, s.names.attn_out),
        s.cross ? std::optional<Residual>(residual(l, "cross", s.names.cross, s.names.cross_out)) : std::nullopt,
        residual(l, "ffn", s.names.ffn, s.names.ffn_out),
        Attention(params, s.self, prefix + "attn", l, C, m.n_heads, precision_, self),
        s.cross ? std::optional<Attention>(std::in_place, params, AttentionKind::cross, prefix + "cross", l, C,
                                           m.n_heads, precision_, cross)
                : std::nullopt,
        FeedForward(params, prefix + "ffn", l, C, m.d_ff, m.activation, precision_, m.bias, m.ffn == Ffn::glu)});
  if (has_final_norm(m))
    final_norm_ = std::make_unique<NormSite>(params, m.norm, s.n, prefix + "final_norm", s.names.final, C, s.positions);
}

void Stack::init(ParamStore<float>& params, const ModelConfig& m, Rng& rng) {
  embed_.init(params, m, rng);
  const int n = int(blocks_.size());
  for (int l = 0; l < n; ++l) {  // postln-init: block l (from 0) of n divided by k = n - l
    Block& b = blocks_[std::size_t(l)];
    const SublayerInit sublayer{m, deepnorm_, beta_, m.init == Init::postln_init ? double(n - l) : 1.0,
                                m.scaled_residual_init ? std::sqrt(2.0 * n) : 1.0};
    b.attn_res.init(params);
    if (b.cross_res) b.cross_res->init(params);
    b.ffn_res.init(params);
    b.attn.init(params, sublayer, rng);
    if (b.cross) b.cross->init(params, sublayer, rng);
    b.ffn.init(params, sublayer, rng);
  }
  if (final_norm_) final_norm_->init(params);
}

void Stack::add_buffers(std::vector<std::vector<float>*>& out) {
  embed_.add_buffers(out);
  for (Block& b : blocks_) {
    b.attn_res.add_buffers(out);
    if (b.cross_res) b.cross_res->add_buffers(out);
    b.ffn_res.add_buffers(out);
  }
  if (final_norm_) final_norm_->add_buffers(out);
}

void Stack::attention_logits(std::vector<AttentionLogits>& out) const {
  for (const Block& b : blocks_) {
    out.push_back(b.attn.logits());
    if (b.cross) out.push_back(b.cross->logits());
  }
}

Sequence Stack::operator()(Graph<float>& g, const int32_t* tokens, int B, int T, const float* mask, const float* keys,
                           std::vector<SiteCapture>& sites, const Sequence* memory) {
  Tensor<float> x = embed_(g, tokens, B, T, mask, sites);
  // The products skip the padding's rows when the key mask hides them from every real query
  const RealRows real = skip_padding_ && keys == mask ? real_rows(g, mask, B * T) : RealRows{};
  for (Block& b : blocks_) {
    x = b.attn_res(g, x, mask, sites,
                   [&](Tensor<float> u) { return b.attn(g, B, {u, T, mask, real}, {u, T, keys, real}); });
    if (b.cross)
      x = (*b.cross_res)(g, x, mask, sites,
                         [&](Tensor<float> u) { return (*b.cross)(g, B, {u, T, mask, real}, *memory); });
    x = b.ffn_res(g, x, mask, sites, [&](Tensor<float> u) { return b.ffn(g, u, real); });
  }
  if (final_norm_) x = cast(g, (*final_norm_)(g, x, mask, sites), precision_);
  return {x, T, mask, real};
}

int64_t Stack::params(const ModelConfig& m, int vocab, int T, int n, bool cross) {
  const int64_t C = m.d_model, F = m.d_ff, bias = m.bias ? 1 : 0, norm = norm_site_params(m.norm, C);
  const int64_t glu = m.ffn == Ffn::glu ? 1 : 0;  // fc3
  const int64_t qk_width = m.qk_norm_scope == QkNormScope::all ? C : C / m.n_heads;
  const int64_t qk_norm = m.qk_norm ? 2 * norm_site_params(m.norm, int(qk_width)) : 0;  // q_norm, k_norm
  const int64_t attention = 4 * C * C + bias * 4 * C + qk_norm, ffn = 2 * C * F + bias * (F + C) + glu * (C * F + bias * F);  // q, k, v, out
  const int64_t norms_per_sublayer = wiring_of(m.norm) == Wiring::peri ? 2 : 1;  // peri: and the output norm
  const int64_t block = (cross ? 2 : 1) * attention + ffn + (cross ? 3 : 2) * norms_per_sublayer * norm;
  const bool final_norm = has_final_norm(m);
  const int64_t positions = m.position == Position::learned ? int64_t(T) * C : 0;  // pos_emb
  return int64_t(vocab) * C + positions + (m.embed_norm ? norm : 0) + n * block + (final_norm ? norm : 0);
}

}  // namespace nt
