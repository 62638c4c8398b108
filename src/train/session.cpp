#include "train/session.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "core/number_format.h"
#include "core/threads.h"
#include "ops/ops.h"
#include "train/schedule.h"

namespace nt {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::shared_ptr<const Dataset> load(const RunConfig& c) { return make_dataset(c); }

// While it lives, the parameters hold their values rounded to the run's format (what a bf16 or
// fp16 forward reads); master keeps the fp32 ones, put back when it ends. fp32: nothing.
class FormatWeights {
 public:
  FormatWeights(ParamStore<float>& ps, Precision p, std::vector<float>& master) : ps_(ps), master_(master) {
    if (p == Precision::fp32) return;
    active_ = true;
    master_.assign(ps.data(), ps.data() + ps.numel());
    round_in_place(p, ps.data(), ps.numel());
  }
  ~FormatWeights() {
    if (active_) std::copy(master_.begin(), master_.end(), ps_.data());
  }
  FormatWeights(const FormatWeights&) = delete;
  FormatWeights& operator=(const FormatWeights&) = delete;

 private:
  ParamStore<float>& ps_;
  std::vector<float>& master_;
  bool active_ = false;
};

}  // namespace

Session::Session(const RunConfig& config) : Session(config, load(config)) {}

Session::Session(const RunConfig& c, std::shared_ptr<const Dataset> data)
    : config_(c),
      data_(std::move(data)),
      threads_(set_math_threads(c.train.threads)),
      eval_batches_(int(std::min<int64_t>(c.train.eval_batches, data_->val_rows() / c.train.batch_size))),
      model_(make_model(c, *data_)),
      optimizer_(c.train, model_->params().numel()),
      scaler_(c.train.precision),
      rng_(uint64_t(c.seed), 2) {
  if (shards_apply(c, threads_)) shards_ = std::make_unique<Shards>(c, *data_, std::min(threads_, c.train.batch_size));
  if (eval_batches_ < 1)
    throw DataError(fmt::format("{}: the validation split has {} rows, fewer than train.batch_size = {}",
                                data_source(c.data), data_->val_rows(), c.train.batch_size));
  int64_t eval_targets = 0;
  for (int i = 0; i < eval_batches_; ++i) {
    data_->val_batch(i, c.train.batch_size, eval_batch_);
    eval_targets += counted_targets(eval_batch_);
  }
  if (eval_targets == 0)
    throw DataError(
        fmt::format("{}: the first {} validation rows, which every evaluation reads ({} batches of "
                    "train.batch_size = {}; train.eval_batches = {}), hold no target, so no evaluation "
                    "could measure the model (data.layout = padded: a document of one byte has none; "
                    "model.arch encoder: data.mask_prob chose no position)",
                    data_source(c.data), int64_t(eval_batches_) * c.train.batch_size, eval_batches_, c.train.batch_size,
                    c.train.eval_batches));
}

void Session::next_batch() {
  // make_dataset refuses data on which a batch holds no target as likely as not, so this many in a
  // row is data the check did not see (a dataset given to the session), not chance
  constexpr int kMaxDraws = 64;
  for (int draw = 1;; ++draw) {
    data_->train_batch(rng_, config_.train.batch_size, batch_);
    if (counted_targets(batch_) > 0) return;
    ++batches_without_target_;
    if (draw == kMaxDraws)
      throw DataError(
          fmt::format("{}: {} training batches in a row held no target", data_source(config_.data), kMaxDraws));
  }
}

BatchLoss Session::forward_backward(const Batch& batch) { return forward_backward(batch, /*sharded=*/false); }

BatchLoss Session::forward_backward(const Batch& batch, bool sharded) {
  ParamStore<float>& ps = model_->params();
  const Precision p = config_.train.precision;
  BatchLoss r;
  {
    FormatWeights weights(ps, p, master_);
    if (sharded) {
      r = shards_->forward_backward(*model_, graph_, batch, float(scaler_.scale()), data_->reports_accuracy());
    } else {
      ps.zero_grad();
      graph_.reset();
      graph_.set_mode(/*training=*/true, /*grad=*/true);
      r = forward_loss(graph_, *model_, batch, data_->reports_accuracy());
      graph_.backward(r.loss, float(scaler_.scale()));
    }
  }
  round_in_place(p, ps.grad(), ps.numel());  // the weights' gradients come out of the products in the format
  r.overflow = !scaler_.unscale(ps.grad(), ps.numel());
  return r;
}

BatchLoss Session::forward(const Batch& batch, bool training) {
  graph_.reset();
  graph_.set_mode(training, /*grad=*/false);
  FormatWeights weights(model_->params(), config_.train.precision, master_);
  return forward_loss(graph_, *model_, batch, data_->reports_accuracy());
}

