#include "model/model.h"

namespace nt {

std::unique_ptr<Model> make_transformer(const RunConfig& config, int vocab);   // transformer.cpp
std::unique_ptr<Model> make_mlp(const RunConfig& config, int inputs, int classes);  // mlp.cpp

std::unique_ptr<Model> make_model(const RunConfig& c, int inputs, int classes) {
  if (c.model.arch == Arch::transformer) return make_transformer(c, inputs);
  return make_mlp(c, inputs, classes);
}

}  // namespace nt
