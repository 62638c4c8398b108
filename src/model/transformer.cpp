// Decoder-only causal Transformer over bytes.
//
//   x = tok_emb[tokens] + pos_emb[t]
//   each block, f = attention or feed-forward, in its placement:
//     pre       x = x + f(norm(x))
//     post      x = norm(x + f(x))
//     deepnorm  x = norm(alpha * x + f(x))      (LayerNorm; DeepNet, Wang et al. 2022)
//   pre with final_norm: x = norm(x)
//   logits = head(x)
// attention(x) = out(causal_sdpa(q(x), k(x), v(x))) per head: q, k, v one product, heads read in place
// feed_forward(x) = fc2(act(fc1(x)))
// (fc1's bias is added inside the activation, out's and fc2's inside the residual connection)
// train.precision bf16/fp16: every value passed between these ops (each product, attention's
// output, the activation, each residual sum, each norm's output, the logits) is rounded to the
// format (ops/cast.cpp); inside an op (attention's scores, a norm's statistics, the loss) fp32.
// Init (model/init.h): model.init normal or xavier for every Linear weight and both
// embeddings, biases 0, gains 1. DeepNorm, whatever model.init says: fc1, fc2, v and out
// Xavier normal with gain beta, q and k with gain 1 (DeepNet's recipe).
#include <memory>

#include "core/check.h"
#include "model/init.h"
#include "model/layers.h"
#include "model/norm_site.h"
#include "ops/ops.h"

namespace nt {

namespace {

class Transformer final : public Model {
 public:
  Transformer(const RunConfig& c, int vocab)
      : c_(c.model), alpha_(float(c.deepnorm_alpha())), precision_(c.train.precision) {
    const int C = c_.d_model, L = c_.n_layers, T = c.data.seq_len;
    const int positions = c_.norm.type == NormType::batchnorm && c_.norm.bn_axes == BnAxes::batch ? T : 1;
    tok_emb_ = params_.add("tok_emb.weight", 0, vocab, C);
    pos_emb_ = params_.add("pos_emb.weight", 0, T, C);
    for (int l = 0; l < L; ++l) {
      Block b{NormSite(params_, c_.norm, l, "attn_norm", "attn", C, positions), {}, {}, {}, {}, {},
              NormSite(params_, c_.norm, l, "ffn_norm", "ffn", C, positions), {}, {}};
      // q, k and v side by side: their weights one (3C, C) matrix, their biases one (1, 3C) row, so
      // that one product computes all three (attention reads them in place)
      b.q.w = params_.add("attn.q.weight", l, C, C);
      b.k.w = params_.add("attn.k.weight", l, C, C, /*follow=*/true);
      b.v.w = params_.add("attn.v.weight", l, C, C, /*follow=*/true);
      b.q.b = params_.add("attn.q.bias", l, 1, C);
      b.k.b = params_.add("attn.k.bias", l, 1, C, /*follow=*/true);
      b.v.b = params_.add("attn.v.bias", l, 1, C, /*follow=*/true);
      b.out.declare(params_, "attn.out", l, C, C);
      b.fc1.declare(params_, "ffn.fc1", l, C, c_.d_ff);
      b.fc2.declare(params_, "ffn.fc2", l, c_.d_ff, C);
      blocks_.push_back(std::move(b));
    }
    if (c_.norm.placement == Placement::pre && c_.final_norm && c_.norm.type != NormType::deepnorm)
      final_norm_ = std::make_unique<NormSite>(params_, c_.norm, L, "final_norm", "final", C, positions);
    head_.declare(params_, "head", L, C, vocab);
    params_.finalize();
    init(c);
    sites_.reserve(2 * L + 1);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    const int B = batch.B, T = batch.T, N = B * T;
    NT_CHECK(T <= params_.tensor(pos_emb_).rows, "transformer: sequence longer than the position table");
    if (int(positions_.size()) != N) {
      positions_.resize(N);
      for (int i = 0; i < N; ++i) positions_[i] = i % T;
    }
    const float* mask = batch.padded ? batch.mask.data() : nullptr;
    sites_.clear();
    auto r = [&](Tensor<float> y) { return cast(g, y, precision_); };  // stored in the run's format
    Tensor<float> x = r(add(g, embedding(g, params_.tensor(tok_emb_), batch.tokens.data(), N),
                            embedding(g, params_.tensor(pos_emb_), positions_.data(), N)));
    for (Block& b : blocks_) {
      // residual(alpha, x, f, b) = alpha x + f + b: attn and ffn leave their last Linear's bias b to it
      auto attn = [&](Tensor<float> h) {
        return r(b.out.product(g, r(causal_self_attention(g, r(b.qkv(g, h)), B, T, c_.n_heads))));
      };
      auto ffn = [&](Tensor<float> h) {
        return r(b.fc2.product(g, r(bias_activation(g, r(b.fc1.product(g, h)), b.fc1.bias, c_.activation))));
      };
      auto norm = [&](NormSite& site, Tensor<float> h) { return r(site(g, h, mask, sites_)); };
      if (c_.norm.type == NormType::deepnorm) {  // x = norm(alpha * x + f(x))
        x = norm(b.attn_norm, r(residual(g, alpha_, x, attn(x), b.out.bias)));
        x = norm(b.ffn_norm, r(residual(g, alpha_, x, ffn(x), b.fc2.bias)));
      } else if (c_.norm.placement == Placement::post) {  // x = norm(x + f(x))
        x = norm(b.attn_norm, r(residual(g, 1.0f, x, attn(x), b.out.bias)));
        x = norm(b.ffn_norm, r(residual(g, 1.0f, x, ffn(x), b.fc2.bias)));
      } else {  // pre: x = x + f(norm(x))
        x = r(residual(g, 1.0f, x, attn(norm(b.attn_norm, x)), b.out.bias));
        x = r(residual(g, 1.0f, x, ffn(norm(b.ffn_norm, x)), b.fc2.bias));
      }
    }
    if (final_norm_) x = r((*final_norm_)(g, x, mask, sites_));
    return r(head_(g, x));
  }

