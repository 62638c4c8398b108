// A model's shape (model/shape.h) is its family's description: the parameters it counts are the
// parameters the built model has, for every ready config, and the dataset sizes it is built for
// are the sizes the datasets have.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "config/arch.h"
#include "core/params.h"
#include "data/dataset.h"
#include "model/model.h"
#include "model/shape.h"
#include "paths.h"

namespace nt {
namespace {

int64_t built_params(const RunConfig& c) {
  const DataSizes d = data_sizes(c.data);
  return int64_t(make_model(c, d.inputs, d.outputs)->params().parameter_count());
}

// summary.json's params: each parameter starts on a 64-byte boundary, and the padding between
// them is not a parameter (a ScaleNorm gain of one float was counted as 16)
TEST(ParamStore, CountsParametersWithoutTheAlignmentPadding) {
  ParamStore<float> ps;
  ps.add("g", 0, 1, 1);
  ps.add("w", 0, 2, 3);
  ps.add("b", 0, 1, 5, true);
  ps.finalize();
  EXPECT_EQ(ps.parameter_count(), 12u);
  EXPECT_EQ(ps.numel(), 16u + 6 + 5);  // g padded to 16 floats; b follows w
}

TEST(ModelShape, CountsTheParametersOfEveryReadyConfig) {
  int configs = 0;
  for (const char* dir : {"configs", "configs/smoke", "configs/presets"})
    for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() + "/" + dir)) {
      if (entry.path().extension() != ".json") continue;
      const RunConfig base = load_config_file(entry.path().string(), {});
      const Arch arch = base.model.arch;
      // peri, reordered, depth_scaling, unit_offset and postln-init take some norm types only (docs/config.md)
      const NormConfig& n = base.model.norm;
      const bool some_norms = n.placement == Placement::peri || n.placement == Placement::reordered ||
                              n.depth_scaling || n.unit_offset || base.model.init == Init::postln_init;
      for (const char* norm : {"none", "layernorm", "rmsnorm", "deepnorm"}) {
        if (!arch_desc(arch).has_stacks() && std::string(norm) == "deepnorm") continue;  // a stack's residual scheme
        RunConfig c;
        try {
          c = load_config_file(entry.path().string(), {std::string("model.norm.type=") + norm});
        } catch (const ConfigError&) {
          if (some_norms) continue;
          throw;
        }
        EXPECT_EQ(model_shape(c).params, built_params(c)) << entry.path() << " " << norm;
      }
      ++configs;
    }
  EXPECT_GE(configs, 20);
}

TEST(ModelShape, FinalNormAndAffineAreCounted) {
  const RunConfig pre = load_config_file("", {"model.final_norm=true"});
  const RunConfig none = load_config_file("", {"model.final_norm=false"});
  const RunConfig no_affine = load_config_file("", {"model.norm.affine=false"});
  EXPECT_EQ(model_shape(pre).params - model_shape(none).params, 2 * pre.model.d_model);
  EXPECT_EQ(model_shape(pre).params, built_params(pre));
  EXPECT_EQ(model_shape(none).params, built_params(none));
  EXPECT_EQ(model_shape(no_affine).params, built_params(no_affine));
}

// model.bias false drops every Linear's bias, model.norm.bias false every layernorm's bias, by
// value: C = 64, F = 256, V = 256, two blocks a stack (the defaults), mlp H = 256 over two layers.
TEST(ModelShape, LinearAndNormBiasesAreCounted) {
  struct Case {
    std::vector<std::string> family;
    int64_t linear_biases, norm_biases;  // floats
  };
  const int64_t C = 64, F = 256, V = 256, H = 256;
  const int64_t K =
      data_sizes(load_config_file("", {"data.dataset=synthetic-classify", "model.arch=mlp"}).data).outputs;
  const std::vector<Case> cases = {
      // per block q, k, v, out (4C), fc1 (F), fc2 (C); the head (V). Norms: two a block and the final one
      {{"data.dataset=synthetic-lm"}, 2 * (4 * C + F + C) + V, 5 * C},
      {{"data.dataset=synthetic-lm", "model.arch=encoder", "model.embed_norm=true"}, 2 * (4 * C + F + C) + V, 6 * C},
      // the decoder's blocks have a cross-attention (4C more) and a third norm; a final norm a stack
      {{"data.dataset=synthetic-seq2seq", "model.arch=encoder-decoder"},
       2 * (4 * C + F + C) + 2 * (8 * C + F + C) + V,
       (2 * 2 + 3 * 2 + 2) * C},
      {{"data.dataset=synthetic-classify", "model.arch=mlp"}, 2 * H + K, 2 * H},
  };
  for (const Case& k : cases) {
    auto with = [&](std::vector<std::string> more) {
      more.insert(more.begin(), k.family.begin(), k.family.end());
      return load_config_file("", more);
    };
    const RunConfig all = with({}), no_linear = with({"model.bias=false"}), no_norm = with({"model.norm.bias=false"});
    const RunConfig rms = with({"model.norm.type=rmsnorm"}),
                    rms_no_norm = with({"model.norm.type=rmsnorm", "model.norm.bias=false"});
    SCOPED_TRACE(k.family.back());
    EXPECT_EQ(model_shape(all).params - model_shape(no_linear).params, k.linear_biases);
    EXPECT_EQ(model_shape(all).params - model_shape(no_norm).params, k.norm_biases);
    EXPECT_EQ(model_shape(rms).params, model_shape(rms_no_norm).params);  // rmsnorm has no bias to drop
    for (const RunConfig* c : {&all, &no_linear, &no_norm, &rms_no_norm})
      EXPECT_EQ(model_shape(*c).params, built_params(*c));
  }
}

TEST(ModelShape, DataSizesAreTheDatasetsSizes) {
  for (const char* dataset : {"synthetic-lm", "synthetic-classify"}) {
    const RunConfig c =
        load_config_file("", {std::string("data.dataset=") + dataset,
                              std::string("model.arch=") + (dataset[10] == 'l' ? "transformer" : "mlp")});
    const DataSizes d = data_sizes(c.data);
    const std::unique_ptr<Dataset> data = make_dataset(c);
    EXPECT_EQ(d.inputs, data->input_dim()) << dataset;
    EXPECT_EQ(d.outputs, data->classes()) << dataset;
  }
}

}  // namespace
}  // namespace nt
