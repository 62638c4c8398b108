// Recurrent language model (model.arch rnn), over the same byte rows as the transformer (input
// shifted by one), from the cells of model/blocks/:
//
//   x = emb[tokens]                                  (B*T, d_emb), no positions
//   each of n_layers cells, the state 0 at the start of each row:
//     gru:  gx, cx = the input terms of the whole row; for t: h_t = GRU(gx_t, cx_t, h_{t-1})
//     lstm: xg = norm(W_x x) + b of the whole row;     for t: h_t, c_t = LSTM(xg_t, h_{t-1}, c_{t-1})
//     x = [h_1 .. h_T]                               (B*T, d_model), batch-major
//   logits = W_o x + b_o
// Step t reads the rows b*T + t of the sequence (the GRU in place, gru_transition_rows; the LSTM
// through take_rows) and writes its state there (put_rows); backward through time is the tape's
// reverse. Statistics (stats.csv): per layer, the recurrent sites rnn.state_gates and
// rnn.state_cand (gru: U_g h, U_c h before and after their norms) or rnn.state and rnn.cell (lstm:
// W_h h, and c' before and after its norm), gathered by position from the steps when sites() is
// read. Init (model/init.h): model.init for the embedding and every weight (nematus: recurrent
// blocks orthogonal), biases 0, gains 1. Parameters are declared, and drawn, in this order: the
// embedding (layer 0); per layer its cell; the head (layer n_layers).
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "core/check.h"
#include "model/blocks/gru.h"
#include "model/blocks/lstm.h"
#include "model/init.h"
#include "model/layers.h"
#include "model/model.h"
#include "model/shape.h"
#include "model/step_sites.h"
#include "ops/ops.h"

namespace nt {

namespace {

class Rnn final : public Model {
 public:
  Rnn(const RunConfig& c, int vocab) : lstm_(c.model.cell == RnnCell::lstm), H_(c.model.d_model) {
    const ModelConfig& m = c.model;
    const int E = m.emb_width(), L = m.n_layers;
    emb_ = params_.add("emb.weight", 0, vocab, E);
    for (int l = 0; l < L; ++l) {
      const int d_in = l == 0 ? E : H_;
      if (lstm_) lstms_.push_back(std::make_unique<Lstm>(params_, m.norm, "lstm", l, d_in, H_));
      else grus_.push_back(std::make_unique<Gru>(params_, m.norm, "gru", l, d_in, H_));
    }
    head_.declare(params_, "head", L, H_, vocab);
    params_.finalize();

    Rng rng(uint64_t(c.seed), 1);
    emb_table_ = params_.tensor(emb_);
    init_embedding(emb_table_, m, rng);
    for (auto& cell : grus_) cell->init(params_, m, rng);
    for (auto& cell : lstms_) cell->init(params_, m, rng);
    head_.bind(params_);
    init_linear_weight(head_.W, m, rng);
    std::fill_n(head_.bias.data, head_.bias.size(), 0.0f);
    for (int l = 0; l < L; ++l)
      for (const char* place : lstm_ ? kLstmSites : kGruSites) steps_.declare(l, place);
    gru_steps_.reserve(c.data.seq_len), lstm_steps_.reserve(c.data.seq_len);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    const int B = batch.B, T = batch.T;
    B_ = B, T_ = T, mask_ = batch.real_tokens();
    steps_.clear();
    Tensor<float> x = embedding(g, emb_table_, batch.tokens.data(), B * T);
    for (std::size_t l = 0; l < grus_.size(); ++l) {
      x = grus_[l]->cell().run(g, x, B, T, gru_steps_);
      for (const auto& s : gru_steps_) steps_.record(2 * l, s.gh_in, s.gh), steps_.record(2 * l + 1, s.ch_in, s.ch);
    }
    for (std::size_t l = 0; l < lstms_.size(); ++l) {
      x = lstms_[l]->cell().run(g, x, B, T, lstm_steps_);
      for (const auto& s : lstm_steps_) steps_.record(2 * l, s.hg_in, s.hg), steps_.record(2 * l + 1, s.c, s.cn);
    }
    return head_(g, x);
  }

  // The recurrent sites, each gathered from its steps into batch-major rows b*T + t.
  const std::vector<SiteCapture>& sites() const override { return steps_.gather(B_, T_, mask_); }

  std::vector<std::vector<float>*> buffers() override { return {}; }

 private:
  static constexpr const char* kGruSites[2] = {"rnn.state_gates", "rnn.state_cand"};
  static constexpr const char* kLstmSites[2] = {"rnn.state", "rnn.cell"};

  bool lstm_;
  int H_;
  int emb_ = -1;
  Tensor<float> emb_table_;
  std::vector<std::unique_ptr<Gru>> grus_;
  std::vector<std::unique_ptr<Lstm>> lstms_;
  Linear head_;
  StepSites steps_;  // 2 per layer
  std::vector<GruCell<float>::Step> gru_steps_;    // the last layer's steps, reused
  std::vector<LstmCell<float>::Step> lstm_steps_;
  int B_ = 0, T_ = 0;
  const float* mask_ = nullptr;
};

}  // namespace

// The shape of the model above: V vocabulary, T positions, E embedding width, H state width, L
// layers, B rows a batch, N = B T.
ModelShape rnn_shape(const RunConfig& c, int vocab, int) {
  const ModelConfig& m = c.model;
  const bool lstm = m.cell == RnnCell::lstm;
  const int64_t V = vocab, T = c.data.seq_len, E = m.emb_width(), H = m.d_model, L = m.n_layers;
  const int64_t B = c.train.batch_size, N = B * T, k = lstm ? 4 : 3;  // gate blocks of H per cell
  const int64_t norms = lstm ? 2 * norm_site_params(m.norm, 4 * H) + norm_site_params(m.norm, H)
                             : 2 * (norm_site_params(m.norm, 2 * H) + norm_site_params(m.norm, H));
  const int64_t biases = lstm ? 4 * H : 3 * H;
  ModelShape s;
  // the embedding; per layer the input and recurrent weights, biases, norms; the head
  s.params = V * E + k * H * (E + (L - 1) * H) + L * (k * H * H + biases + norms) + H * V + V;
  // per row and layer, each with its gradient: the input terms and their norms (2kH), per step the
  // rows taken (kH), the recurrent products and their norms (2kH), the cell's outputs (lstm 3H,
  // gru H), the state put; the embedding and the logits
  s.activations = N * (L * 2 * (5 * k * H + 4 * H) + 2 * E + 3 * V);
  // per sequence and step: the input and recurrent products of each layer, the head
  s.forward_flops = double(T) * (2.0 * double(k * H * (E + (L - 1) * H) + L * k * H * H) + 2.0 * double(H * V));
  s.smaller = fmt::format("data.seq_len (= {}), model.d_model (= {}) or model.n_layers (= {})", T, H, L);
  return s;
}

std::unique_ptr<Model> make_rnn(const RunConfig& c, int vocab, int) { return std::make_unique<Rnn>(c, vocab); }

}  // namespace nt
