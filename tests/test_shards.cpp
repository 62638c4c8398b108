// The data-parallel step (train.parallel batch, train/shards.h) against the whole batch's step:
// the same loss and gradient to float rounding for every architecture, masked and odd-sized
// batches and the reduced formats; the same bits from run to run; statistics of the whole batch.
// And train.parallel ops: the same bits at one, two and three threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.h"
#include "helpers.h"
#include "io/binary.h"
#include "train/session.h"
#include "train/shards.h"

namespace nt::test {
namespace {

// Small sizes in a file, so that a family's model.arch (an override) supersedes those it does not read
RunConfig config(std::vector<std::string> o, const std::string& threads) {
  o.push_back("train.threads=" + threads);
  return load_config(R"({"model": {"d_model": 16, "n_heads": 2, "d_ff": 32}, "train": {"stats_every": 0}})",
                     "shards.json", o);
}

double norm_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// One step on the same batch: the whole batch at one thread, then in shards at `threads`;
// returns the gradients (read before the update) and the losses.
struct Compared {
  std::vector<double> whole, sharded;
  double whole_loss = 0, sharded_loss = 0;
};
Compared compare(const std::vector<std::string>& o, const std::string& threads) {
  Session whole(config(o, "1")), sharded(config(o, threads));
  EXPECT_TRUE(shards_apply(sharded.config(), sharded.threads()));
  Compared c;
  auto grads = [](Session& s, std::vector<double>& out) {
    return [&s, &out] { out.assign(s.params().grad(), s.params().grad() + s.params().numel()); };
  };
  // weights away from the init both copies of the model start from: a shard that read stale
  // weights shows (the same change on both sessions, before the formats round them)
  for (Session* s : {&whole, &sharded})
    for (std::size_t i = 0; i < s->params().numel(); ++i)
      s->params().data()[i] = s->params().data()[i] * 1.25f + 0.01f * float(std::sin(double(i)));
  whole.next_batch();
  c.whole_loss = whole.step_on(whole.batch(), grads(whole, c.whole)).loss;
  c.sharded_loss = sharded.step_on(whole.batch(), grads(sharded, c.sharded)).loss;
  return c;
}

TEST(Shards, TheShardedStepIsTheWholeBatchsStepForEveryArchitecture) {
  const std::vector<std::vector<std::string>> cases = {
      {"data.dataset=synthetic-lm", "data.seq_len=16", "train.batch_size=8"},
      {"data.dataset=fortunes", "data.layout=padded", "data.seq_len=32", "train.batch_size=7"},
      {"data.dataset=synthetic-lm", "model.arch=encoder", "data.seq_len=16", "train.batch_size=6",
       "model.norm.placement=post"},
      {"data.dataset=synthetic-seq2seq", "model.arch=encoder-decoder", "data.max_len=12", "train.batch_size=5",
       "model.norm.type=deepnorm", "model.norm.placement=post"},
      {"data.dataset=synthetic-lm", "model.arch=rnn", "model.cell=lstm", "data.seq_len=12", "train.batch_size=4"},
      {"data.dataset=synthetic-lm", "model.arch=rnn", "model.cell=gru", "model.norm.type=rmsnorm", "data.seq_len=12",
       "train.batch_size=4"},
      {"data.dataset=synthetic-seq2seq", "model.arch=rnnsearch", "data.max_len=10", "train.batch_size=4"},
      {"data.dataset=synthetic-classify", "model.arch=mlp", "model.hidden=24", "train.batch_size=9"},
      {"data.dataset=synthetic-lm", "data.seq_len=16", "train.batch_size=8", "train.precision=bf16"},
      {"data.dataset=synthetic-lm", "data.seq_len=16", "train.batch_size=8", "train.precision=fp16"}};
  for (const auto& o : cases)
    for (const std::string threads : {"2", "3"}) {
      const Compared c = compare(o, threads);
      const std::string what = o[0] + " " + o.back() + " at " + threads + " threads";
      ASSERT_EQ(c.whole.size(), c.sharded.size()) << what;
      std::vector<double> diff(c.whole.size());
      for (std::size_t i = 0; i < diff.size(); ++i) diff[i] = c.sharded[i] - c.whole[i];
      // fp32 sums over the rows in another order; bf16 and fp16 round every value between ops, and a
      // value that lands on the other side of a rounding step moves by a unit of the format
      const bool reduced = o.back().find("precision") != std::string::npos;
      EXPECT_GT(norm_of(c.whole), 0) << what;
      EXPECT_LT(norm_of(diff), (reduced ? 2e-2 : 2e-5) * norm_of(c.whole)) << what;
      EXPECT_NEAR(c.sharded_loss, c.whole_loss, (reduced ? 1e-2 : 2e-6) * c.whole_loss) << what;
    }
}

// The shards' losses are weighted by their counted targets: a shard of short rows counts less.
// Here the second row keeps 3 targets of 32; the mean of the two shards' means would be off by far
// more than rounding.
TEST(Shards, ShardsWithFewerTargetsWeighLess) {
  const std::vector<std::string> o{"data.dataset=fortunes", "data.layout=padded", "data.seq_len=32",
                                   "train.batch_size=2"};
  Session whole(config(o, "1")), sharded(config(o, "2"));
  whole.next_batch();
  Batch batch = whole.batch();
  std::fill(batch.mask.begin() + batch.T + 3, batch.mask.end(), 0.0f);
  ASSERT_GT(batch.real_targets(), 2 * 3);
  const double a = whole.step_on(batch).loss, b = sharded.step_on(batch).loss;
  EXPECT_NEAR(b, a, 2e-6 * a);
}

// A shard whose rows hold no target (here the first of two, then the middle one of three) weighs
// 0 and adds gradients of 0: the step is the whole batch's. A batch with no target at all is refused.
TEST(Shards, AShardWithoutTargetsAddsNothing) {
  for (const std::string threads : {"2", "3"}) {
    const std::vector<std::string> o{"data.dataset=fortunes", "data.layout=padded", "data.seq_len=32",
                                     "train.batch_size=" + threads};
    Session whole(config(o, "1")), sharded(config(o, threads));
    whole.next_batch();
    Batch batch = whole.batch();
    const int empty = threads == "2" ? 0 : 1;
    std::fill(batch.mask.begin() + empty * batch.T, batch.mask.begin() + (empty + 1) * batch.T, 0.0f);
    ASSERT_GT(batch.real_targets(), 0);
    std::vector<double> g[2];
    double loss[2];
    int i = 0;
    for (Session* s : {&whole, &sharded}) {
      loss[i] =
          s->step_on(batch, [&] { g[i].assign(s->params().grad(), s->params().grad() + s->params().numel()); }).loss;
      ++i;
    }
    EXPECT_EQ(sharded.shards(), std::stoi(threads));
    EXPECT_NEAR(loss[1], loss[0], 2e-6 * loss[0]) << threads;
    std::vector<double> diff(g[0].size());
    for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = g[1][k] - g[0][k];
    EXPECT_GT(norm_of(g[0]), 0) << threads;
    EXPECT_LT(norm_of(diff), 2e-5 * norm_of(g[0])) << threads;
    std::fill(batch.mask.begin(), batch.mask.end(), 0.0f);
    EXPECT_THROW(sharded.step_on(batch), std::invalid_argument) << threads;
  }
}

TEST(Shards, RunsAtOneThreadCountGiveTheSameBits) {
  const std::vector<std::string> o{"data.dataset=synthetic-seq2seq", "model.arch=encoder-decoder", "data.max_len=12",
                                   "train.batch_size=6"};
  Session a(config(o, "2")), b(config(o, "2"));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.step().loss, b.step().loss) << "step " << i;
  for (std::size_t i = 0; i < a.params().numel(); ++i) ASSERT_EQ(a.params().data()[i], b.params().data()[i]) << i;
}

// A run stopped and resumed at the same thread count goes on with the same bits; the step leaves
// the session's math threads as they were (each shard ran on one).
TEST(Shards, AResumedRunGoesOnWithTheSameBits) {
  const std::vector<std::string> o{"data.dataset=synthetic-lm", "data.seq_len=16", "train.batch_size=8"};
  Session straight(config(o, "2")), first(config(o, "2")), resumed(config(o, "2"));
  std::vector<double> losses;
  for (int i = 0; i < 4; ++i) losses.push_back(straight.step().loss);
  EXPECT_EQ(omp_get_max_threads(), 2);
  for (int i = 0; i < 2; ++i) first.step();
  ByteWriter w;
  first.save_state(w);
  ByteReader r(w.bytes());
  resumed.load_state(r);
  for (int i = 2; i < 4; ++i) EXPECT_EQ(resumed.step().loss, losses[i]) << "step " << i;
  for (std::size_t i = 0; i < straight.params().numel(); ++i)
    ASSERT_EQ(resumed.params().data()[i], straight.params().data()[i]) << i;
}

// A statistics step reads the model's sites: after a sharded step they hold the whole batch's rows.
TEST(Shards, AStatisticsStepSeesTheWholeBatch) {
  const std::vector<std::string> o{"data.dataset=synthetic-lm", "data.seq_len=16", "train.batch_size=8"};
  Session whole(config(o, "1")), sharded(config(o, "2"));
  whole.next_batch();
  std::vector<std::vector<float>> seen[2];
  int i = 0;
  for (Session* s : {&whole, &sharded}) {
    s->step_on(whole.batch(), [&] {
      for (const SiteCapture& site : s->model().sites())
        seen[i].emplace_back(site.out.data, site.out.data + site.out.size());
    });
    ++i;
  }
  ASSERT_EQ(seen[0].size(), seen[1].size());
  ASSERT_FALSE(seen[0].empty());
  for (std::size_t k = 0; k < seen[0].size(); ++k) {
    ASSERT_EQ(seen[0][k].size(), seen[1][k].size()) << "site " << k;
    EXPECT_EQ(seen[0][k].size(), std::size_t(8 * 16 * 16)) << "site " << k;
    for (std::size_t j = 0; j < seen[0][k].size(); ++j)
      ASSERT_NEAR(seen[0][k][j], seen[1][k][j], 1e-5) << k << " " << j;
  }
}

// An error inside a shard (here the last shard's target out of the vocabulary) comes out of the
// step as it would from the whole batch's, and the session steps on afterwards.
TEST(Shards, AnErrorInAShardComesOutOfTheStep) {
  const std::vector<std::string> o{"data.dataset=synthetic-lm", "data.seq_len=16", "train.batch_size=8"};
  Session sharded(config(o, "2"));
  sharded.next_batch();
  Batch bad = sharded.batch();
  bad.targets.back() = 100000;
  EXPECT_THROW(sharded.step_on(bad), std::logic_error);
  EXPECT_TRUE(std::isfinite(sharded.step().loss));
}

TEST(Shards, BatchStatisticsOrTheOpsSettingKeepTheWholeBatch) {
  EXPECT_FALSE(shards_apply(config({"data.dataset=synthetic-lm", "model.norm.type=batchnorm"}, "2"), 2));
  EXPECT_FALSE(shards_apply(config({"data.dataset=synthetic-lm", "train.parallel=ops"}, "2"), 2));
  EXPECT_FALSE(shards_apply(config({"data.dataset=synthetic-lm"}, "1"), 1));
  EXPECT_FALSE(shards_apply(config({"data.dataset=synthetic-lm", "train.batch_size=1"}, "2"), 2));
  EXPECT_TRUE(shards_apply(config({"data.dataset=synthetic-lm"}, "2"), 2));
}

// What one session computed over its first steps at one thread count.
struct Bits {
  std::vector<double> losses, grad_norms;
  std::vector<std::vector<float>> grads;
  std::vector<float> weights;
  std::vector<std::string> names;  // a name per gradient entry's parameter, its layer after
};
Bits run_ops(std::vector<std::string> o, int threads) {
  // wide enough that every op splits its rows (16384 values and more: core/parallel.h), the
  // products theirs (core/gemm_kernel.cpp) and the gradient norm its sum
  for (const char* s :
       {"model.d_model=64", "model.n_heads=4", "model.d_ff=256", "train.stats_every=0", "train.parallel=ops"})
    o.insert(o.begin(), s);
  o.push_back("train.threads=" + std::to_string(threads));
  Session s(load_config("{}", "ops.json", o));  // sets the math threads: one session at a time
  EXPECT_EQ(omp_get_max_threads(), threads);
  EXPECT_FALSE(shards_apply(s.config(), s.threads()));
  Bits b;
  for (int i = 0; i < 2; ++i) {
    const float* g = s.params().grad();
    const StepResult r = s.step([&] { b.grads.emplace_back(g, g + s.params().numel()); });
    b.losses.push_back(r.loss);
    b.grad_norms.push_back(r.grad_norm);
  }
  b.weights.assign(s.params().data(), s.params().data() + s.params().numel());
  b.names.resize(s.params().numel());
  for (int p = 0; p < s.params().count(); ++p) {
    const auto& info = s.params().info(p);
    std::fill_n(b.names.begin() + info.offset, info.size(), info.name + " " + std::to_string(info.layer));
  }
  return b;
}

// train.parallel ops (and batchnorm, which always runs it) promises the same bits at any thread
// count: every sum over rows is cut where the thread count does not move the cuts. The shapes
// above are too small to split; these are not.
TEST(Shards, TheOpsSettingGivesTheSameBitsAtEveryThreadCount) {
  const std::vector<std::vector<std::string>> cases = {
      {"data.dataset=synthetic-lm", "data.seq_len=32", "train.batch_size=8", "model.activation=gelu"},
      {"data.dataset=fortunes", "data.layout=padded", "data.seq_len=32", "train.batch_size=9",
       "model.norm.type=rmsnorm", "model.norm.placement=post"},
      {"data.dataset=synthetic-lm", "data.seq_len=32", "train.batch_size=8", "model.norm.type=prmsnorm"},
      {"data.dataset=synthetic-lm", "data.seq_len=32", "train.batch_size=8", "model.norm.type=scalenorm",
       "model.activation=relu"},
      {"data.dataset=synthetic-lm", "data.seq_len=32", "train.batch_size=8", "model.norm.type=batchnorm"},
      {"data.dataset=synthetic-lm", "model.arch=encoder", "data.seq_len=32", "train.batch_size=8",
       "model.norm.placement=post"},
      {"data.dataset=synthetic-seq2seq", "model.arch=encoder-decoder", "data.max_len=32", "train.batch_size=8",
       "model.norm.type=deepnorm"},
      {"data.dataset=synthetic-lm", "model.arch=rnn", "model.cell=gru", "model.norm.type=layernorm", "data.seq_len=32",
       "train.batch_size=16"},
      {"data.dataset=synthetic-lm", "model.arch=rnn", "model.cell=lstm", "model.norm.type=rmsnorm", "data.seq_len=32",
       "train.batch_size=16"},
      {"data.dataset=synthetic-seq2seq", "model.arch=rnnsearch", "model.norm.type=rmsnorm", "data.max_len=24",
       "train.batch_size=16"},
      {"data.dataset=synthetic-classify", "model.arch=mlp", "model.hidden=256", "train.batch_size=64",
       "model.norm.type=layernorm", "train.grad_clip=0.01"}};
  for (const auto& o : cases) {
    const Bits one = run_ops(o, 1);
    for (const int threads : {2, 3}) {
      const Bits b = run_ops(o, threads);
      const std::string what = o[1] + " " + o.back() + " at " + std::to_string(threads) + " threads";
      EXPECT_EQ(b.losses, one.losses) << what;
      EXPECT_EQ(b.grad_norms, one.grad_norms) << what;
      ASSERT_EQ(b.grads.size(), one.grads.size()) << what;
      for (std::size_t i = 0; i < b.grads.size(); ++i) {
        const auto& g = b.grads[i];
        const auto& g1 = one.grads[i];
        ASSERT_EQ(g.size(), g1.size()) << what;
        std::set<std::string> differ;
        for (std::size_t k = 0; k < g.size(); ++k)
          if (std::memcmp(&g[k], &g1[k], sizeof(float)) != 0) differ.insert(one.names[k]);
        EXPECT_EQ(std::memcmp(g.data(), g1.data(), g.size() * sizeof(float)), 0)
            << what << ", step " << i << ": the gradients of " << testing::PrintToString(differ) << " differ";
      }
      EXPECT_EQ(std::memcmp(b.weights.data(), one.weights.data(), b.weights.size() * sizeof(float)), 0) << what;
    }
  }
}

// The same through Eigen's products (the backend of a CPU without AVX), which cut C's rows into
// blocks that M sets, not the thread count (768 rows: 3 blocks): a run's losses and gradient
// norms at 1 and 3 threads.
TEST(Shards, TheOpsSettingGivesTheSameBitsInEigensProducts) {
  auto losses = [](int threads) {
    TempDir d;
    const CommandResult r = run_shell(
        "NORMTOOL_GEMM=eigen " + binary() + " run --config " + source_dir() +
        "/configs/smoke/lm-layernorm-pre.json --set model.d_model=64 --set model.n_heads=4 --set model.d_ff=256 "
        "--set data.seq_len=32 --set train.batch_size=24 --set train.steps=3 --set train.log_every=1 "
        "--set train.eval_every=1000 --set train.stats_every=0 --set train.parallel=ops --set train.threads=" +
        std::to_string(threads) + " --out " + d.str());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<nlohmann::json> train;
    for (const nlohmann::json& l : read_jsonl(d / "metrics.jsonl"))
      if (l.value("split", "") == "train") train.push_back({l["loss"], l["grad_norm"]});
    return train;
  };
  const auto one = losses(1);
  EXPECT_EQ(one.size(), 3u);
  EXPECT_EQ(losses(3), one);
}

}  // namespace
}  // namespace nt::test
