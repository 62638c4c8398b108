// gemm: C = alpha op(A) op(B) + beta C (+ a bias row added to every row) on row-major matrices
// (op: the matrix or its transpose), the one entry to the matrix products of the ops (linear,
// attention). With beta = 0, C is written without being read: a product that writes a gradient
// first (core/graph.h) needs no zeroing. The kernels, as gemm_backend() says: float products in
// normtool's own (core/gemm_kernel.h), double ones (the gradient checks) in OpenBLAS or Eigen.
//
// Products that share op(B) (a recurrence's weight, at every step) may have it prepared once:
// prepared_size floats (0: nothing to prepare, gemm takes B alone), 64-byte aligned (as
// the graph's arena gives), filled by prepare_b, then passed as gemm's `prepared` with the same B,
// unchanged since. The same bits as without.
#pragma once

#include <cstddef>

namespace nt {

template <class T>
void gemm(bool trans_a, bool trans_b, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
          T* C, int ldc, const T* bias = nullptr, const T* prepared = nullptr);

template <class T>
std::size_t prepared_size(bool trans_b, int K, int N);
template <class T>
void prepare_b(bool trans_b, int K, int N, const T* B, int ldb, T* prepared);

// dst (cols, rows; its rows ldd apart) = src (rows, cols; rows lds apart) transposed: for a
// product's operand that is needed the other way round more than once (attention's k and v).
template <class T>
void transpose(const T* src, int rows, int cols, int lds, T* dst, int ldd);

// Which kernels run the float products: "normtool-avx512" / "normtool-avx2" (core/gemm_kernel.h),
// OpenBLAS's family ("SkylakeX", "Haswell", ...) or "eigen-avx512" / "eigen".
// NORMTOOL_GEMM=normtool|openblas|eigen chooses. Measured on the models' shapes (one core of a
// Zen 5, build/bench/normtool_bench BM_Linear): normtool's kernel 0.9-1.1x the time of OpenBLAS's
// AVX-512 kernels and 0.7-0.8x Eigen's; OpenBLAS's AVX2 kernels, which Debian's 0.3.21 runs on a
// CPU it does not know, 1.5x.
const char* gemm_backend();

}  // namespace nt
