// Reads the PyTorch reference files written by scripts/dump_golden.py (tests/golden/*.json).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/tensor.h"
#include "paths.h"

namespace nt::test {

class Golden {
 public:
  explicit Golden(const std::string& name) {
    const std::string path = golden_dir() + "/" + name + ".json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("missing golden file " + path + " (run scripts/dump_golden.py)");
    json_ = nlohmann::json::parse(in);
    if (json_.at("format") != "normtool-golden" || json_.at("version") != 1)
      throw std::runtime_error(path + ": not a version-1 normtool golden file");
  }

  const nlohmann::json& config() const { return json_.at("config"); }

  std::vector<float> values(const std::string& key) const {
    std::vector<float> v;
    for (double d : json_.at("tensors").at(key).at("data")) v.push_back(float(d));
    return v;
  }

  // Token ids, which the files keep as floats.
  std::vector<int32_t> ids(const std::string& key) const {
    const std::vector<float> v = values(key);
    return std::vector<int32_t>(v.begin(), v.end());
  }

  // The floats of every parameter ("p:<layer>:<name>") a model golden file holds.
  std::size_t parameter_floats() const {
    std::size_t n = 0;
    for (const auto& [key, t] : json_.at("tensors").items())
      if (key.rfind("p:", 0) == 0) n += t.at("data").size();
    return n;
  }

  // A parameter or input with its own zeroed gradient buffer, (rows, cols).
  struct Leaf {
    std::vector<float> data, grad;
    int rows, cols;
    Tensor<float> tensor() { return {data.data(), grad.data(), rows, cols}; }
  };
  Leaf leaf(const std::string& key, int rows, int cols) const {
    Leaf l{values(key), {}, rows, cols};
    if (l.data.size() != std::size_t(rows) * cols) throw std::runtime_error(key + ": unexpected size");
    l.grad.assign(l.data.size(), 0.0f);
    return l;
  }

  // |got - ref| <= atol + rtol |ref| elementwise, float32 against PyTorch's float32.
  // With real_rows (a float per row, ref's values split evenly over them), only the rows where it
  // is non-zero are compared.
  void expect_close(const std::string& key, const float* got, double atol = 1e-5, double rtol = 1e-5,
                    const std::vector<float>* real_rows = nullptr) const {
    const std::vector<float> ref = values(key);
    const std::size_t width = real_rows ? ref.size() / real_rows->size() : 1;
    int bad = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      if (real_rows && (*real_rows)[i / width] == 0.0f) continue;
      const double diff = std::abs(double(got[i]) - double(ref[i]));
      if (diff > atol + rtol * std::abs(double(ref[i])) && ++bad <= 5)
        ADD_FAILURE() << key << "[" << i << "]: got " << got[i] << ", PyTorch " << ref[i] << " (diff " << diff << ")";
    }
    EXPECT_EQ(bad, 0) << key << ": " << bad << " of " << ref.size() << " elements out of tolerance";
  }

 private:
  nlohmann::json json_;
};

// Seeds a graph output's gradient with the reference dout.
inline void seed_gradient(Graph<float>& g, Tensor<float> out, const std::vector<float>& dout) {
  float* d = g.seed(out);
  for (int64_t i = 0; i < out.size(); ++i) d[i] = dout.at(i);
}

}  // namespace nt::test
