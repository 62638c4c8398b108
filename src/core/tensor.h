// Tensor: a non-owning, row-major 2-D view with an optional gradient buffer.
//
// Every activation in normtool is a matrix: a batch of sequences is (B*T, C), an attention
// head layout is (B*NH*T, hs), a scalar loss is (1, 1). Ops that need more structure (the
// batch and time axes of batchnorm, the heads of attention) take the sizes as arguments.
// The memory belongs to a Graph's arena (activations) or to a ParamStore (parameters).
#pragma once
#include <cstdint>

namespace nt {

template <class T>
struct Tensor {
  T* data = nullptr;  // (rows, cols), row-major
  T* grad = nullptr;  // same shape; nullptr when no gradient flows to this tensor
  int rows = 0;
  int cols = 0;

  int64_t size() const { return int64_t(rows) * cols; }
  bool requires_grad() const { return grad != nullptr; }
  T& operator()(int r, int c) const { return data[int64_t(r) * cols + c]; }
};

}  // namespace nt
