#include "train/optimizer.h"

#include <Eigen/Core>

#include "core/parallel.h"

#include <algorithm>
#include <cmath>

namespace nt {

OptimizerState::OptimizerState(const TrainConfig& config, std::size_t n) : c_(config), m_(n, 0.0f) {
  if (c_.optimizer != Optimizer::sgd) v_.assign(n, 0.0f);
}

void OptimizerState::step(float* p, const float* g, double lr) {
  ++t_;
  const std::size_t n = m_.size();
  const float wd = float(c_.weight_decay);
  float* m = m_.data();
  if (c_.optimizer == Optimizer::sgd) {
    const float mu = float(c_.momentum), a = float(lr);
    parallel_chunks(int64_t(n), [&](int64_t begin, int64_t count) {
      for (int64_t i = begin; i < begin + count; ++i) {
        m[i] = mu * m[i] + (g[i] + wd * p[i]);
        p[i] -= a * m[i];
      }
    });
    return;
  }
  float* v = v_.data();
  const double b1 = c_.beta1, b2 = c_.beta2;
  const float fb1 = float(b1), fb2 = float(b2), eps = float(c_.adam_eps);
  const float step_size = float(lr / (1.0 - std::pow(b1, t_)));
  const float inv_sqrt_bc2 = float(1.0 / std::sqrt(1.0 - std::pow(b2, t_)));
  const bool decoupled = c_.optimizer == Optimizer::adamw;
  const float l2 = decoupled ? 0.0f : wd;
  if (decoupled) {  // AdamW's decay first, rounded on its own (torch.optim.AdamW: p.mul_(1 - lr wd))
    const float shrink = float(1.0 - lr * c_.weight_decay);
    parallel_chunks(int64_t(n), [=](int64_t begin, int64_t count) {
      for (int64_t i = begin; i < begin + count; ++i) p[i] *= shrink;
    });
  }
  // The arrays captured by value: read through references, every store could move them, and GCC
  // kept the loop scalar (it also needs -fno-math-errno for the sqrt: CMakeLists.txt)
  parallel_chunks(int64_t(n), [=](int64_t begin, int64_t count) {
    for (int64_t i = begin; i < begin + count; ++i) {
      const float gi = g[i] + l2 * p[i];
      m[i] = fb1 * m[i] + (1.0f - fb1) * gi;
      v[i] = fb2 * v[i] + (1.0f - fb2) * gi * gi;
      p[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_bc2 + eps);
    }
  });
}

void OptimizerState::save(ByteWriter& w) const {
  w.put(int32_t(t_));
  w.put_array(m_);
  w.put_array(v_);
}

void OptimizerState::load(ByteReader& r) {
  t_ = r.get<int32_t>();
  r.get_array(m_.data(), m_.size());
  r.get_array(v_.data(), v_.size());
}

double global_norm(const float* g, std::size_t n) {
  // float squares in Eigen's vectorized reduction over blocks of 4096, the blocks added in double:
  // the relative error stays near 1e-7 for any n
  return std::sqrt(parallel_sum(int64_t(n), [&](int64_t begin, int64_t count) {
    double sum = 0;
    for (int64_t i = begin; i < begin + count; i += 4096)
      sum += Eigen::Map<const Eigen::VectorXf>(g + i, Eigen::Index(std::min<int64_t>(4096, begin + count - i)))
                 .squaredNorm();
    return sum;
  }));
}

void clip_to_norm(float* g, std::size_t n, double norm, double max_norm) {
  const double coef = max_norm / (norm + 1e-6);
  if (coef >= 1.0) return;
  const float k = float(coef);
  parallel_chunks(int64_t(n), [&](int64_t begin, int64_t count) {
    for (int64_t i = begin; i < begin + count; ++i) g[i] *= k;
  });
}

}  // namespace nt
