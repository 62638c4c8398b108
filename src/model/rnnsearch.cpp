// model.arch rnnsearch: RnnSearchNet's computation (rnnsearch.h), and the model that declares,
// draws and binds its parameters and records the decoder's recurrent sites for stats.csv.
//
// Parameters, all of layer 0 (one encoder GRU each way, two decoder GRUs, as Nematus), declared
// and drawn in this order: src_emb, enc_fwd, enc_bwd, init (W_i and its norm), tgt_emb, dec1,
// attention, dec2, readout (W_s, W_y, W_c and its norm), head. Init (model/init.h): model.init for
// the embeddings and every weight (nematus: square weights and each H x H block of the GRUs'
// recurrent matrices orthogonal, the others N(0, 0.01^2)), biases 0, gains 1.
#include "model/rnnsearch.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "core/check.h"
#include "model/layers.h"
#include "model/model.h"
#include "model/norm_site.h"
#include "model/shape.h"
#include "model/step_sites.h"
#include "ops/ops.h"

namespace nt {

namespace {

// A (rows, C) graph tensor with a gradient, 0 where no step writes
template <class T>
Tensor<T> zeros(Graph<T>& g, int rows, int C) {
  Tensor<T> t = g.tensor(rows, C, true);
  std::fill_n(t.data, t.size(), T(0));
  return t;
}

// The state h of the rows a step runs: the state so far, or its rows that step names (a new
// sequence's 0)
template <class T>
Tensor<T> state_of(Graph<T>& g, Tensor<T> h, const LiveRows::Step& r) {
  return r.same ? h : take_rows(g, h, Rows{.index = r.prev}, r.count);
}

// One direction of the encoder over x (B*S, E) -> (B*S, H): the state 0 before the first real
// position, each step over the rows real there (Nematus keeps the state on padding, h = m h' +
// (1 - m) h: the same on the real positions), backward from position S - 1 to 0; 0 at padding.
template <class T>
Tensor<T> encode_direction(Graph<T>& g, const GruCell<T>& cell, Tensor<T> x, RealRows real, const LiveRows& live,
                           int B, int S) {
  const int H = cell.U_c.rows;
  const typename GruCell<T>::Inputs in = cell.inputs(g, x, real);
  Tensor<T> out = zeros(g, B * S, H), h = g.tensor(B, H, false);
  std::fill_n(h.data, h.size(), T(0));
  for (int k = 0; k < S; ++k) {
    const LiveRows::Step r = live.at(k);
    if (r.count == 0) continue;
    h = cell.step_rows(g, in, Rows{.index = r.seq}, state_of(g, h, r)).h;
    put_rows(g, out, h, Rows{.index = r.seq});
  }
  return out;
}

}  // namespace

template <class T>
Tensor<T> RnnSearchNet<T>::encode(Graph<T>& g, const Input& in, Steps& steps, RealRows src_real) const {
  const Tensor<T> x = embedding(g, src_emb, in.src, in.B * in.S);
  steps.enc_fwd.build(in.src_mask, in.B, in.S, false), steps.enc_bwd.build(in.src_mask, in.B, in.S, true);
  return concat_cols(g, encode_direction(g, enc_fwd, x, src_real, steps.enc_fwd, in.B, in.S),
                     encode_direction(g, enc_bwd, x, src_real, steps.enc_bwd, in.B, in.S));
}

template <class T>
Tensor<T> RnnSearchNet<T>::logits(Graph<T>& g, const Input& in, Steps& steps) const {
  const int B = in.B, S = in.S, Tt = in.Tt, H = dec1.U_c.rows;
  const RealRows src_real = skip_padding ? real_rows(g, in.src_mask, B * S) : RealRows{},
                 tgt_real = skip_padding ? real_rows(g, in.tgt_mask, B * Tt) : RealRows{};
  const Tensor<T> annotations = encode(g, in, steps, src_real);
  Tensor<T> s = tanh(g, norm_init(g, linear(g, masked_mean_rows(g, annotations, in.src_mask, B, S), W_i, b_i)));
  const Tensor<T> keys = attention.keys(g, annotations, src_real);
  const Tensor<T> y = embedding(g, tgt_emb, in.tgt, B * Tt);
  const typename GruCell<T>::Inputs in1 = dec1.inputs(g, y, tgt_real);
  Tensor<T> states = zeros(g, B * Tt, H), contexts = zeros(g, B * Tt, 2 * H);
  steps.dec1.clear(), steps.dec2.clear(), steps.dec.build(in.tgt_mask, B, Tt, false);
  for (int t = 0; t < Tt; ++t) {
    const LiveRows::Step r = steps.dec.at(t);
    if (r.count == 0) break;                      // right-padded: every sequence has ended
    const int* rows = r.all ? nullptr : r.batch;  // the batch rows, when not all of them
    steps.dec1.push_back(dec1.step_rows(g, in1, Rows{.index = r.seq}, state_of(g, s, r)));
    const Tensor<T> s1 = steps.dec1.back().h;
    const Tensor<T> c = attention.context(g, keys, annotations, s1, in.src_mask, S, rows);
    const typename GruCell<T>::Inputs in2 = dec2.step_inputs(g, c, rows, B);
    steps.dec2.push_back(dec2.step(g, in2.gates, in2.cand, s1));
    s = steps.dec2.back().h;
    put_rows(g, states, s, Rows{.index = r.seq});
    put_rows(g, contexts, c, Rows{.index = r.seq});
  }
  const Tensor<T> pre = add(g, add(g, linear(g, states, W_s, b_s, tgt_real), linear(g, y, W_y, Tensor<T>{}, tgt_real)),
                            linear(g, contexts, W_c, Tensor<T>{}, tgt_real));
  return linear(g, tanh(g, norm_out(g, pre)), W_o, b_o, tgt_real);
}

template struct RnnSearchNet<float>;
template struct RnnSearchNet<double>;

namespace {

class RnnSearch final : public Model {
 public:
  RnnSearch(const RunConfig& c, int vocab) {
    const ModelConfig& m = c.model;
    const int E = m.emb_width(), H = m.d_model;
    src_emb_ = params_.add("src_emb.weight", 0, vocab, E);
    enc_fwd_ = std::make_unique<Gru>(params_, m.norm, "enc_fwd", 0, E, H);
    enc_bwd_ = std::make_unique<Gru>(params_, m.norm, "enc_bwd", 0, E, H);
    init_.declare(params_, "init", 0, 2 * H, H, m.bias);
    norm_init_ = std::make_unique<NormSite>(params_, m.norm, 0, "init.norm", "init", H, 1);
    tgt_emb_ = params_.add("tgt_emb.weight", 0, vocab, E);
    dec1_ = std::make_unique<Gru>(params_, m.norm, "dec1", 0, E, H);
    attention_ = std::make_unique<AdditiveAttention>(params_, m.norm, "attention", 2 * H, H, 2 * H, m.bias);
    dec2_ = std::make_unique<Gru>(params_, m.norm, "dec2", 0, 2 * H, H);
    W_s_.declare(params_, "readout.W_s", 0, H, E, m.bias);
    W_y_.declare(params_, "readout.W_y", 0, E, E, false);
    W_c_.declare(params_, "readout.W_c", 0, 2 * H, E, false);
    norm_out_ = std::make_unique<NormSite>(params_, m.norm, 0, "readout.norm", "readout", E, 1);
    head_.declare(params_, "head", 0, E, vocab, m.bias);
    params_.finalize();

    Rng rng(uint64_t(c.seed), 1);
    net_.src_emb = params_.tensor(src_emb_);
    init_embedding(net_.src_emb, m, rng);
    for (Gru* gru : {enc_fwd_.get(), enc_bwd_.get()}) gru->init(params_, m, rng);
    net_.enc_fwd = enc_fwd_->cell(), net_.enc_bwd = enc_bwd_->cell();
    bind(init_, m, rng), net_.W_i = init_.W, net_.b_i = init_.bias;
    norm_init_->init(params_), net_.norm_init = norm_init_->row_norm();
    net_.tgt_emb = params_.tensor(tgt_emb_);
    init_embedding(net_.tgt_emb, m, rng);
    dec1_->init(params_, m, rng), net_.dec1 = dec1_->cell();
    attention_->init(params_, m, rng), net_.attention = attention_->cell();
    dec2_->init(params_, m, rng), net_.dec2 = dec2_->cell();
    bind(W_s_, m, rng), bind(W_y_, m, rng), bind(W_c_, m, rng);
    net_.W_s = W_s_.W, net_.b_s = W_s_.bias, net_.W_y = W_y_.W, net_.W_c = W_c_.W;
    norm_out_->init(params_), net_.norm_out = norm_out_->row_norm();
    bind(head_, m, rng), net_.W_o = head_.W, net_.b_o = head_.bias;
    net_.skip_padding = may_skip_padding(m.norm);
    for (const char* place : {"dec1.state_gates", "dec1.state_cand", "dec2.state_gates", "dec2.state_cand"})
      sites_by_step_.declare(0, place);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    NT_CHECK(batch.S > 0 && batch.src.size() == std::size_t(batch.B) * batch.S,
             "rnnsearch: the batch has no source (a seq2seq dataset fills Batch::src)");
    B_ = batch.B, T_ = batch.T, mask_ = batch.padded ? batch.mask.data() : nullptr;
    const Tensor<float> out = net_.logits(g,
                                          {batch.B, batch.src.data(), batch.src_mask.data(), batch.S,
                                           batch.tokens.data(), batch.T, batch.padded ? batch.mask.data() : nullptr},
                                          steps_);
    sites_by_step_.clear();
    for (std::size_t t = 0; t < steps_.dec1.size(); ++t) {
      const LiveRows::Step r = steps_.dec.at(int(t));
      const int* rows = r.all ? nullptr : r.batch;
      const auto &s1 = steps_.dec1[t], &s2 = steps_.dec2[t];
      sites_by_step_.record(0, s1.gh_in, s1.gh, rows), sites_by_step_.record(1, s1.ch_in, s1.ch, rows);
      sites_by_step_.record(2, s2.gh_in, s2.gh, rows), sites_by_step_.record(3, s2.ch_in, s2.ch, rows);
    }
    return out;
  }

