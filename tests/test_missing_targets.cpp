// Batches without a counted target (issue 39, item 6): a padded row of one byte has none, and a
// masked LM may choose no position. Such a batch never becomes a loss of 0 or the divergence
// baseline: data and configs on which it is as likely as not are refused (exit 2, naming the key
// or the corpus and the figures), the training stream draws another in place of one that happens
// by chance and counts it (summary.json "batches_without_target"), and an evaluation that would
// read no target is refused before step 0.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "data/dataset.h"
#include "helpers.h"
#include "io/binary.h"
#include "train/session.h"

namespace nt::test {
namespace {

std::string config_problem(const std::vector<std::string>& overrides) {
  try {
    load_config("{}", "x.json", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A fortunes folder of one file holding `docs`.
void write_fortunes(const std::string& dir, const std::vector<std::string>& docs) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir + "/f", std::ios::binary);
  for (std::size_t i = 0; i < docs.size(); ++i) out << (i ? "\n%\n" : "") << docs[i];
}

std::vector<std::string> repeated(const std::string& doc, int n) {
  return std::vector<std::string>(std::size_t(n), doc);
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// (1 - p)^(B T) is the probability that a packed batch holds no chosen position.
TEST(MissingTargets, AMaskProbThatLikelyChoosesNothingIsRefused) {
  const std::string none = config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.mask_prob=1e-9"});
  EXPECT_NE(none.find("data.mask_prob"), std::string::npos) << none;
  EXPECT_NE(none.find("16 x 64 = 1024"), std::string::npos) << none;  // the default batch and seq_len
  // 0.98^8 = 0.85
  const std::string rare = config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.mask_prob=0.02",
                                           "data.seq_len=4", "train.batch_size=2"});
  EXPECT_NE(rare.find("(1 - 0.02)^8 = 0.851"), std::string::npos) << rare;
  // 0.85^12 = 0.14: the golden encoder's sizes stay accepted; 0.5^1 = 1/2 is refused
  EXPECT_EQ(config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.seq_len=6", "train.batch_size=2"}),
            "");
  EXPECT_NE(config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.mask_prob=0.5", "data.seq_len=1",
                            "train.batch_size=1"}),
            "");
  // mask_prob is the encoder's: set for another arch it is refused, not ignored (config/unread_keys.cpp)
  EXPECT_NE(config_problem({"data.dataset=synthetic-lm", "data.mask_prob=1e-9"})
                .find("data.mask_prob: model.arch transformer does not read it"),
            std::string::npos);
}

// 2 of the 200 training documents have a target: a batch of 4 holds none with probability 0.99^4.
TEST(MissingTargets, APaddedCorpusWhoseBatchesLikelyHoldNoTargetIsRefused) {
  TempDir tmp;
  const std::string dir = tmp.str() + "/fortunes";
  write_fortunes(dir, joined(joined(repeated("a", 198), repeated("hello", 2)), repeated("validation", 20)));
  const std::vector<std::string> o{"data.dataset=fortunes", "data.path=" + dir,         "data.layout=padded",
                                   "data.seq_len=16",       "data.val_fraction=0.0909", "train.batch_size=4"};
  try {
    make_dataset(load_config("{}", "x.json", o));
    ADD_FAILURE() << "accepted";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fortunes at " + dir), std::string::npos) << what;
    EXPECT_NE(what.find("2 of the 200 training documents"), std::string::npos) << what;
    EXPECT_NE(what.find("train.batch_size = 4"), std::string::npos) << what;
    EXPECT_NE(what.find("probability 0.96"), std::string::npos) << what;  // 0.99^4 = 0.9606
  }
  // half of them: 0.5^4 = 0.06, accepted (and the packed layout has a target in every row)
  write_fortunes(dir, joined(joined(repeated("a", 100), repeated("hello", 100)), repeated("validation", 20)));
  EXPECT_NO_THROW(make_dataset(load_config("{}", "x.json", o)));
}

// An encoder on documents of one byte: the config's bound (every position real) holds, the corpus
// does not: a row holds no chosen position with probability 0.99.
TEST(MissingTargets, AMaskedLmOnShortPaddedRowsIsRefused) {
  TempDir tmp;
  const std::string dir = tmp.str() + "/fortunes";
  write_fortunes(dir, repeated("a", 100));
  const RunConfig c = load_config("{}", "x.json",
                                  {"model.arch=encoder", "data.dataset=fortunes", "data.path=" + dir,
                                   "data.layout=padded", "data.mask_prob=0.01", "train.batch_size=8"});
  try {
    make_dataset(c);
    ADD_FAILURE() << "accepted";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("data.mask_prob = 0.01"), std::string::npos) << what;
    EXPECT_NE(what.find("probability 0.923"), std::string::npos) << what;  // 0.99^8
  }
}

// A session on `train_docs` (16 of them) and 4 validation documents, padded rows of 8 bytes.
Session padded_session(int B, const std::vector<std::string>& train_docs) {
  const RunConfig c = load_config("{}", "x.json",
                                  {"data.dataset=synthetic-lm", "data.layout=padded", "data.seq_len=8",
                                   "data.val_fraction=0.2", "model.d_model=16", "model.n_heads=2", "model.d_ff=32",
                                   "train.batch_size=" + std::to_string(B), "train.eval_batches=1", "train.threads=1"});
  return Session(c, make_lm_dataset(joined(train_docs, repeated("validation", 4)), c.data));
}

