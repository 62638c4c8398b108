#include <cmath>
#include <vector>

#include "core/check.h"
#include "model/init.h"

namespace nt {

// Modified Gram-Schmidt on the rows of a Gaussian matrix: the rows come out orthonormal, and the
// matrix is Q^T of the QR of its transpose with R's diagonal positive, Haar-distributed.
void init_orthogonal(Tensor<float> w, Rng& rng) {
  NT_CHECK(w.rows == w.cols, "init_orthogonal: the matrix must be square");
  const int n = w.rows;
  std::vector<double> a(std::size_t(n) * n);
  for (double& v : a) v = rng.normal();
  for (int i = 0; i < n; ++i) {
    double* ri = a.data() + std::size_t(i) * n;
    for (int k = 0; k < i; ++k) {
      const double* rk = a.data() + std::size_t(k) * n;
      double dot = 0;
      for (int j = 0; j < n; ++j) dot += ri[j] * rk[j];
      for (int j = 0; j < n; ++j) ri[j] -= dot * rk[j];
    }
    double norm = 0;
    for (int j = 0; j < n; ++j) norm += ri[j] * ri[j];
    norm = std::sqrt(norm);
    for (int j = 0; j < n; ++j) ri[j] /= norm;
  }
  for (std::size_t i = 0; i < a.size(); ++i) w.data[i] = float(a[i]);
}

}  // namespace nt
