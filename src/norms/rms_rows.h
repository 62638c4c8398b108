// What RMSNorm (rmsnorm.cpp) and partial RMSNorm (prmsnorm.cpp) share: the row loops of their
// kernels. Both scale each row by rstd = 1 / sqrt(mean square + eps) and then by gamma; they differ
// in the features the mean square reads (all C, or the first k) and so in dx's second term, which
// each passes in as it writes it (the same float operations as before the loops were shared).
// Included by those two .cpp files only: it brings Eigen with it (core/eigen.h).
#pragma once
#include <cmath>

#include "core/eigen.h"
#include "core/parallel.h"

namespace nt {

// y = x * rstd * gamma per row, rstd = 1 / sqrt(mean_square(row) + eps); gamma (C) or nullptr.
// Buffers: x, y (N, C); rstd (N).
template <class T, class MeanSquare>
void rms_rows_forward(T* y, T* rstd, const T* x, const T* gamma, int N, int C, T eps, MeanSquare mean_square) {
#pragma omp parallel for schedule(static) num_threads(threads_for(int64_t(N) * C))
  for (int n = 0; n < N; ++n) {
    const auto xr = CRowVecMap<T>(x + int64_t(n) * C, C).array();
    const T r = T(1) / std::sqrt(mean_square(xr) + eps);
    auto yr = RowVecMap<T>(y + int64_t(n) * C, C).array();
    yr = xr * r;
    if (gamma) yr *= CRowVecMap<T>(gamma, C).array();
    rstd[n] = r;
  }
}

// dgamma += dy * xhat over the rows; dx by dx_row(write, dx row, dnorm, xhat, rstd) with dnorm =
// dy * gamma, write whether dx is written (not added to). partial: (row_blocks(N, C), 2C) scratch:
// per block of rows the sums of dgamma, and a row of dnorm; the blocks' sums added in block order
// (core/parallel.h).
template <class T, class DxRow>
void rms_rows_backward(T* dx, T* dgamma, T* partial, const T* dy, const T* x, const T* rstd, const T* gamma, int N,
                       int C, unsigned first, DxRow dx_row) {
  const int blocks = row_blocks(N, C);
  for_row_blocks(N, blocks, [&](int block, int begin, int end) {
    T* mine = partial + int64_t(block) * 2 * C;
    auto dgamma_part = RowVecMap<T>(mine, C).array();
    auto dnorm = RowVecMap<T>(mine + C, C).array();
    dgamma_part.setZero();
    for (int n = begin; n < end; ++n) {
      const auto dyr = CRowVecMap<T>(dy + int64_t(n) * C, C).array();
      const auto xhat = CRowVecMap<T>(x + int64_t(n) * C, C).array() * rstd[n];
      dgamma_part += dyr * xhat;
      if (!dx) continue;
      if (gamma) dnorm = dyr * CRowVecMap<T>(gamma, C).array();
      else dnorm = dyr;
      dx_row(writes_first(first, 0), RowVecMap<T>(dx + int64_t(n) * C, C).array(), dnorm, xhat, rstd[n]);
    }
  });
  add_blocks(partial, blocks, 2 * C, C);  // the blocks' sums into block 0's, then written or added
  if (dgamma) put(writes_first(first, 1), RowVecMap<T>(dgamma, C), CRowVecMap<T>(partial, C));
}

}  // namespace nt