std::vector<float> Session::logits(const Batch& batch, bool training) {
  graph_.reset();
  graph_.set_mode(training, /*grad=*/false);
  FormatWeights weights(model_->params(), config_.train.precision, master_);
  const Tensor<float> out = model_->logits(graph_, batch);
  return std::vector<float>(out.data, out.data + int64_t(out.rows) * out.cols);
}

void Session::update(double lr) {
  ParamStore<float>& ps = model_->params();
  if (config_.train.grad_clip > 0)
    clip_to_norm(ps.grad(), ps.numel(), global_norm(ps.grad(), ps.numel()), config_.train.grad_clip);
  optimizer_.step(ps.data(), ps.grad(), lr);
}

StepResult Session::step(const std::function<void()>& inspect) {
  next_batch();
  return step_on(batch_, inspect);
}

StepResult Session::step_on(const Batch& batch, const std::function<void()>& inspect) {
  if (counted_targets(batch) == 0)  // its loss would be 0, and at step 0 the divergence baseline
    throw std::invalid_argument("Session::step_on: a batch without a counted target");
  ParamStore<float>& ps = model_->params();
  StepResult r;
  auto t0 = Clock::now();
  const bool sharded = shards_ != nullptr && batch.B >= 2;  // a one-row batch has nothing to split
  const BatchLoss b = forward_backward(batch, sharded);
  r.loss = b.loss.data[0];
  r.correct = b.correct;
  r.grad_norm = global_norm(ps.grad(), ps.numel());
  r.lr = learning_rate(config_.train, t_);
  r.loss_scale = scaler_.scale();
  if (t_ == 0) first_loss_ = r.loss;
  // a non-finite gradient norm is divergence too (clipping by it would zero every update); fp16's
  // overflow is the loss scaler's to handle (a skipped step)
  r.diverged =
      !std::isfinite(r.loss) || r.loss > 1e3 * std::abs(first_loss_) || (!b.overflow && !std::isfinite(r.grad_norm));
  r.skipped = b.overflow && !r.diverged;
  r.ms = ms_since(t0);
  if (inspect) {
    if (sharded) forward(batch, /*training=*/true);  // the model's sites: the whole batch's
    inspect();
  }
  if (r.diverged) return r;
  t0 = Clock::now();
  if (!r.skipped) {
    if (config_.train.grad_clip > 0) clip_to_norm(ps.grad(), ps.numel(), r.grad_norm, config_.train.grad_clip);
    optimizer_.step(ps.data(), ps.grad(), r.lr);
  }
  scaler_.update(r.skipped);
  r.ms += ms_since(t0);
  ++t_;  // a skipped step is a step of the schedule and of the data stream, as in PyTorch's loop
  return r;
}

void Session::save_state(ByteWriter& w) {
  w.put(int32_t(t_));
  w.put(first_loss_);
  for (uint64_t s : rng_.state()) w.put(s);
  w.put(batches_without_target_);
  w.put_array(params().data(), params().numel());
  optimizer_.save(w);
  const std::vector<std::vector<float>*> buffers = model_->buffers();
  w.put(uint32_t(buffers.size()));
  for (const std::vector<float>* b : buffers) w.put_array(*b);
  scaler_.save(w);
}

void Session::load_state(ByteReader& r) {
  t_ = r.get<int32_t>();
  first_loss_ = r.get<double>();
  std::array<uint64_t, 4> s;
  for (uint64_t& x : s) x = r.get<uint64_t>();
  if (s == std::array<uint64_t, 4>{})  // xoshiro's fixed point: every draw 0, Rng::below would never return
    throw std::invalid_argument("a data stream state of all zeros, which no run has");
  rng_.set_state(s);
  batches_without_target_ = r.get<int64_t>();
  if (batches_without_target_ < 0) throw std::invalid_argument("a negative count of batches without a target");
  r.get_array(params().data(), params().numel());
  optimizer_.load(r);
  const std::vector<std::vector<float>*> buffers = model_->buffers();
  if (r.get<uint32_t>() != buffers.size()) throw std::length_error("another number of BatchNorm buffers");
  for (std::vector<float>* b : buffers) r.get_array(b->data(), b->size());
  scaler_.load(r);
}

Evaluation Session::evaluate() {
  double loss_sum = 0;
  int64_t correct = 0;
  Evaluation e;
  for (int i = 0; i < eval_batches_; ++i) {
    data_->val_batch(i, config_.train.batch_size, eval_batch_);
    const BatchLoss r = forward(eval_batch_, /*training=*/false);
    const int64_t targets = counted_targets(eval_batch_);
    loss_sum += double(r.loss.data[0]) * targets;
    e.targets += targets;
    correct += r.correct;
  }
  e.loss = loss_sum / double(e.targets);  // e.targets > 0: the constructor checked
  e.acc = double(correct) / double(e.targets);
  return e;
}

}  // namespace nt