  // The decoder's recurrent sites by target position.
  const std::vector<SiteCapture>& sites() const override { return sites_by_step_.gather(B_, T_, mask_); }

  std::vector<std::vector<float>*> buffers() override { return {}; }

 private:
  void bind(Linear& l, const ModelConfig& m, Rng& rng) {
    l.bind(params_);
    init_linear_weight(l.W, m, rng);
    l.zero_bias();
  }

  int src_emb_ = -1, tgt_emb_ = -1;
  std::unique_ptr<Gru> enc_fwd_, enc_bwd_, dec1_, dec2_;
  Linear init_, W_s_, W_y_, W_c_, head_;
  std::unique_ptr<NormSite> norm_init_, norm_out_;
  std::unique_ptr<AdditiveAttention> attention_;
  RnnSearchNet<float> net_;
  RnnSearchNet<float>::Steps steps_;
  StepSites sites_by_step_;
  int B_ = 0, T_ = 0;
  const float* mask_ = nullptr;
};

}  // namespace

// The shape of the model above: V vocabulary, S source and T = S + 1 target positions at the
// longest, E embedding width, H state width (annotations and attention 2H), B rows a batch.
ModelShape rnnsearch_shape(const RunConfig& c, int vocab, int) {
  const ModelConfig& m = c.model;
  const int64_t V = vocab, S = c.data.max_len, T = S + 1, E = m.emb_width(), H = m.d_model, B = c.train.batch_size;
  const int64_t bias = m.bias ? 1 : 0;
  auto np = [&](int64_t width) { return norm_site_params(m.norm, width); };
  auto gru = [&](int64_t d_in) { return 3 * H * d_in + 3 * H + 3 * H * H + 2 * (np(2 * H) + np(H)); };
  ModelShape s;
  // the embeddings, the encoder's GRUs, s0's layer, the decoder's GRUs, the attention, the readout, the head
  s.params = 2 * V * E + 2 * gru(E) + (2 * H * H + bias * H + np(H)) + gru(E) + gru(2 * H) +
             (4 * H * H + bias * 2 * H + 2 * H * H + 2 * H + 2 * np(2 * H)) +
             (E * H + bias * E + E * E + 2 * H * E + np(E)) + E * V + bias * V;
  // each with its gradient: per source row, both directions' input terms and their norms (12H),
  // their steps (rows taken, recurrent products and norms, state: 13H), the annotations and keys
  // (6H); per target row, GRU1's and GRU2's input terms (12H) and steps (26H), the query (4H), the
  // attention's tanh over the source (2H S), the context (2H), the readout (5E) and the logits (3V);
  // without a gradient, the real rows the whole-sequence products gather for their weights' gradients
  // (per source row the input twice each way and the annotations: 4E + 2H; per target row the input
  // twice, the readout's three inputs and the head's: 4E + 3H), counted as if every row were real
  s.activations =
      2 * (B * S * (2 * 25 * H + 6 * H + E) + B * T * (38 * H + 4 * H + 2 * H * S + 2 * H + 5 * E + 3 * V)) +
      B * S * (4 * E + 2 * H) + B * T * (4 * E + 3 * H);
  const double h = double(H), e = double(E);
  // per sequence: the encoder over S, s0, the keys, and per target position both GRUs, the query,
  // the attention over S, the readout and the head
  s.forward_flops = double(S) * 2 * 2 * (3 * h * e + 3 * h * h) + 2 * 2 * h * h + double(S) * 2 * 4 * h * h +
                    double(T) * (2 * (3 * h * e + 3 * h * h) + 2 * 2 * h * h + double(S) * 3 * 2 * h +
                                 2 * (6 * h * h + 3 * h * h) + 2 * (e * h + e * e + 2 * h * e) + 2 * e * double(V));
  s.smaller = fmt::format("data.max_len (= {}), model.d_model (= {}) or model.d_emb (= {})", S, H, E);
  return s;
}

std::unique_ptr<Model> make_rnnsearch(const RunConfig& c, int vocab, int) {
  return std::make_unique<RnnSearch>(c, vocab);
}

}  // namespace nt
