// The model families' descriptions (config/arch.h): validation refuses what a family's description
// refuses and nothing else, its messages list what the description allows, and every family trains
// on a dataset of its kind.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/arch.h"
#include "config/config.h"
#include "config_problems.h"
#include "data/dataset.h"
#include "model/model.h"
#include "norms/norms.h"

namespace nt {
namespace {

// The synthetic dataset of a kind: every family can be configured without files.
std::string synthetic_dataset(DataKind kind) {
  for (std::size_t d = 0; d < std::size(kDatasetNames); ++d)
    if (data_kind(DatasetKind(d)) == kind && std::string(kDatasetNames[d]).starts_with("synthetic"))
      return kDatasetNames[d];
  return "";
}

// Small sizes of every family, in a file: model.arch, an override after it, supersedes the keys
// its family does not read (config/unread_keys.cpp)
constexpr const char* kSmall = R"({"model": {"d_model": 8, "n_heads": 2, "d_ff": 16, "hidden": 8, "n_layers": 1},
                                   "data": {"seq_len": 8, "max_len": 8}, "train": {"batch_size": 2}})";

// model.arch and data.dataset of the family, over kSmall
std::vector<std::string> family(const ArchDesc& a) {
  return {std::string("model.arch=") + a.name, "data.dataset=" + synthetic_dataset(a.data())};
}
std::string problems(std::vector<std::string> overrides) { return problems_of(std::move(overrides), kSmall); }

std::vector<std::string> with(std::vector<std::string> o, const std::string& set) {
  o.push_back(set);
  return o;
}

TEST(ArchDesc, ValidationRefusesWhatTheDescriptionRefuses) {
  for (const ArchDesc& a : all_archs()) {
    SCOPED_TRACE(a.name);
    EXPECT_EQ(problems(family(a)), "");
    for (std::size_t v = 0; v < std::size(kPlacementNames); ++v) {
      const bool allowed = a.allows.placements & bits(Placement(v));
      const std::string p = problems(with(family(a), std::string("model.norm.placement=") + kPlacementNames[v]));
      EXPECT_EQ(p.find("model.norm.placement") == std::string::npos, allowed) << p;
    }
    for (std::size_t v = 0; v < std::size(kPrecisionNames); ++v) {
      const bool allowed = a.allows.precisions & bits(Precision(v));
      const std::string p = problems(with(family(a), std::string("train.precision=") + kPrecisionNames[v]));
      EXPECT_EQ(p.find("train.precision") == std::string::npos, allowed) << p;
    }
    for (NormType k : all_norm_types()) {
      const bool allowed = ((k != NormType::deepnorm && k != NormType::dyt) || a.has_stacks()) &&
                           (a.allows.batch_norms || norm_desc(k).reduction != Reduction::batch);
      const std::string p = problems(with(family(a), std::string("model.norm.type=") + to_string(k)));
      EXPECT_EQ(p.find("model.norm.type") == std::string::npos, allowed) << p;
    }
    EXPECT_EQ(problems(with(family(a), "model.bias=false")).empty(), a.allows.bias_off);
    EXPECT_EQ(problems(with(family(a), "model.d_emb=4")).empty(), a.allows.recurrent);
    EXPECT_EQ(problems(with(family(a), "model.embed_norm=true")).empty(), a.has_stacks());
    EXPECT_EQ(problems(with(family(a), "model.qk_norm=true")).empty(), a.has_stacks());
    EXPECT_EQ(problems(with(family(a), "model.n_dec_layers=1")).empty(), a.stacks == Stacks::encoder_decoder);
  }
}

TEST(ArchDesc, MessagesListWhatTheDescriptionAllows) {
  EXPECT_EQ(problems_of({"model.arch=rnn", "model.norm.placement=post"}),
            "config is invalid: model.norm.placement: post is not allowed for model.arch rnn (its norm sites are "
            "fixed): expected pre (override)");
  EXPECT_EQ(problems_of({"model.arch=rnn", "train.precision=bf16"}),
            "config is invalid: train.precision: bf16 is not allowed for model.arch rnn: expected fp32 (override)");
  EXPECT_EQ(problems_of({"model.arch=rnn", "model.norm.type=batchnorm"}),
            "config is invalid: model.norm.type: batchnorm normalizes over the batch, not for model.arch rnn: expected "
            "one of none|layernorm|rmsnorm|prmsnorm|scalenorm (override)");
  EXPECT_EQ(problems_of({"model.arch=rnn", "model.norm.type=dyt"}),
            "config is invalid: model.norm.type: dyt is defined for Transformer blocks, not for model.arch rnn: "
            "expected one of none|layernorm|rmsnorm|prmsnorm|scalenorm (override)");
  EXPECT_EQ(problems_of({"model.arch=rnn", "model.qk_norm=true"}),
            "config is invalid: model.qk_norm: needs dot-product attention, model.arch "
            "transformer|encoder|encoder-decoder, got \"rnn\" (override)");
  for (const char* norm : {"none", "batchnorm", "deepnorm", "prmsnorm", "scalenorm", "dyt"})
    EXPECT_EQ(problems_of({"model.qk_norm=true", std::string("model.norm.type=") + norm}),
              std::string("config is invalid: model.qk_norm: a norm of the block's type, which must be "
                          "layernorm|rmsnorm, got model.norm.type \"") +
                  norm + "\" (override)");
  EXPECT_EQ(problems_of({"model.qk_norm=true", "model.norm.type=rmsnorm"}), "");
  EXPECT_EQ(problems_of({"model.arch=rnnsearch", "data.dataset=fortunes"}),
            "config is invalid: model.arch: rnnsearch needs a seq2seq dataset (gettext-de|synthetic-seq2seq), got "
            "data.dataset \"fortunes\", a language-modelling dataset (model.arch transformer|encoder|rnn) (override)");
  EXPECT_EQ(problems_of({"model.n_dec_layers=2"}),
            "config is invalid: model.n_dec_layers: counts the decoder blocks of model.arch encoder-decoder, not of "
            "\"transformer\": leave it null (override)");
  EXPECT_EQ(problems_of({"model.d_emb=16"}),
            "config is invalid: model.d_emb: is the embedding width of model.arch rnn|rnnsearch, not of "
            "\"transformer\": leave it null (override)");
}

// make_dataset reads the rows as the family's task says, make_model builds the family the table
// lists, and the model's logits cover the dataset's outputs.
TEST(ArchDesc, EveryFamilyTrainsOnADatasetOfItsKind) {
  for (const ArchDesc& a : all_archs()) {
    SCOPED_TRACE(a.name);
    const RunConfig c = load_config(kSmall, "t.json", family(a));
    const auto data = make_dataset(c);
    EXPECT_EQ(data->is_lm(), a.data() == DataKind::lm);
    EXPECT_EQ(data->is_seq2seq(), a.data() == DataKind::seq2seq);
    EXPECT_EQ(data->reports_accuracy(), a.task != Task::causal_lm);  // the masked LM counts its predictions
    auto model = make_model(c, *data);
    Batch batch;
    Rng rng(1, 2);
    data->train_batch(rng, 2, batch);
    Graph<float> g;
    const Tensor<float> logits = model->logits(g, batch);
    EXPECT_EQ(logits.cols, data->classes());
    EXPECT_EQ(logits.rows, a.data() == DataKind::classification ? 2 : batch.B * batch.T);
  }
}

}  // namespace
}  // namespace nt
