// The model families: each one's constructor and shape, in the family's own file, found through
// the list of families (config/arch.h).
#include "model/model.h"

#include <fmt/format.h>

#include "config/arch.h"
#include "core/check.h"
#include "model/shape.h"
#include "norms/norms.h"

namespace nt {

// Every family's file defines these two (model/<id>.cpp); inputs: the vocabulary or the features.
#define NT_DECLARE_FAMILY(id, ...)                                                      \
  std::unique_ptr<Model> make_##id(const RunConfig& config, int inputs, int outputs); \
  ModelShape id##_shape(const RunConfig& config, int inputs, int outputs);
NT_FAMILIES(NT_DECLARE_FAMILY)
#undef NT_DECLARE_FAMILY

namespace {

struct Family {
  std::unique_ptr<Model> (*make)(const RunConfig& config, int inputs, int outputs);
  ModelShape (*shape)(const RunConfig& config, int inputs, int outputs);
};
#define NT_FAMILY(id, ...) Family{make_##id, id##_shape},
constexpr Family kFamilies[] = {NT_FAMILIES(NT_FAMILY)};  // in Arch's order
#undef NT_FAMILY

}  // namespace

ModelShape model_shape(const RunConfig& c, int inputs, int outputs) {
  return kFamilies[int(c.model.arch)].shape(c, inputs, outputs);
}

ModelShape model_shape(const RunConfig& c) {
  const DataSizes d = data_sizes(c.data);
  return model_shape(c, d.inputs, d.outputs);
}

std::unique_ptr<Model> make_model(const RunConfig& c, int inputs, int classes) {
  std::unique_ptr<Model> model = kFamilies[int(c.model.arch)].make(c, inputs, classes);
  int64_t params = 0;  // without the alignment between them
  for (int i = 0; i < model->params().count(); ++i) params += int64_t(model->params().info(i).size());
  const int64_t described = model_shape(c, inputs, classes).params;
  NT_CHECK(params == described, fmt::format("the model has {} parameters, its shape says {}", params, described));
  return model;
}

int64_t norm_site_params(const NormConfig& norm, int64_t width) {
  const NormDesc& d = norm_desc(norm.type);  // the gain and bias shapes the kind describes, DyT's alpha (none: 0)
  if (!norm.affine) return d.alpha ? 1 : 0;
  return (d.alpha ? 1 : 0) + param_count(d.gain, int(width)) + (norm.bias ? param_count(d.bias, int(width)) : 0);
}

}  // namespace nt
