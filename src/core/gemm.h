// gemm: C = alpha op(A) op(B) + beta C on row-major matrices (op: the matrix or its transpose),
// the one entry to the matrix products of the ops (linear, attention). With beta = 0, C is
// written without being read: a product that writes a gradient first (core/graph.h) needs no
// zeroing, where Eigen's `C = A * B` zeroes C and then adds the product. OpenBLAS's sgemm/dgemm
// or Eigen's product (its rows split over the math threads), as gemm_backend() says.
#pragma once

namespace nt {

template <class T>
void gemm(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
          T* C, int ldc);

// Which kernels run the products: OpenBLAS's family ("SkylakeX", "Haswell", ...) or "eigen-avx512" /
// "eigen". NORMTOOL_GEMM=openblas|eigen chooses; by default OpenBLAS, unless it runs kernels narrower
// than the CPU's AVX-512 (then Eigen's, compiled for this CPU, are faster: 172-180 GFLOP/s on one
// core against OpenBLAS's AVX2 118-122 at the model's shapes).
const char* gemm_backend();

}  // namespace nt