  std::vector<std::vector<float>*> buffers() override {
    std::vector<std::vector<float>*> out;
    for (Block& b : blocks_) b.attn_norm.add_buffers(out), b.ffn_norm.add_buffers(out);
    if (final_norm_) final_norm_->add_buffers(out);
    return out;
  }

 private:
  struct Block {
    NormSite attn_norm;
    Linear q, k, v, qkv, out;  // qkv: q, k and v joined
    NormSite ffn_norm;
    Linear fc1, fc2;
  };

  void init(const RunConfig& c) {
    Rng rng(uint64_t(c.seed), 1);
    const bool deepnorm = c_.norm.type == NormType::deepnorm;
    const double beta = c.deepnorm_beta();
    init_embedding(params_.tensor(tok_emb_), c_, rng);
    init_embedding(params_.tensor(pos_emb_), c_, rng);
    for (Block& b : blocks_) {
      b.attn_norm.init(params_);
      b.ffn_norm.init(params_);
      for (Linear* l : {&b.q, &b.k, &b.v, &b.out, &b.fc1, &b.fc2}) {
        l->bind(params_);
        std::fill_n(l->bias.data, l->bias.size(), 0.0f);
      }
      b.qkv.W = params_.joined(b.q.w, 3, 3 * c_.d_model, c_.d_model);
      b.qkv.bias = params_.joined(b.q.b, 3, 1, 3 * c_.d_model);
      for (Linear* l : {&b.q, &b.k}) deepnorm ? init_xavier_normal(l->W, 1.0, rng) : init_linear_weight(l->W, c_, rng);
      for (Linear* l : {&b.v, &b.out, &b.fc1, &b.fc2})
        deepnorm ? init_xavier_normal(l->W, beta, rng) : init_linear_weight(l->W, c_, rng);
    }
    if (final_norm_) final_norm_->init(params_);
    head_.bind(params_);
    init_linear_weight(head_.W, c_, rng);
    std::fill_n(head_.bias.data, head_.bias.size(), 0.0f);
  }

  ModelConfig c_;
  float alpha_;
  Precision precision_;
  int tok_emb_, pos_emb_;
  std::vector<Block> blocks_;
  std::unique_ptr<NormSite> final_norm_;
  Linear head_;
  std::vector<int32_t> positions_;
};

}  // namespace

std::unique_ptr<Model> make_transformer(const RunConfig& c, int vocab) {
  return std::make_unique<Transformer>(c, vocab);
}

}  // namespace nt
