#include "core/params.h"

#include <algorithm>
#include <stdexcept>

#include "core/parallel.h"

namespace nt {

template <class T>
int ParamStore<T>::add(std::string name, int layer, int rows, int cols, bool follow) {
  if (finalized_) throw std::logic_error("ParamStore::add after finalize: " + name);
  Info info{std::move(name), layer, rows, cols, 0};
  std::size_t end = infos_.empty() ? 0 : infos_.back().offset + infos_.back().size();
  info.offset = follow ? end : (end + 15) / 16 * 16;  // 64-byte aligned starts for float
  infos_.push_back(std::move(info));
  return int(infos_.size()) - 1;
}

template <class T>
void ParamStore<T>::finalize() {
  std::size_t total = infos_.empty() ? 0 : infos_.back().offset + infos_.back().size();
  data_.assign(total, T(0));
  grad_.assign(total, T(0));
  finalized_ = true;
}

template <class T>
Tensor<T> ParamStore<T>::tensor(int id) {
  if (!finalized_) throw std::logic_error("ParamStore::tensor before finalize");
  const Info& i = infos_.at(id);
  return Tensor<T>{data_.data() + i.offset, grad_.data() + i.offset, i.rows, i.cols};
}

template <class T>
Tensor<T> ParamStore<T>::joined(int first, int count, int rows, int cols) {
  const Tensor<T> t = tensor(first);
  std::size_t n = 0;
  for (int i = first; i < first + count; ++i) {
    if (i > first && infos_.at(i).offset != infos_[i - 1].offset + infos_[i - 1].size())
      throw std::logic_error("ParamStore::joined: " + infos_[i].name + " does not follow " + infos_[i - 1].name);
    n += infos_.at(i).size();
  }
  if (n != std::size_t(rows) * cols) throw std::logic_error("ParamStore::joined: sizes do not add up");
  return Tensor<T>{t.data, t.grad, rows, cols};
}

template <class T>
void ParamStore<T>::zero_grad() {
  parallel_chunks(int64_t(grad_.size()), [&](int64_t begin, int64_t n) { std::fill_n(grad_.data() + begin, n, T(0)); });
}

template class ParamStore<float>;
template class ParamStore<double>;

}  // namespace nt
