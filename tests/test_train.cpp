// The trainer end to end: the loss at step 0, learning on real data, determinism, no heap
// allocation inside a training step, and the records of a run.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>

#include <Eigen/Core>

#include "config/config.h"
#include "data/dataset.h"
#include "helpers.h"
#include "model/model.h"
#include "norms/norms.h"
#include "train/session.h"
#include "train/trainer.h"

namespace nt::test {
namespace {

RunConfig tiny_lm(NormType norm, Placement placement, const std::vector<std::string>& more = {}) {
  std::vector<std::string> o{"data.dataset=synthetic-lm",
                             "data.seq_len=16",
                             "model.d_model=16",
                             "model.n_heads=2",
                             "model.d_ff=32",
                             "train.batch_size=8",
                             "train.threads=1",
                             std::string("model.norm.type=") + to_string(norm),
                             std::string("model.norm.placement=") + to_string(placement)};
  o.insert(o.end(), more.begin(), more.end());
  return load_config("{}", "tiny.json", o);
}

RunConfig tiny_mlp(NormType norm, const std::vector<std::string>& more = {}) {
  std::vector<std::string> o{"data.dataset=synthetic-classify",
                             "model.arch=mlp",
                             "model.hidden=32",
                             "train.batch_size=32",
                             "train.threads=1",
                             "train.optimizer=sgd",
                             "train.lr=0.1",
                             std::string("model.norm.type=") + to_string(norm)};
  o.insert(o.end(), more.begin(), more.end());
  return load_config("{}", "tiny-mlp.json", o);
}

double initial_loss(const RunConfig& c) { return Session(c).step().loss; }

TEST(Train, InitialLossIsLogOfTheVocabulary) {
  for (NormType n : all_norm_types()) {
    const NormDesc& d = norm_desc(n);
    for (Placement p : {Placement::pre, Placement::post}) {
      if (d.scaled_residual && p == Placement::pre) continue;  // its own wiring, always post: pre is refused
      SCOPED_TRACE(std::string(to_string(n)) + "-" + to_string(p));
      // pRMSNorm's RMS over 4 of the 16 features: its default 6.25% is one feature at this width, an
      // estimate so noisy that the post-norm logits start far from 0 (loss 10.3 at step 0)
      EXPECT_NEAR(initial_loss(tiny_lm(n, p,
                                       n == NormType::prmsnorm ? std::vector<std::string>{"model.norm.p=0.25"}
                                                               : std::vector<std::string>{})),
                  std::log(256.0), 0.05);
    }
    if (d.scaled_residual || d.transformer_only) continue;  // a Transformer's only: the MLP refuses it
    SCOPED_TRACE(to_string(n));
    EXPECT_NEAR(initial_loss(tiny_mlp(n)), std::log(10.0), 0.05);
  }
}

// The sample std of every weight matrix against the spec's model.init: normal N(0, init_std);
// xavier sqrt(2 / (fan_in + fan_out)) for every Linear (the head too), N(0, 1) embeddings;
// deepnorm keeps beta on fc1, fc2, v, out and gain 1 on q, k whatever model.init says.
// 4% tolerance: a 64 x 64 matrix's sample std is within 1.1% (1 sigma) of its std, while the
// alternatives differ by far more (xavier at d 64 is 6x N(0, 0.02); beta 0.57x).
TEST(Train, InitFollowsModelInit) {
  for (const char* init : {"normal", "xavier"})
    for (const char* norm : {"layernorm", "deepnorm"}) {
      SCOPED_TRACE(std::string(init) + " " + norm);
      const RunConfig c = load_config("{}", "init.json",
                                      {"model.d_model=64", "model.d_ff=128", "model.n_layers=3",
                                       std::string("model.init=") + init, std::string("model.norm.type=") + norm});
      const auto model = make_model(c, 256, 256);
      const bool xavier = std::string(init) == "xavier", deep = std::string(norm) == "deepnorm";
      const double beta = std::pow(8.0 * 3, -0.25);
      int checked = 0;
      for (int i = 0; i < model->params().count(); ++i) {
        const auto& info = model->params().info(i);
        if (info.rows < 64 || info.name.find("bias") != std::string::npos) continue;
        const Tensor<float> w = model->params().tensor(i);
        double s2 = 0;
        for (int64_t k = 0; k < w.size(); ++k) s2 += double(w.data[k]) * w.data[k];
        const double sample = std::sqrt(s2 / double(w.size()));
        const double xav = std::sqrt(2.0 / (info.rows + info.cols));
        const bool emb = info.name.find("emb") != std::string::npos;
        const bool beta_gain =
            info.name == "attn.v.weight" || info.name == "attn.out.weight" || info.name.find("ffn.fc") == 0;
        double want = emb ? (xavier ? 1.0 : 0.02) : xavier ? xav : 0.02;
        if (deep && !emb && info.name != "head.weight") want = beta_gain ? beta * xav : xav;
        EXPECT_NEAR(sample / want, 1.0, 0.04) << info.layer << "." << info.name;
        ++checked;
      }
      EXPECT_EQ(checked, 3 * 6 + 3);  // six matrices a block, both embeddings, the head
    }
}

TEST(Train, NonePreAndPostAreTheSameNetwork) {  // with identity sites the placements coincide
  EXPECT_EQ(initial_loss(tiny_lm(NormType::none, Placement::pre)),
            initial_loss(tiny_lm(NormType::none, Placement::post)));
}

// Counts heap allocations while `counting` is set (operator new is replaced for this binary).
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

}  // namespace
}  // namespace nt::test

