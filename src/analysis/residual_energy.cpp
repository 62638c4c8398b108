#include "analysis/residual_energy.h"

#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <string>

#include "config/config.h"
#include "core/graph.h"
#include "core/rng.h"
#include "data/dataset.h"
#include "model/model.h"

namespace nt {

std::vector<double> residual_energy(RunConfig c, const char* place, int inits) {
  const auto data = make_dataset(c);
  std::vector<double> energy(c.model.n_layers, 0.0);
  const int batches = 2;
  for (int seed = 1; seed <= inits; ++seed) {
    c.seed = seed;
    const auto model = make_model(c, *data);
    Rng rng(uint64_t(seed), 3);
    Batch batch;
    for (int b = 0; b < batches; ++b) {
      data->train_batch(rng, c.train.batch_size, batch);
      Graph<float> g(true, false);
      model->logits(g, batch);
      for (const SiteCapture& s : model->sites()) {
        if (std::string(s.place) != place || s.layer >= c.model.n_layers) continue;
        double e = 0;
        for (int64_t i = 0; i < s.in.size(); ++i) e += double(s.in.data[i]) * s.in.data[i];
        energy[s.layer] += e / double(s.in.size()) / (batches * inits);
      }
    }
  }
  return energy;
}

ResidualEnergy xiong_residual_energy(int L, int d, int inits) {
  auto at = [&](const char* placement) {
    return load_config("{}", "e7",
                       {"data.dataset=synthetic-lm", "data.seq_len=32", fmt::format("model.n_layers={}", L),
                        fmt::format("model.d_model={}", d), "model.n_heads=4", fmt::format("model.d_ff={}", d),
                        "model.activation=relu", fmt::format("model.init_std={}", 1 / std::sqrt(double(d))),
                        "train.batch_size=16", "model.norm.eps=0", std::string("model.norm.placement=") + placement});
  };
  ResidualEnergy r{residual_energy(at("post"), "ffn", inits), residual_energy(at("pre"), "attn", inits), {}};
  std::vector<double> layers(L);
  std::iota(layers.begin(), layers.end(), 0.0);
  r.pre_fit = linear_fit(layers, r.pre);
  return r;
}

}  // namespace nt
