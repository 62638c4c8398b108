// Eigen views over normtool's raw buffers. Only .cpp files include this header, so the
// Eigen templates are compiled where they are used and nowhere else.
#pragma once
#include <Eigen/Core>

#include "core/tensor.h"

namespace nt {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatMap = Eigen::Map<Mat<T>>;
template <class T>
using CMatMap = Eigen::Map<const Mat<T>>;
template <class T>
using RowVecMap = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
template <class T>
using CRowVecMap = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;

template <class T>
using VecMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;  // elementwise work on a buffer's run
template <class T>
using CVecMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <class T>
MatMap<T> data_of(const Tensor<T>& t) { return MatMap<T>(t.data, t.rows, t.cols); }

// A gradient written on first use (core/graph.h): dst = src when the node writes it first, else
// dst += src. dst may be a .noalias() view.
template <class Dst, class Src>
void put(bool first, Dst&& dst, const Src& src) {
  if (first) dst = src;
  else dst += src;
}

}  // namespace nt
