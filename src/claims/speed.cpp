// The speed claim C3: RMSNorm is faster than LayerNorm, per op and per training step, in two
// regimes: the norms composed from primitive ops (norms/composite.cpp: the regime of the
// paper's framework code, where each op of the formula is a kernel of its own) and normtool's
// fused kernels. Every norm that normalizes per row takes part (norms.h traits: LayerNorm,
// RMSNorm, pRMSNorm). Timings alternate between the norms round by round, on one thread, in
// this process; `normtool reproduce` runs one claim at a time, so no other experiment runs
// beside them, and the report says how busy the rest of the machine was.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <map>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "claims/postln.h"
#include "core/aligned.h"
#include "core/rng.h"
#include "core/threads.h"
#include "norms/norms.h"
#include "train/session.h"

namespace nt {

namespace {

double ms_of(auto&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The share of the machine's CPU time that other processes used since construction (/proc/stat
// busy time, minus this process's own).
class OtherLoad {
 public:
  OtherLoad() : busy0_(busy_s()), self0_(self_s()), t0_(std::chrono::steady_clock::now()) {}
  double share() const {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    const double other = (busy_s() - busy0_) - (self_s() - self0_);
    return std::max(0.0, other) / (wall * double(sysconf(_SC_NPROCESSORS_ONLN)));
  }

 private:
  static double busy_s() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    double v[8] = {};
    in >> cpu;
    for (double& x : v) in >> x;
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / double(sysconf(_SC_CLK_TCK));  // all but idle, iowait
  }
  static double self_s() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  double busy0_, self0_;
  std::chrono::steady_clock::time_point t0_;
};

// The norms of the RMSNorm paper's speed comparison (Zhang & Sennrich 2019 Tables 2-10), LayerNorm
// first (the baseline), each with the group its measures are reported under ("" = the claim's).
struct Compared {
  NormType kind;
  const char* role;
};
constexpr Compared kCompared[] = {
    {NormType::layernorm, "the baseline"},
    {NormType::rmsnorm, ""},
    {NormType::prmsnorm, "the paper's fastest"},
};

// Forward and backward of one norm on (N, C) float32 with gain (and bias where it has one).
class OpBench {
 public:
  OpBench(int N, int C) : N_(N), C_(C), x_(std::size_t(N) * C), dx_(x_.size()), dy_(x_.size()), gamma_(C, 1.0f),
                          dgamma_(C), beta_(C), dbeta_(C) {
    Rng rng(3, 1);
    for (auto& v : x_) v = float(rng.normal());
    for (auto& v : dy_) v = float(1e-3 * rng.normal());
  }
  void run(NormType kind, bool composite) {
    g_.reset();
    const Tensor<float> x{x_.data(), dx_.data(), N_, C_};
    const NormDesc& d = norm_desc(kind);
    NormArgs<float> a;  // the gain (and bias) in the shapes of the description
    if (d.gain != ParamShape::absent) a.gamma = Tensor<float>{gamma_.data(), dgamma_.data(), 1, param_count(d.gain, C_)};
    if (d.bias != ParamShape::absent) a.beta = Tensor<float>{beta_.data(), dbeta_.data(), 1, param_count(d.bias, C_)};
    Tensor<float> y = apply_norm(g_, kind, x, a, composite);
    std::copy(dy_.begin(), dy_.end(), g_.seed(y));
    g_.backward(Tensor<float>{});
  }

