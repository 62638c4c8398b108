// embedding: y_n = table[ids_n]      backward  dtable[ids_n] += dy_n
#include <algorithm>

#include "core/check.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct EmbeddingContext {
  Tensor<T> y, table;
  const int32_t* ids;
};
template <class T>
void embedding_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const EmbeddingContext<T>*>(p);
  const int C = c.table.cols;
  if (writes_first(first, 0))
    std::fill(c.table.grad, c.table.grad + c.table.size(), T(0));  // a scatter: zero, then add
  // rows may repeat an id: the threads split the columns, so no two write the same element, and
  // each element adds its rows in order (the same result for any thread count)
  constexpr int kCols = 16;
#pragma omp parallel for schedule(static) if (int64_t(c.y.rows) * C >= 16384)
  for (int j0 = 0; j0 < C; j0 += kCols) {
    const int j1 = std::min(C, j0 + kCols);
    for (int n = 0; n < c.y.rows; ++n) {
      T* dst = c.table.grad + int64_t(c.ids[n]) * C;
      const T* src = c.y.grad + int64_t(n) * C;
      for (int j = j0; j < j1; ++j) dst[j] += src[j];
    }
  }
}
}  // namespace

template <class T>
Tensor<T> embedding(Graph<T>& g, Tensor<T> table, const int32_t* ids, int n) {
  Tensor<T> y = g.output(n, table.cols, table);
  for (int i = 0; i < n; ++i) NT_CHECK(ids[i] >= 0 && ids[i] < table.rows, "embedding: id out of range");
#pragma omp parallel for schedule(static) if (int64_t(n) * table.cols >= 16384)
  for (int i = 0; i < n; ++i)
    std::copy_n(table.data + int64_t(ids[i]) * table.cols, table.cols, y.data + int64_t(i) * table.cols);
  if (y.grad) g.record(embedding_backward_node<T>, EmbeddingContext<T>{y, table, ids}, {table.grad});
  return y;
}

template Tensor<float> embedding(Graph<float>&, Tensor<float>, const int32_t*, int);
template Tensor<double> embedding(Graph<double>&, Tensor<double>, const int32_t*, int);

}  // namespace nt
