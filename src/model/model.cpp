// The model families: each one's constructor and shape, in the family's own file.
#include "model/model.h"

#include <fmt/format.h>

#include "core/check.h"
#include "model/shape.h"
#include "norms/norms.h"

namespace nt {

std::unique_ptr<Model> make_transformer(const RunConfig& config, int vocab);  // transformer.cpp
ModelShape transformer_shape(const RunConfig& config, int vocab);
std::unique_ptr<Model> make_encoder_decoder(const RunConfig& config, int vocab);  // encoder_decoder.cpp
ModelShape encoder_decoder_shape(const RunConfig& config, int vocab);
std::unique_ptr<Model> make_rnn(const RunConfig& config, int vocab);  // rnn.cpp
ModelShape rnn_shape(const RunConfig& config, int vocab);
std::unique_ptr<Model> make_rnnsearch(const RunConfig& config, int vocab);  // rnnsearch.cpp
ModelShape rnnsearch_shape(const RunConfig& config, int vocab);
std::unique_ptr<Model> make_mlp(const RunConfig& config, int inputs, int classes);  // mlp.cpp
ModelShape mlp_shape(const RunConfig& config, int inputs, int classes);

ModelShape model_shape(const RunConfig& c, int inputs, int outputs) {
  if (c.model.arch == Arch::mlp) return mlp_shape(c, inputs, outputs);
  if (c.model.arch == Arch::encoder_decoder) return encoder_decoder_shape(c, inputs);
  if (c.model.arch == Arch::rnn) return rnn_shape(c, inputs);
  if (c.model.arch == Arch::rnnsearch) return rnnsearch_shape(c, inputs);
  return transformer_shape(c, inputs);  // transformer, encoder
}

ModelShape model_shape(const RunConfig& c) {
  const DataSizes d = data_sizes(c.data);
  return model_shape(c, d.inputs, d.outputs);
}

std::unique_ptr<Model> make_model(const RunConfig& c, int inputs, int classes) {
  std::unique_ptr<Model> model = c.model.arch == Arch::mlp               ? make_mlp(c, inputs, classes)
                                 : c.model.arch == Arch::encoder_decoder ? make_encoder_decoder(c, inputs)
                                 : c.model.arch == Arch::rnn             ? make_rnn(c, inputs)
                                 : c.model.arch == Arch::rnnsearch       ? make_rnnsearch(c, inputs)
                                                                         : make_transformer(c, inputs);
  int64_t params = 0;  // without the alignment between them
  for (int i = 0; i < model->params().count(); ++i) params += int64_t(model->params().info(i).size());
  const int64_t described = model_shape(c, inputs, classes).params;
  NT_CHECK(params == described, fmt::format("the model has {} parameters, its shape says {}", params, described));
  return model;
}

int64_t norm_site_params(const NormConfig& norm, int64_t width) {
  if (norm.type == NormType::none || !norm.affine) return 0;
  const NormDesc& d = norm_desc(norm.type);  // the gain and bias shapes the kind describes
  return param_count(d.gain, int(width)) + (norm.bias ? param_count(d.bias, int(width)) : 0);
}

}  // namespace nt