 private:
  int N_, C_;
  AlignedVector<float> x_, dx_, dy_, gamma_, dgamma_, beta_, dbeta_;
  Graph<float> g_;
};

// The training steps timed: a Transformer LM and the RMSNorm paper's RNNSearch, where the paper
// saw its largest speed-ups (its norms sit in every GRU transition, on small rows)
struct StepModel {
  const char* label;
  const char* config;
};
constexpr StepModel kStepModels[] = {{"lm-tiny step", "lm-tiny.json"}, {"rnnsearch-tiny step", "rnnsearch-tiny.json"}};

std::string data_override(const StepModel& m) {
  return std::string("data.dataset=") + (m.config == std::string("lm-tiny.json") ? "synthetic-lm" : seq2seq_dataset());
}

}  // namespace

ClaimResult claim_c3(const ClaimContext& ctx) {
  ClaimResult r;
  set_math_threads(1);
  const OtherLoad load;
  const int rounds = ctx.quick ? 15 : 50;
  std::vector<NormType> kinds;
  for (const Compared& c : kCompared) kinds.push_back(c.kind);
  std::vector<NormType> step_kinds = kinds;  // and none, for the norm's share of a step
  step_kinds.push_back(NormType::none);
  const char* regimes[] = {"composite", "fused"};
  constexpr int kWhats = 1 + std::size(kStepModels);  // what 0 = the op on 4096 x 512, then each model's step
  auto label_of = [](int what) { return what == 0 ? "op 4096x512 fwd+bwd" : kStepModels[what - 1].label; };
  // ms[regime][what][kind]: one value per round
  std::map<std::tuple<int, int, NormType>, std::vector<double>> ms;
  OpBench op(4096, 512);
  for (int regime = 0; regime < 2; ++regime) {
    const bool composite = regime == 0;
    // each model's shape, one session per norm, each stepping on the same batch again and again
    std::map<std::pair<int, NormType>, std::unique_ptr<Session>> sessions;
    for (int what = 1; what < kWhats; ++what)
      for (NormType k : step_kinds) {
        auto& s = sessions[{what, k}];
        s = std::make_unique<Session>(session_config(
            kStepModels[what - 1].config, {data_override(kStepModels[what - 1]), std::string("model.norm.type=") + to_string(k),
                                           std::string("model.norm.impl=") + regimes[regime]}));
        s->next_batch();
      }
    auto time_round = [&](bool record) {
      for (NormType k : step_kinds) {  // alternating, so that slow phases of the machine hit every norm alike
        if (k != NormType::none) {
          const double t = ms_of([&] { op.run(k, composite); });
          if (record) ms[{regime, 0, k}].push_back(t);
        }
        for (int what = 1; what < kWhats; ++what) {
          Session& s = *sessions[{what, k}];
          const double t = ms_of([&] { s.step_on(s.batch()); });
          if (record) ms[{regime, what, k}].push_back(t);
        }
      }
    };
    for (int i = 0; i < 3; ++i) time_round(false);  // warm-up: sizes the arenas and the caches
    for (int i = 0; i < rounds; ++i) time_round(true);
  }
  std::vector<std::string> labels;
  for (int i = 1; i <= rounds; ++i) labels.push_back(fmt::format("round {}", i));
  auto ratio = [&](int regime, int what, NormType k) {
    std::vector<double> v;
    for (int i = 0; i < rounds; ++i) v.push_back(ms[{regime, what, k}][i] / ms[{regime, what, NormType::layernorm}][i]);
    return v;
  };
  r.details = "| regime | measurement | " + [&] {
    std::string h;
    for (NormType k : step_kinds) h += std::string(to_string(k)) + " min / median / max (ms) | ";
    return h;
  }() + "\n|---|---|";
  for (std::size_t i = 0; i < step_kinds.size(); ++i) r.details += "---|";
  r.details += "\n";
  for (int regime = 0; regime < 2; ++regime) {
    const std::string group = regime == 0 ? "" : "regime: fused kernels (normtool's own)";
    for (int what = 0; what < kWhats; ++what) {
      r.details += fmt::format("| {} | {} |", regimes[regime], label_of(what));
      for (NormType k : step_kinds) {
        auto v = ms[{regime, what, k}];
        if (v.empty()) {
          r.details += " - |";
          continue;
        }
        std::sort(v.begin(), v.end());
        r.details += fmt::format(" {:.3f} / {:.3f} / {:.3f} |", v.front(), median(v), v.back());
      }
      r.details += "\n";
      for (const auto& [k, role] : kCompared) {
        if (k == NormType::layernorm) continue;
        const std::string name = fmt::format("{}: {} time {} / layernorm", regimes[regime], label_of(what), to_string(k));
        Measure m = what == 0 ? measure_at_most(name, ratio(regime, what, k), 0.9)
                              : measure_at_most(name, ratio(regime, what, k), 1.0);
        if (what > 0) m.criterion = "< 1";
        m.labels = labels;
        r.measures.push_back(in_group(m, *role == '\0' ? group
                                                        : fmt::format("{} ({}), {}", to_string(k), role, regimes[regime])));
      }
    }
  }
  // The norm's share of a step (1 - the step without a norm / with LayerNorm), and whether
  // RMSNorm saves more of RNNSearch's step than of the Transformer's
  std::map<std::pair<int, int>, Interval> share;
  std::map<int, Interval> rnn_gain;
  for (int regime = 0; regime < 2; ++regime) {
    for (int what = 1; what < kWhats; ++what) {
      std::vector<double> v = ratio(regime, what, NormType::none);
      for (double& x : v) x = 1 - x;
      Measure m = measure_reported(fmt::format("{}: {}: LayerNorm's share of the step, 1 - none / layernorm", regimes[regime],
                                               label_of(what)),
                                   v, "the norm's share of a step");
      m.labels = labels;
      share[{regime, what}] = m.interval;
      r.measures.push_back(m);
    }
    std::vector<double> gain = ratio(regime, 1, NormType::rmsnorm), rnn = ratio(regime, 2, NormType::rmsnorm);
    for (int i = 0; i < rounds; ++i) gain[i] -= rnn[i];
    Measure m = measure_reported(fmt::format("{}: RMSNorm's saving on rnnsearch-tiny's step minus on lm-tiny's "
                                             "(lm ratio - rnnsearch ratio)",
                                             regimes[regime]),
                                 gain, "the recurrent regime against the Transformer");
    m.labels = labels;
    rnn_gain[regime] = m.interval;
    r.measures.push_back(m);
  }
  auto find = [&](const std::string& prefix) -> const Measure& {
    for (const Measure& m : r.measures)
      if (m.name.starts_with(prefix)) return m;
    return r.measures.front();
  };
  const std::string rnn = kStepModels[1].label, lm = kStepModels[0].label;
  const Measure &c_op = find("composite: op 4096x512 fwd+bwd time rmsnorm"), &c_step = find("composite: " + lm + " time rmsnorm"),
                &c_rnn = find("composite: " + rnn + " time rmsnorm"), &f_op = find("fused: op 4096x512 fwd+bwd time rmsnorm"),
                &f_step = find("fused: " + lm + " time rmsnorm"), &f_rnn = find("fused: " + rnn + " time rmsnorm");
  const ClaimVerdict fused = all_of({f_op.verdict, f_step.verdict, f_rnn.verdict});
  auto larger = [](const Interval& i) { return i.lo > 0 ? "larger" : i.hi < 0 ? "smaller" : "not distinguishable"; };
  r.measured = fmt::format(
      "RMS/LN time, composite ops (the paper's regime): op {}, Transformer step {}, RNNSearch step {}; fused kernels: "
      "op {}, steps {} and {} ({}). LayerNorm's share of the step, composite / fused: Transformer {} / {}, RNNSearch "
      "{} / {}; RNNSearch's saving is {} (composite), {} (fused)",
      show(c_op.interval, 3), show(c_step.interval, 3), show(c_rnn.interval, 3), show(f_op.interval, 3),
      show(f_step.interval, 3), show(f_rnn.interval, 3), std::string("fused regime ") + to_string(fused),
      show(share[{0, 1}], 2), show(share[{1, 1}], 2), show(share[{0, 2}], 2), show(share[{1, 2}], 2),
      larger(rnn_gain[0]), larger(rnn_gain[1]));
  r.details += fmt::format("\n{} rounds after 3 warm-up rounds, one thread; each round times every norm in turn, so the "
                           "ratios pair measurements taken moments apart. rnnsearch-tiny steps on {} batches. Other "
                           "processes used {:.1f}% of the machine's CPU during the timings{}.\n",
                           rounds, seq2seq_dataset(), 100 * load.share(),
                           load.share() > 0.1 ? " (more than 10%: the timings are disturbed, rerun on an idle machine)" : "");
  r.verdict = verdict_of(r.measures);
  return r;
}

}  // namespace nt