// Every allocation counts: operator new here, and the C allocators, which tests/CMakeLists.txt
// wraps (ld --wrap) for everything linked into this binary, normtool_core and Eigen's
// temporaries inside it included.
extern "C" {
void* __real_malloc(std::size_t);
void* __real_calloc(std::size_t, std::size_t);
void* __real_realloc(void*, std::size_t);
int __real_posix_memalign(void**, std::size_t, std::size_t);
void* __real_aligned_alloc(std::size_t, std::size_t);
void* __wrap_malloc(std::size_t n) {
  if (nt::test::counting) ++nt::test::allocations;
  return __real_malloc(n);
}
void* __wrap_calloc(std::size_t n, std::size_t size) {
  if (nt::test::counting) ++nt::test::allocations;
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, std::size_t n) {
  if (nt::test::counting) ++nt::test::allocations;
  return __real_realloc(p, n);
}
int __wrap_posix_memalign(void** p, std::size_t align, std::size_t n) {
  if (nt::test::counting) ++nt::test::allocations;
  return __real_posix_memalign(p, align, n);
}
void* __wrap_aligned_alloc(std::size_t align, std::size_t n) {
  if (nt::test::counting) ++nt::test::allocations;
  return __real_aligned_alloc(align, n);
}
}

// The replacements pair malloc with free; GCC cannot see that and warns about free().
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (nt::test::counting) ++nt::test::allocations;
  if (void* p = __real_malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace nt::test {
namespace {

TEST(Train, NoHeapAllocationInsideATrainingStep) {
  counting = true;  // the counters themselves work: operator new, and Eigen's aligned malloc
  auto probe = std::make_unique<std::vector<float>>(100);
  Eigen::VectorXf* heap = new Eigen::VectorXf(1000);
  counting = false;
  delete heap;
  ASSERT_EQ(allocations.exchange(0), 4);
  for (const RunConfig& c : {tiny_lm(NormType::layernorm, Placement::pre, {"train.optimizer=adamw"}),
                             tiny_lm(NormType::batchnorm, Placement::post, {"data.layout=padded"}),
                             tiny_lm(NormType::deepnorm, Placement::post), tiny_mlp(NormType::batchnorm),
                             tiny_lm(NormType::prmsnorm, Placement::pre, {"model.activation=relu", "train.threads=2"}),
                             tiny_lm(NormType::rmsnorm, Placement::post, {"model.norm.impl=composite"})}) {
    Session session(c);
    auto step = [&] { session.step(); };
    for (int i = 0; i < 3; ++i) step();  // the first steps size the arena and the buffers
    allocations = 0;
    counting = true;
    for (int i = 0; i < 5; ++i) step();
    counting = false;
    EXPECT_EQ(allocations.load(), 0) << config_to_json(c)["model"]["norm"].dump();
  }
}

// Runs the trainer into a fresh directory and returns it.
nlohmann::json train_into(const RunConfig& c, const std::string& dir) {
  Session session(c);
  RunFiles files(dir);
  files.write_config(config_to_json(c));
  Progress progress(c.name, c.train.steps, c.train.log_every);
  return train(c, session, files, progress).summary;
}

TEST(Train, SameSeedSameMetricsApartFromTiming) {
  const RunConfig c = tiny_lm(NormType::batchnorm, Placement::pre,
                              {"train.steps=30", "train.log_every=3", "train.eval_every=10", "train.stats_every=10"});
  TempDir a, b;
  train_into(c, a.str());
  train_into(c, b.str());
  auto strip = [](std::vector<nlohmann::json> lines) {
    for (auto& l : lines) l.erase("step_ms"), l.erase("elapsed_s");
    return lines;
  };
  const auto ma = strip(read_jsonl(a / "metrics.jsonl")), mb = strip(read_jsonl(b / "metrics.jsonl"));
  ASSERT_EQ(ma.size(), 15u);  // train at 0, 3, ..., 27 and the last step 29; val at 0, 10, 20, 30
  EXPECT_EQ(ma, mb);
  EXPECT_EQ(read_jsonl(a / "layers.jsonl"), read_jsonl(b / "layers.jsonl"));
}

TEST(Train, RunDirectoryHoldsEveryFileOfTheSpec) {
  const RunConfig c = tiny_lm(
      NormType::layernorm, Placement::post,
      {"data.layout=padded", "train.steps=12", "train.log_every=5", "train.eval_every=5", "train.stats_every=10"});
  TempDir d;
  const auto summary = train_into(c, d.str());
  EXPECT_EQ(read_json(d / "config.json"), config_to_json(c));
  for (const char* k : {"name", "status", "steps_completed", "final_train_loss", "final_val_loss", "best_val_loss",
                        "diverged", "wall_s", "steps_per_s", "tokens_per_s"})
    EXPECT_TRUE(summary.contains(k)) << k;
  EXPECT_EQ(read_json(d / "summary.json"), summary);
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_EQ(summary["steps_completed"], 12);

  const auto metrics = read_jsonl(d / "metrics.jsonl");
  std::vector<int> train_steps, val_steps;
  for (const auto& m : metrics) {
    for (const char* k : {"step", "split", "loss", "lr", "grad_norm", "step_ms", "elapsed_s"})
      EXPECT_TRUE(m.contains(k)) << m.dump();
    (m["split"] == "train" ? train_steps : val_steps).push_back(m["step"]);
  }
  EXPECT_EQ(train_steps, (std::vector<int>{0, 5, 10, 11}));
  EXPECT_EQ(val_steps, (std::vector<int>{0, 5, 10, 12}));

  // layers.jsonl: every parameter tensor at steps 0 and 10, and at the last step, 11
  const auto layers = read_jsonl(d / "layers.jsonl");
  std::map<int, int> per_step;
  for (const auto& l : layers) {
    ++per_step[l["step"].get<int>()];
    EXPECT_GT(l["update_norm"].get<double>(), 0.0) << l.dump();
    // attn_logit_max on the query projection's line only: |q.k| / sqrt(d_head), positive and finite
    EXPECT_EQ(l.contains("attn_logit_max"), l["param"] == "attn.q.weight") << l.dump();
    if (l.contains("attn_logit_max")) {
      EXPECT_GT(l["attn_logit_max"].get<double>(), 0.0) << l.dump();
    }
  }
  EXPECT_EQ(per_step.size(), 3u);
  EXPECT_EQ(per_step.count(11), 1u);
  const auto data = make_dataset(c);
  EXPECT_EQ(per_step[0], make_model(c, *data)->params().count());

  // stats.csv: sites attn/ffn in and out for 2 layers, 16 positions, at steps 0, 10 and 11
  std::ifstream stats(d / "stats.csv");
  std::string header, line;
  std::getline(stats, header);
  EXPECT_EQ(header, "step,layer,site,position,mean,std");
  int rows = 0;
  while (std::getline(stats, line)) ++rows;
  EXPECT_EQ(rows, 3 * 2 * 2 * 2 * 16);
}

TEST(Train, LayerNormOutputStatisticsAreStandardized) {  // post placement: every site leaves LN with std ~1
  // init_std 1 keeps the summed inputs' variance far above eps, which would otherwise pull std below 1
  const RunConfig c =
      tiny_lm(NormType::layernorm, Placement::post, {"train.steps=1", "train.stats_every=1", "model.init_std=1"});
  TempDir d;
  train_into(c, d.str());
  std::ifstream stats(d / "stats.csv");
  std::string line;
  std::getline(stats, line);
  int checked = 0;
  while (std::getline(stats, line)) {
    if (line.find(".out,") == std::string::npos) continue;
    const double sd = std::stod(line.substr(line.rfind(',') + 1));
    const std::string rest = line.substr(0, line.rfind(','));
    const double mean = std::stod(rest.substr(rest.rfind(',') + 1));
    EXPECT_NEAR(mean, 0.0, 1e-5) << line;
    EXPECT_NEAR(sd, 1.0, 1e-4) << line;
    ++checked;
  }
  EXPECT_EQ(checked, 2 * 2 * 16);
}

TEST(Train, DivergenceIsARecordedResult) {
  const RunConfig c = tiny_mlp(NormType::none, {"train.lr=1e4", "train.steps=200", "model.init_std=1"});
  TempDir d;
  Session session(c);
  RunFiles files(d.str());
  Progress progress(c.name, c.train.steps, c.train.log_every);
  const TrainOutcome r = train(c, session, files, progress);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.summary["status"], "diverged");
  EXPECT_EQ(r.summary["diverged"], true);
  EXPECT_LT(r.summary["steps_completed"].get<int>(), 200);
  const auto metrics = read_jsonl(d / "metrics.jsonl");
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(metrics.back()["split"], "train");  // the step that diverged is logged
}

}  // namespace
}  // namespace nt::test
