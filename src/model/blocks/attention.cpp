#include "model/blocks/attention.h"

#include "core/check.h"
#include "ops/ops.h"

namespace nt {

Attention::Attention(ParamStore<float>& params, AttentionKind kind, const std::string& name, int layer, int C,
                     int heads, Precision precision, const AttentionOptions& o)
    : kind_(kind), C_(C), heads_(heads), precision_(precision), rotary_base_(o.rotary_base), softcap_(o.softcap),
      qk_norm_all_(o.qk_norm_all) {
  NT_CHECK(o.rotary_base == 0 || kind != AttentionKind::cross, "attention: rotary embedding is self-attention's");
  const bool bias = o.bias;
  // self: q, k and v side by side, their weights one (3C, C) matrix, their biases one (1, 3C) row;
  // cross: q alone (it reads the queries' sequence), k and v side by side (one product of the keys')
  const bool self = kind != AttentionKind::cross;
  q_.w = params.add(name + ".q.weight", layer, C, C);
  k_.w = params.add(name + ".k.weight", layer, C, C, /*follow=*/self);
  v_.w = params.add(name + ".v.weight", layer, C, C, /*follow=*/true);
  if (bias) {
    q_.b = params.add(name + ".q.bias", layer, 1, C);
    k_.b = params.add(name + ".k.bias", layer, 1, C, /*follow=*/self);
    v_.b = params.add(name + ".v.bias", layer, 1, C, /*follow=*/true);
  }
  out_.declare(params, name + ".out", layer, C, C, bias);
  if (o.qk_norm) {  // over each head's hs features (or all C): no statistics site of their own
    const int width = o.qk_norm_all ? C : C / heads;
    q_norm_.emplace(params, *o.qk_norm, layer, name + ".q_norm", "q_norm", width, 1);
    k_norm_.emplace(params, *o.qk_norm, layer, name + ".k_norm", "k_norm", width, 1);
  }
}

void Attention::init(ParamStore<float>& params, const SublayerInit& init, Rng& rng) {
  for (Linear* l : {&q_, &k_, &v_, &out_}) {
    l->bind(params);
    l->zero_bias();
  }
  const bool bias = q_.b >= 0;
  if (kind_ == AttentionKind::cross) {
    qkv_.W = params.joined(k_.w, 2, 2 * C_, C_);  // k and v
    if (bias) qkv_.bias = params.joined(k_.b, 2, 1, 2 * C_);
  } else {
    qkv_.W = params.joined(q_.w, 3, 3 * C_, C_);
    if (bias) qkv_.bias = params.joined(q_.b, 3, 1, 3 * C_);
  }
  init.query_key(q_.W, rng);
  init.query_key(k_.W, rng);
  init.value(v_.W, rng);
  init.output(out_.W, rng);
  if (q_norm_) {
    q_norm_->init(params);
    k_norm_->init(params);
    q_row_ = q_norm_->row_norm();
    k_row_ = k_norm_->row_norm();
  }
}

void Attention::keep(int B, const Sequence& queries, const Sequence& keys, const float* q, int ldq, const float* k,
                     int ldk) {
  logits_ = {q_.w, q, k, ldq, ldk, B, heads_, queries.T, keys.T, C_ / heads_, kind_ == AttentionKind::causal_self,
             keys.mask, queries.mask};
}

namespace {
// The queries' mask when their products skip the padding (Sequence::real): the heads skip it too
const float* padding_queries(const Sequence& queries) { return queries.real.index ? queries.mask : nullptr; }
}  // namespace

Tensor<float> Attention::qk_normed(Graph<float>& g, int B, const Sequence& queries, const Sequence& keys) {
  const int hs = C_ / heads_, rows_q = B * queries.T, rows_k = B * keys.T;
  auto per_head = [&](const RowNorm<float>& norm, Tensor<float> x, int rows) {  // (rows, C) as (rows NH, hs)
    if (qk_norm_all_) return cast(g, norm(g, x), precision_);                  // or over all C at once
    return cast(g, reshape(norm(g, reshape(x, rows * heads_, hs)), rows, C_), precision_);
  };
  Tensor<float> q = per_head(q_row_, cast(g, q_(g, queries.x, queries.real), precision_), rows_q);
  Tensor<float> k = per_head(k_row_, cast(g, k_(g, keys.x, keys.real), precision_), rows_k);
  if (rotary_base_ > 0) {  // after the norms (OLMo 2, Gemma 3)
    q = cast(g, rotary(g, q, queries.T, hs, C_, rotary_base_), precision_);
    k = cast(g, rotary(g, k, keys.T, hs, C_, rotary_base_), precision_);
  }
  const Tensor<float> v = cast(g, v_(g, keys.x, keys.real), precision_);
  keep(B, queries, keys, q.data, C_, k.data, C_);
  return multi_head_attention(g, q, k, v, B, queries.T, keys.T, heads_, kind_ == AttentionKind::causal_self,
                              keys.mask, softcap_, padding_queries(queries));
}

Branch Attention::operator()(Graph<float>& g, int B, const Sequence& queries, const Sequence& keys) {
  Tensor<float> heads;
  if (q_norm_) {
    heads = qk_normed(g, B, queries, keys);
  } else if (kind_ == AttentionKind::cross) {
    const Tensor<float> q = cast(g, q_(g, queries.x, queries.real), precision_);
    const Tensor<float> kv = cast(g, qkv_(g, keys.x, keys.real), precision_);
    keep(B, queries, keys, q.data, C_, kv.data, 2 * C_);
    heads = cross_attention(g, q, kv, B, queries.T, keys.T, heads_, keys.mask, softcap_, padding_queries(queries));
  } else {
    NT_CHECK(queries.x.data == keys.x.data && queries.T == keys.T, "attention: self-attention reads one sequence");
    Tensor<float> qkv = cast(g, qkv_(g, queries.x, queries.real), precision_);
    if (rotary_base_ > 0)  // q and k turned, v copied
      qkv = cast(g, rotary(g, qkv, queries.T, C_ / heads_, 2 * C_, rotary_base_), precision_);
    keep(B, queries, keys, qkv.data, 3 * C_, qkv.data + C_, 3 * C_);
    heads = self_attention(g, qkv, B, queries.T, heads_, kind_ == AttentionKind::causal_self, keys.mask, softcap_,
                           padding_queries(queries));
  }
  heads = cast(g, heads, precision_);
  return {cast(g, out_.product(g, heads, queries.real), precision_), out_.bias};
}

}  // namespace nt
