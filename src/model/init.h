// Weight initialisation, seeded: N(0, std) draws in parameter order from one stream.
#pragma once
#include <cmath>

#include "core/rng.h"
#include "core/tensor.h"

namespace nt {

inline void init_normal(Tensor<float> t, double std, Rng& rng) {
  for (int64_t i = 0; i < t.size(); ++i) t.data[i] = float(std * rng.normal());
}

// Xavier (Glorot) normal with a gain: std = gain * sqrt(2 / (fan_in + fan_out)), W is (out, in).
inline void init_xavier_normal(Tensor<float> w, double gain, Rng& rng) {
  init_normal(w, gain * std::sqrt(2.0 / (w.rows + w.cols)), rng);
}

}  // namespace nt
