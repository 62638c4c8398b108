#include "model/model.h"

namespace nt {

std::unique_ptr<Model> make_transformer(const RunConfig& config, int vocab);   // transformer.cpp
std::unique_ptr<Model> make_mlp(const RunConfig& config, int inputs, int classes);  // mlp.cpp

std::unique_ptr<Model> make_model(const RunConfig& c, const Dataset& data) {
  if (c.model.arch == Arch::transformer) return make_transformer(c, data.input_dim());
  return make_mlp(c, data.input_dim(), data.classes());
}

}  // namespace nt
