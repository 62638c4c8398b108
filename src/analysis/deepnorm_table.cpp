#include "analysis/deepnorm_table.h"

#include <array>
#include <cmath>
#include <map>

#include "config/arch.h"
#include "config/config.h"
#include "data/dataset.h"
#include "model/model.h"
#include "norms/norm_kind.h"

namespace nt {

namespace {

struct DeepNetRow {
  const char *model, *formula;
  Arch arch;
  StackRole stack;
  int N, M;
  double alpha, beta;
};
constexpr const char* kSingle = "(2N)^(1/4), (8N)^(-1/4)";
const DeepNetRow kDeepNet[] = {
    {"encoder-only, N = 12", kSingle, Arch::encoder, StackRole::encoder, 12, 0, 2.2134, 0.3195},
    {"decoder-only, N = 12", kSingle, Arch::transformer, StackRole::decoder, 12, 0, 2.2134, 0.3195},
    {"encoder-decoder 6L-6L, encoder", "0.81 (N^4 M)^(1/16), 0.87 (N^4 M)^(-1/16)", Arch::encoder_decoder,
     StackRole::encoder, 6, 6, 1.4179, 0.4970},
    {"encoder-decoder 6L-6L, decoder", "(3M)^(1/4), (12M)^(-1/4)", Arch::encoder_decoder, StackRole::decoder, 6, 6,
     2.0598, 0.3433},
};

// One model's weight matrices (not the embeddings, the gains and biases, or the output layer)
void init_std_of(const std::vector<std::string>& overrides, std::vector<InitStd>& rows) {
  const RunConfig c = load_config("{}", "e8", overrides);
  const auto model = make_model(c, *make_dataset(c));
  ParamStore<float>& ps = model->params();
  std::map<std::string, std::array<double, 4>> sums;  // name -> sum of squares, count, rows, cols
  for (int i = 0; i < ps.count(); ++i) {
    const auto& info = ps.info(i);
    const auto has = [&](const char* part) { return info.name.find(part) != std::string::npos; };
    if (!has(".weight") || info.rows == 1 || has("emb") || info.name == "head.weight") continue;
    const Tensor<float> t = ps.tensor(i);
    auto& s = sums[info.name];
    for (int64_t k = 0; k < t.size(); ++k) s[0] += double(t.data[k]) * t.data[k];
    s[1] += double(t.size()), s[2] = info.rows, s[3] = info.cols;
  }
  for (const auto& [name, s] : sums) {
    const double beta = c.deepnorm(name.starts_with("enc.") ? StackRole::encoder : StackRole::decoder).beta;
    const bool gained = name.find(".q.") == std::string::npos && name.find(".k.") == std::string::npos;
    rows.push_back({to_string(c.model.arch), name, std::sqrt(s[0] / s[1]),
                    (gained ? beta : 1.0) * std::sqrt(2.0 / (s[2] + s[3]))});
  }
}

}  // namespace

std::vector<DeepNetConstants> deepnet_constants() {
  std::vector<DeepNetConstants> rows;
  for (const DeepNetRow& row : kDeepNet) {
    RunConfig c;  // the constants read the architecture and the depths only
    c.model.norm.type = NormType::deepnorm;
    c.model.arch = row.arch;
    c.model.n_layers = row.N;
    if (row.M) c.model.n_dec_layers = row.M;
    const DeepNorm d = c.deepnorm(row.stack);
    rows.push_back({row.model, row.formula, d.alpha, d.beta, row.alpha, row.beta});
  }
  return rows;
}

std::vector<InitStd> deepnorm_init_std() {
  std::vector<InitStd> rows;
  for (std::string arch : {"transformer", "encoder", "encoder-decoder"}) {
    const bool ed = arch == "encoder-decoder";  // 6L-6L: each stack's beta, cross-attention included
    std::vector<std::string> o{ed ? "data.dataset=synthetic-seq2seq" : "data.dataset=synthetic-lm",
                               "model.norm.type=deepnorm",
                               "model.arch=" + arch,
                               ed ? "model.n_layers=6" : "model.n_layers=12",
                               "model.d_model=256",
                               "model.d_ff=1024",
                               "model.n_heads=4"};
    if (ed) o.emplace_back("model.n_dec_layers=6");
    init_std_of(o, rows);
  }
  return rows;
}

}  // namespace nt