// A batch without a target is drawn again, not stepped, and counted; the first step's loss (the
// divergence baseline) is a batch's with targets. The count is checked against the stream
// replayed here: Rng(seed, 2), batches that hold no target skipped.
// Here 1 training document in 4 has a target: a batch of 2 holds none with probability 9/16.
TEST(MissingTargets, ABatchWithoutTargetIsDrawnAgainAndCounted) {
  const std::vector<std::string> docs = joined(repeated("a", 12), repeated("hello", 4));
  Session s = padded_session(2, docs);
  for (int step = 0; step < 40; ++step) {
    const StepResult r = s.step();
    ASSERT_FALSE(r.diverged) << "step " << step;
    ASSERT_GT(r.loss, 1.0) << "step " << step;  // bytes at init: about ln 256 = 5.5
    ASSERT_GT(s.batch().real_targets(), 0) << "step " << step;
  }
  EXPECT_EQ(s.steps_done(), 40);
  const auto data = make_lm_dataset(joined(docs, repeated("validation", 4)), s.config().data);
  Rng rng(uint64_t(s.config().seed), 2);
  Batch b;
  int64_t without = 0;
  for (int with = 0; with < 40;) {
    data->train_batch(rng, 2, b);
    if (b.real_targets() > 0)
      ++with;
    else
      ++without;
  }
  EXPECT_GT(without, 10);  // 40 * (9/16) / (7/16) = 51 expected
  EXPECT_EQ(s.batches_without_target(), without);
  // a checkpoint keeps the count
  ByteWriter w;
  s.save_state(w);
  Session resumed = padded_session(2, docs);
  ByteReader r(w.bytes());
  resumed.load_state(r);
  EXPECT_EQ(resumed.batches_without_target(), without);
}

// Fed one directly, a step refuses it: its loss would be 0, and at step 0 the divergence baseline.
TEST(MissingTargets, AStepOnABatchWithoutTargetIsRefused) {
  Session s = padded_session(2, joined(repeated("a", 12), repeated("hello", 4)));
  s.next_batch();
  Batch none = s.batch();
  std::fill(none.mask.begin(), none.mask.end(), 0.0f);
  EXPECT_THROW(s.step_on(none), std::invalid_argument);
  EXPECT_EQ(s.steps_done(), 0);
}

// The first validation documents are of one byte: no evaluation would have a target to measure.
TEST(MissingTargets, AnEvaluationWithoutTargetIsRefused) {
  const RunConfig c = load_config("{}", "x.json",
                                  {"data.dataset=synthetic-lm", "data.layout=padded", "data.seq_len=8",
                                   "data.val_fraction=0.5", "train.batch_size=2", "train.eval_batches=2"});
  // validation: the last 6 documents; the evaluation reads the first 4, the 5th has a target
  const std::vector<std::string> docs = joined(repeated("hello", 6), joined(repeated("v", 4), repeated("valid", 2)));
  try {
    Session s(c, make_lm_dataset(docs, c.data));
    ADD_FAILURE() << "accepted";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("data: synthetic-lm: the first 4 validation rows", 0), 0) << what;  // names the data
    EXPECT_NE(what.find("train.eval_batches = 2"), std::string::npos) << what;
  }
  // with the 5th row read, one batch holds a target: evaluations measure it alone
  const RunConfig three = load_config("{}", "x.json",
                                      {"data.dataset=synthetic-lm", "data.layout=padded", "data.seq_len=8",
                                       "data.val_fraction=0.5", "train.batch_size=2", "train.eval_batches=3"});
  Session s(three, make_lm_dataset(docs, three.data));
  const Evaluation e = s.evaluate();
  EXPECT_EQ(e.targets, 8);  // "valid" twice: 4 targets each
  EXPECT_TRUE(std::isfinite(e.loss));
  EXPECT_GT(e.loss, 1.0);
}

// End to end: the run completes, its first training line's loss is a real one, and summary.json
// counts the batches drawn again.
TEST(MissingTargets, TheSummaryCountsTheBatchesWithoutTarget) {
  TempDir tmp;
  const std::string dir = tmp.str() + "/fortunes";
  write_fortunes(dir, joined(joined(repeated("a", 20), repeated("hello there", 20)), repeated("validation", 10)));
  std::ofstream(tmp.str() + "/c.json") << "{}";
  const CommandResult r = run_normtool(
      "run --config " + tmp.str() + "/c.json data.dataset=fortunes data.path=" + dir +
      " data.layout=padded data.seq_len=16 data.val_fraction=0.2 train.batch_size=2 train.steps=20 train.eval_every=10 "
      "train.eval_batches=2 train.stats_every=0 train.threads=1 model.d_model=16 model.n_heads=2 model.d_ff=32 --out " +
      tmp.str() + "/run");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json s = read_json(tmp.str() + "/run/summary.json");
  EXPECT_EQ(s["status"], "completed");
  EXPECT_EQ(s["steps_completed"], 20);
  EXPECT_GT(s["batches_without_target"].get<int64_t>(), 0);  // (1/2)^2 = 1/4 of the draws
  EXPECT_GT(s["final_train_loss"].get<double>(), 1.0);
  for (const nlohmann::json& line : read_jsonl(tmp.str() + "/run/metrics.jsonl"))
    EXPECT_GT(line["loss"].get<double>(), 1.0);
}

}  // namespace
}  // namespace nt::test
