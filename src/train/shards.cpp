#include "train/shards.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "core/parallel.h"
#include "norms/norms.h"

namespace nt {

bool shards_apply(const RunConfig& c, int threads) {
  return c.train.parallel == Parallel::batch && threads >= 2 && c.train.batch_size >= 2 &&
         norm_desc(c.model.norm.type).reduction != Reduction::batch;  // statistics across the rows
}

Shards::Shards(const RunConfig& c, const Dataset& data, int count)
    : rows_(std::size_t(count)),
      losses_(std::size_t(count)),
      counted_(std::size_t(count)),
      errors_(std::size_t(count)) {
  for (int s = 1; s < count; ++s) replicas_.push_back({make_model(c, data), Graph<float>()});
}

BatchLoss Shards::forward_backward(Model& model, Graph<float>& graph, const Batch& batch, float loss_scale,
                                   bool count_correct) {
  const int P = std::min(int(rows_.size()), batch.B);
  for (int s = 0; s < P; ++s) batch.copy_rows(batch.B * s / P, batch.B * (s + 1) / P - batch.B * s / P, rows_[s]);
  int64_t total = 0;
  for (int s = 0; s < P; ++s) total += counted_[s] = counted_targets(rows_[s]);
  NT_CHECK(total > 0, "Shards::forward_backward: a batch without a counted target");  // Session::step_on refuses it
  ParamStore<float>& master = model.params();
#pragma omp parallel for schedule(static, 1) num_threads(P)
  for (int s = 0; s < P; ++s) {
    omp_set_num_threads(1);  // this shard's ops on this thread alone
    try {
      Model& m = s == 0 ? model : *replicas_[s - 1].model;
      Graph<float>& g = s == 0 ? graph : replicas_[s - 1].graph;
      ParamStore<float>& ps = m.params();
      if (s > 0) std::memcpy(ps.data(), master.data(), sizeof(float) * ps.numel());
      ps.zero_grad();
      g.reset();
      g.set_mode(/*training=*/true, /*grad=*/true);
      losses_[s] = forward_loss(g, m, rows_[s], count_correct);
      // a shard without a target: share 0, its loss 0 with no backward, so its gradients are 0
      g.backward(losses_[s].loss, loss_scale * float(double(counted_[s]) / double(total)));
    } catch (...) {
      errors_[s] = std::current_exception();
    }
  }
  std::exception_ptr first;  // the first shard's error, and none left for the next step
  for (std::exception_ptr& e : errors_)
    if (e) first = first ? first : e, e = nullptr;
  if (first) std::rethrow_exception(first);
  float* grad = master.grad();
  parallel_chunks(int64_t(master.numel()), [&](int64_t begin, int64_t n) {
    for (int s = 1; s < P; ++s) {
      const float* add = replicas_[s - 1].model->params().grad() + begin;
      for (int64_t i = 0; i < n; ++i) grad[begin + i] += add[i];
    }
  });
  BatchLoss r = losses_[0];
  double loss = 0;
  for (int s = 0; s < P; ++s) {
    loss += double(losses_[s].loss.data[0]) * double(counted_[s]) / double(total);
    if (s > 0) r.correct += losses_[s].correct;
  }
  r.loss.data[0] = float(loss);
  return r;
}

}  // namespace nt
