// A whole model against a PyTorch golden file (tests/golden/*.json): its parameters set from the
// file ("p:<layer>:<name>", normtool's names) and its gradients compared with the file's ("g:...").
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/graph.h"
#include "data/dataset.h"
#include "golden.h"
#include "model/model.h"
#include "ops/ops.h"

namespace nt::test {

// Every parameter from the file; fails when the file and the model disagree on a size or on the
// floats in all (a parameter PyTorch's model has and normtool's lacks).
inline void load_parameters(const Golden& ref, Model& model) {
  ParamStore<float>& ps = model.params();
  std::size_t floats = 0;
  for (int i = 0; i < ps.count(); ++i) {
    const auto& info = ps.info(i);
    const std::vector<float> v = ref.values("p:" + std::to_string(info.layer) + ":" + info.name);
    ASSERT_EQ(v.size(), info.size()) << info.name;
    std::copy(v.begin(), v.end(), ps.data() + info.offset);
    floats += v.size();
  }
  EXPECT_EQ(floats, ref.parameter_floats()) << "the golden's parameters are not the model's";
}

// Every parameter's gradient: float32 sums in another order than PyTorch's, through a few layers
// or steps, so 1e-4.
inline void expect_gradients(const Golden& ref, Model& model) {
  ParamStore<float>& ps = model.params();
  for (int i = 0; i < ps.count(); ++i) {
    const auto& info = ps.info(i);
    ref.expect_close("g:" + std::to_string(info.layer) + ":" + info.name, ps.grad() + info.offset, 1e-4, 1e-4);
  }
}

// Logits, loss (cross-entropy over the batch's mask, every target when it has none) and every
// gradient of the model on `batch`, against the golden file; `g` holds the forward's tape. The
// logits at the real tokens only: a padded batch's products skip the padding's rows (ops.h, RealRows).
inline void expect_golden(const Golden& ref, Model& model, const Batch& batch, Graph<float>& g) {
  Tensor<float> logits = model.logits(g, batch);
  std::vector<float> ones(batch.targets.size(), 1.0f);
  const std::vector<float>& w = batch.mask.empty() ? ones : batch.mask;
  Tensor<float> weight{const_cast<float*>(w.data()), nullptr, int(w.size()), 1};
  Tensor<float> loss = cross_entropy(g, logits, batch.targets.data(), weight);
  model.params().zero_grad();
  g.backward(loss);
  const float* real = batch.real_tokens();
  const std::vector<float> real_rows = real ? std::vector<float>(real, real + batch.targets.size()) : w;
  ref.expect_close("logits", logits.data, 1e-5, 1e-4, real ? &real_rows : nullptr);
  ref.expect_close("loss", loss.data, 1e-6, 1e-5);
  expect_gradients(ref, model);
}

}  // namespace nt::test
