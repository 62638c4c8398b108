// A model's shape (model/shape.h) is its family's description: the parameters it counts are the
// parameters the built model has, for every ready config, and the dataset sizes it is built for
// are the sizes the datasets have.
#include <gtest/gtest.h>

#include <filesystem>

#include "data/dataset.h"
#include "model/model.h"
#include "model/shape.h"

namespace nt {
namespace {

int64_t built_params(const RunConfig& c) {
  const DataSizes d = data_sizes(c.data);
  const std::unique_ptr<Model> model = make_model(c, d.inputs, d.outputs);
  int64_t n = 0;
  for (int i = 0; i < model->params().count(); ++i) n += int64_t(model->params().info(i).size());
  return n;
}

TEST(ModelShape, CountsTheParametersOfEveryReadyConfig) {
  int configs = 0;
  for (const char* dir : {"configs", "configs/smoke"})
    for (const auto& entry : std::filesystem::directory_iterator(std::string(NORMTOOL_SOURCE_DIR) + "/" + dir)) {
      if (entry.path().extension() != ".json") continue;
      const Arch arch = load_config_file(entry.path().string(), {}).model.arch;
      for (const char* norm : {"none", "layernorm", "rmsnorm", "deepnorm"}) {
        // a transformer residual scheme
        if ((arch == Arch::mlp || arch == Arch::rnn) && std::string(norm) == "deepnorm") continue;
        const RunConfig c = load_config_file(entry.path().string(), {std::string("model.norm.type=") + norm});
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

TEST(ModelShape, DataSizesAreTheDatasetsSizes) {
  for (const char* dataset : {"synthetic-lm", "synthetic-classify"}) {
    const RunConfig c = load_config_file("", {std::string("data.dataset=") + dataset,
                                              std::string("model.arch=") + (dataset[10] == 'l' ? "transformer" : "mlp")});
    const DataSizes d = data_sizes(c.data);
    const std::unique_ptr<Dataset> data = make_dataset(c);
    EXPECT_EQ(d.inputs, data->input_dim()) << dataset;
    EXPECT_EQ(d.outputs, data->classes()) << dataset;
  }
}

}  // namespace
}  // namespace nt
