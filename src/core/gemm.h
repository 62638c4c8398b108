// gemm: C = alpha op(A) op(B) + beta C on row-major matrices (op: the matrix or its transpose),
// the one entry to the matrix products of the ops (linear, attention). With beta = 0, C is
// written without being read: a product that writes a gradient first (core/graph.h) needs no
// zeroing, where Eigen's `C = A * B` zeroes C and then adds the product. OpenBLAS's sgemm/dgemm
// when normtool is built with it, Eigen's product otherwise.
#pragma once

namespace nt {

template <class T>
void gemm(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
          T* C, int ldc);

}  // namespace nt
