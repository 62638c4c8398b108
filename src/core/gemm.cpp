#include "core/gemm.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/eigen.h"
#include "core/gemm_kernel.h"
#include "core/openblas.h"
#include "core/threads.h"


namespace nt {

namespace {

// C (M, N) = alpha op(A) op(B) + beta C in Eigen's kernels (compiled for this CPU), one thread.
template <class T>
void eigen_gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
                T* C, int ldc) {
  using Strided = Eigen::Map<const Mat<T>, 0, Eigen::OuterStride<>>;
  const Strided a(A, ta ? K : M, ta ? M : K, Eigen::OuterStride<>(lda)),
      b(B, tb ? N : K, tb ? K : N, Eigen::OuterStride<>(ldb));
  Eigen::Map<Mat<T>, 0, Eigen::OuterStride<>> c(C, M, N, Eigen::OuterStride<>(ldc));
  if (beta == T(0)) {
    if (ta && tb) c.noalias() = alpha * a.transpose() * b.transpose();
    else if (ta) c.noalias() = alpha * a.transpose() * b;
    else if (tb) c.noalias() = alpha * a * b.transpose();
    else c.noalias() = alpha * a * b;
    return;
  }
  if (beta != T(1)) c *= beta;
  if (ta && tb) c.noalias() += alpha * a.transpose() * b.transpose();
  else if (ta) c.noalias() += alpha * a.transpose() * b;
  else if (tb) c.noalias() += alpha * a * b.transpose();
  else c.noalias() += alpha * a * b;
}

// The same on the math threads: C's rows cut into blocks whose number M sets alone (up to 24,
// of 256 rows or more), the blocks split over the threads. Eigen's kernel sums a row's products
// in an order that depends on where the row falls in its block, so blocks cut per thread would
// give other bits at each thread count. Eigen's own threading is off (core/threads.cpp): it
// splits a product by the thread count too. Each block packs op(B) again: blocks of 64 rows cost
// lm-small's step 5% at one thread, of 256 rows nothing measurable.
template <class T>
void eigen_gemm_parallel(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb,
                         T beta, T* C, int ldc) {
  const int blocks = double(M) * N * K < double(1 << 18) ? 1 : std::clamp(M / 256, 1, 24);
  if (blocks == 1) {
    eigen_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(omp_in_parallel() ? 1 : std::min(omp_get_max_threads(), blocks))
  for (int b = 0; b < blocks; ++b) {
    const int r0 = int(int64_t(M) * b / blocks), m = int(int64_t(M) * (b + 1) / blocks) - r0;
    const T* a = ta ? A + r0 : A + int64_t(r0) * lda;  // op(A)'s rows r0.. : A's columns when transposed
    eigen_gemm(ta, tb, m, N, K, alpha, a, lda, B, ldb, beta, C + int64_t(r0) * ldc, ldc);
  }
}

enum class Backend { normtool, openblas, eigen };

// NORMTOOL_GEMM=normtool|openblas|eigen, else normtool's kernel for float where the build has it
// (core/gemm_kernel.h), and for double (the gradient checks) OpenBLAS unless it runs kernels
// narrower than the CPU's (an AVX-512 CPU it did not recognise, or OPENBLAS_CORETYPE set to an
// AVX2 core) or is not loaded (core/openblas.h: none, or an address-space limit): then Eigen's,
// compiled for this CPU.
template <class T>
Backend backend() {
  static const Backend b = [] {
    const char* env = std::getenv("NORMTOOL_GEMM");
    const std::string choice = env ? env : "";
    if (choice == "eigen") return Backend::eigen;
    if (choice == "openblas" && openblas()) return Backend::openblas;
    if (std::is_same_v<T, float> && gemm_kernel_available() && (choice.empty() || choice == "normtool"))
      return Backend::normtool;
    if (openblas() && (openblas_runs_avx512() || !__builtin_cpu_supports("avx512f"))) return Backend::openblas;
    return Backend::eigen;
  }();
  return b;
}

// C's rows = the bias (beta 0) or C's rows + the bias: before a library's product, which adds
template <class T>
void add_bias_rows(T* C, int M, int N, int ldc, T beta, const T* bias) {
#pragma omp parallel for schedule(static) if (int64_t(M) * N >= 16384)
  for (int i = 0; i < M; ++i) {
    T* c = C + int64_t(i) * ldc;
    for (int j = 0; j < N; ++j) c[j] = beta == T(0) ? bias[j] : beta * c[j] + bias[j];
  }
}

}  // namespace

const char* gemm_backend() {
  switch (backend<float>()) {
    case Backend::normtool: return __builtin_cpu_supports("avx512f") ? "normtool-avx512" : "normtool-avx2";
    case Backend::openblas: return openblas_core();
    default: return __builtin_cpu_supports("avx512f") ? "eigen-avx512" : "eigen";
  }
}

template <class T>
void gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta, T* C,
          int ldc, const T* bias, const T* prepared) {
  const Backend b = backend<T>();
  if constexpr (std::is_same_v<T, float>) {
    if (b == Backend::normtool)
      return gemm_kernel(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, bias, prepared);
  }
  if (bias) {
    add_bias_rows(C, M, N, ldc, beta, bias);
    beta = T(1);
  }
  if (b == Backend::openblas) {
    const OpenBlas* o = openblas();
    const int a_op = ta ? kCblasTrans : kCblasNoTrans, b_op = tb ? kCblasTrans : kCblasNoTrans;
    if constexpr (std::is_same_v<T, float>)
      o->sgemm(kCblasRowMajor, a_op, b_op, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
      o->dgemm(kCblasRowMajor, a_op, b_op, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  eigen_gemm_parallel(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
std::size_t prepared_size(bool tb, int K, int N) {
  if constexpr (std::is_same_v<T, float>)
    if (backend<T>() == Backend::normtool) return gemm_kernel_panels(tb, K, N);
  return 0;
}

template <class T>
void prepare_b(bool tb, int K, int N, const T* B, int ldb, T* prepared) {
  if constexpr (std::is_same_v<T, float>)
    if (backend<T>() == Backend::normtool) gemm_kernel_pack(tb, K, N, B, ldb, prepared);
}

template <class T>
void transpose(const T* src, int rows, int cols, int lds, T* dst, int ldd) {
  if constexpr (std::is_same_v<T, float>) {
    transpose_floats(src, rows, cols, lds, dst, ldd);
  } else {
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) dst[int64_t(c) * ldd + r] = src[int64_t(r) * lds + c];
  }
}

template void transpose(const float*, int, int, int, float*, int);
template void transpose(const double*, int, int, int, double*, int);
template void gemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int,
                   const float*, const float*);
template void gemm(bool, bool, int, int, int, double, const double*, int, const double*, int, double, double*, int,
                   const double*, const double*);
template std::size_t prepared_size<float>(bool, int, int);
template std::size_t prepared_size<double>(bool, int, int);
template void prepare_b(bool, int, int, const float*, int, float*);
template void prepare_b(bool, int, int, const double*, int, double*);

}  // namespace nt
