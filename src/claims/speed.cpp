// The speed claim C3: RMSNorm is faster than LayerNorm, per op and per training step. It runs
// in this process on one thread, and `normtool reproduce` runs claims one at a time, so no other
// experiment runs beside its timings.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "core/aligned.h"
#include "core/rng.h"
#include "core/threads.h"
#include "norms/norms.h"
#include "train/session.h"

namespace nt {

namespace {

struct Timing {
  double min = INFINITY, median = NAN, max = 0;
};
Timing timing_of(std::vector<double> v) {
  Timing t;
  std::sort(v.begin(), v.end());
  t.min = v.front(), t.max = v.back(), t.median = median(v);
  return t;
}
double ms_of(auto&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ClaimResult claim_c3(const ClaimContext& ctx) {
  ClaimResult r;
  set_math_threads(1);
  const int N = 4096, C = 512, rounds = ctx.quick ? 10 : 30;
  AlignedVector<float> x(std::size_t(N) * C), dx(x.size()), gamma(C, 1.0f), dgamma(C), beta(C), dbeta(C), dy(x.size());
  Rng rng(3, 1);
  for (auto& v : x) v = float(rng.normal());
  for (auto& v : dy) v = float(1e-3 * rng.normal());
  Graph<float> g;
  auto op = [&](bool rms) {
    g.reset();
    const Tensor<float> xt{x.data(), dx.data(), N, C}, gt{gamma.data(), dgamma.data(), 1, C}, bt{beta.data(), dbeta.data(), 1, C};
    Tensor<float> y = rms ? rmsnorm(g, xt, gt, 1e-5f) : layernorm(g, xt, gt, bt, 1e-5f);
    std::copy(dy.begin(), dy.end(), y.grad);
    g.backward(Tensor<float>{});
  };
  std::vector<double> ln_ms, rms_ms;
  for (int i = 0; i < 3; ++i) op(false), op(true);  // warm-up
  for (int i = 0; i < rounds; ++i) {  // alternating
    ln_ms.push_back(ms_of([&] { op(false); }));
    rms_ms.push_back(ms_of([&] { op(true); }));
  }
  // the whole step of lm-tiny (synthetic data of the same shape), one thread, alternating
  std::vector<double> ln_step, rms_step;
  {
    Session ln(session_config("lm-tiny.json", {"data.dataset=synthetic-lm"}));
    Session rms(session_config("lm-tiny.json", {"data.dataset=synthetic-lm", "model.norm.type=rmsnorm"}));
    ln.next_batch(), rms.next_batch();  // the same batch: same seed, same data
    auto step = [](Session& s) { s.step_on(s.batch()); };
    for (int i = 0; i < 3; ++i) step(ln), step(rms);
    for (int i = 0; i < rounds; ++i) {
      ln_step.push_back(ms_of([&] { step(ln); }));
      rms_step.push_back(ms_of([&] { step(rms); }));
    }
  }
  const Timing lo = timing_of(ln_ms), ro = timing_of(rms_ms), ls = timing_of(ln_step), rs = timing_of(rms_step);
  r.measured = fmt::format("op 4096x512 fwd+bwd: RMS/LN = {:.3f} (medians {:.2f} / {:.2f} ms); lm-tiny step: RMS/LN = "
                           "{:.3f} (medians {:.2f} / {:.2f} ms)", ro.median / lo.median, ro.median, lo.median,
                           rs.median / ls.median, rs.median, ls.median);
  r.details = "| measurement | LN min / median / max (ms) | RMS min / median / max (ms) |\n|---|---|---|\n";
  r.details += fmt::format("| norm op 4096x512, forward + backward | {:.3f} / {:.3f} / {:.3f} | {:.3f} / {:.3f} / {:.3f} |\n",
                           lo.min, lo.median, lo.max, ro.min, ro.median, ro.max);
  r.details += fmt::format("| lm-tiny training step | {:.2f} / {:.2f} / {:.2f} | {:.2f} / {:.2f} / {:.2f} |\n", ls.min,
                           ls.median, ls.max, rs.min, rs.median, rs.max);
  r.details += fmt::format("\n{} alternating rounds each, one thread, after 3 warm-up rounds.\n", rounds);
  r.verdict = verdict_of(ro.median <= 0.9 * lo.median && rs.median < ls.median);
  return r;
}

}  // namespace nt
