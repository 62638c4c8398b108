#include "core/gemm.h"

#ifdef NORMTOOL_OPENBLAS
#include <cblas.h>
#else
#include "core/eigen.h"
#endif

namespace nt {

#ifdef NORMTOOL_OPENBLAS

template <>
void gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B,
              ldb, beta, C, ldc);
}

template <>
void gemm(bool ta, bool tb, int M, int N, int K, double alpha, const double* A, int lda, const double* B, int ldb,
          double beta, double* C, int ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B,
              ldb, beta, C, ldc);
}

#else

template <class T>
void gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta, T* C,
          int ldc) {
  using Strided = Eigen::Map<const Mat<T>, 0, Eigen::OuterStride<>>;
  const Strided a(A, ta ? K : M, ta ? M : K, Eigen::OuterStride<>(lda)), b(B, tb ? N : K, tb ? K : N, Eigen::OuterStride<>(ldb));
  Eigen::Map<Mat<T>, 0, Eigen::OuterStride<>> c(C, M, N, Eigen::OuterStride<>(ldc));
  if (beta == T(0)) c.setZero();
  else if (beta != T(1)) c *= beta;
  if (ta && tb) c.noalias() += alpha * a.transpose() * b.transpose();
  else if (ta) c.noalias() += alpha * a.transpose() * b;
  else if (tb) c.noalias() += alpha * a * b.transpose();
  else c.noalias() += alpha * a * b;
}
template void gemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int);
template void gemm(bool, bool, int, int, int, double, const double*, int, const double*, int, double, double*, int);

#endif

}  // namespace nt
