// C7, Post-LN's gradients at init (Xiong et al. 2020, Fig. 3), as data: in the paper's own
// architecture, an encoder-decoder (6L-6L, as Xiong's IWSLT14 model), decided on the decoder, the
// stack whose last layer feeds the loss; the encoder's profile reported beside it with no criterion;
// the 12-layer decoder-only transformer of the earlier version as an ablation, with its own
// ablations (normtool's small init, d_ff = 4d). C16, the last layer's gradient against depth.
#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <numeric>
#include <string_view>

#include "analysis/seed_band.h"
#include "claims/claim.h"
#include "claims/evidence.h"
#include "claims/postln.h"
#include "data/dataset.h"
#include "train/session.h"

namespace nt {

std::map<std::string, std::vector<double>> w2_gradient_norms(const RunConfig& c,
                                                             const std::shared_ptr<const Dataset>& data, int batches) {
  Session run(c, data);
  ParamStore<float>& ps = run.params();
  std::vector<double> sum(ps.numel(), 0.0);
  for (int b = 0; b < batches; ++b) {
    run.next_batch();
    run.forward_backward(run.batch());
    for (std::size_t i = 0; i < ps.numel(); ++i) sum[i] += ps.grad()[i] / batches;
  }
  std::map<std::string, std::vector<double>> per_layer;
  const std::string w2 = "ffn.fc2.weight";
  for (int i = 0; i < ps.count(); ++i) {
    const auto& info = ps.info(i);
    if (!std::string_view(info.name).ends_with(w2)) continue;
    std::vector<double>& v = per_layer[info.name.substr(0, info.name.size() - w2.size())];
    if (int(v.size()) <= info.layer) v.resize(info.layer + 1, 0.0);
    double s2 = 0;
    for (std::size_t k = 0; k < info.size(); ++k) s2 += sum[info.offset + k] * sum[info.offset + k];
    v[info.layer] = std::sqrt(s2);
  }
  return per_layer;
}

namespace {

// One job (a placement at claim seed s): the claim is about the expected gradient over inits, so the
// norms of w2_gradient_norms are averaged over the inits of seeds 1000 s + k (disjoint for disjoint
// seed sets) on one dataset (drawn at the default seed: only the init varies). 10 batches: the
// expected gradient of one init is already stable (200 change its norms by ~2%); 8 inits (quick: 1
// init of 3 batches, which only shows that it runs).
nlohmann::json gradient_profile(const RunConfig& job, const ClaimContext& ctx) {
  const int batches = ctx.quick ? 3 : 10, inits = ctx.quick ? 1 : 8;
  const RunConfig c = on_this_machine(job);
  RunConfig at_default_seed = c;
  at_default_seed.seed = RunConfig{}.seed;
  const std::shared_ptr<const Dataset> data = make_dataset(at_default_seed);
  std::map<std::string, std::vector<double>> mean;  // stack -> layer
  for (int k = 0; k < inits; ++k) {
    RunConfig init = c;
    init.seed = 1000 * c.seed + k;
    for (const auto& [stack, layers] : w2_gradient_norms(init, data, batches)) {
      mean[stack].resize(layers.size(), 0.0);
      for (std::size_t l = 0; l < layers.size(); ++l) mean[stack][l] += layers[l] / inits;
    }
  }
  return mean;
}

// model.norm.placement's values and the curves' names for them
constexpr std::pair<const char*, const char*> kPlacements[] = {{"post", "Post-LN"}, {"pre", "Pre-LN"}};

double rho(const std::vector<double>& p) {
  std::vector<double> layers(p.size());
  std::iota(layers.begin(), layers.end(), 0.0);
  return spearman(layers, p);
}
double last_over_first(const std::vector<double>& p) { return p.back() / p.front(); }
double max_over_min(const std::vector<double>& p) {
  const auto [lo, hi] = std::minmax_element(p.begin(), p.end());
  return *hi / *lo;
}

// Per seed, f of a stack's profile ("" the decoder-only's, "enc.", "dec.") at a placement
Reader of(std::string setting, const char* placement, std::string stack, double (*f)(const std::vector<double>&)) {
  return per_run(std::move(setting), {{"model.norm.placement", placement}},
                 [=](const RunRecord& r) { return f(r.summary.at(stack).get<std::vector<double>>()); });
}

// The criterion for one stack of a setting (or, `held` false, its measures reported with no
// criterion), its measures named with `prefix`, under `group`; `headline`: named in the one-line result
std::vector<MeasureSpec> shape(const std::string& setting, const std::string& stack, const std::string& prefix,
                               const std::string& group = "", bool headline = false, bool held = true) {
  return {{prefix + "Post-LN: Spearman rho(layer, ||grad W2||)", held_or_reported(held, AtLeast{0.8}),
           of(setting, "post", stack, rho), group, Scale::linear, false, headline, 2},
          {prefix + "Post-LN: ||grad W2|| last layer / first layer", held_or_reported(held, AtLeast{2}),
           of(setting, "post", stack, last_over_first), group, Scale::log, false, headline, 2},
          {prefix + "Pre-LN: ||grad W2|| max / min over layers", held_or_reported(held, AtMost{2}),
           of(setting, "pre", stack, max_over_min), group, Scale::log, false, headline, 2}};
}

std::vector<MeasureSpec> c7_measures() {
  const std::string lm = "ablation: decoder-only, 12 layers";
  std::vector<MeasureSpec> m;
  for (auto part : {shape("encoder-decoder", "dec.", "decoder: "),
                    shape("encoder-decoder", "enc.", "encoder: ", "the encoder (a finding, no criterion)", true, false),
                    shape("decoder-only", "", "decoder-only: ", lm + " (Xavier)", true),
                    shape("decoder-only, N(0, 0.02)", "", "decoder-only, N(0, 0.02): ", lm + ", model.init normal"),
                    shape("decoder-only, d_ff = 4d", "", "decoder-only, d_ff = 4d: ", lm + ", d_ff = 4d (Xavier)")})
    m.insert(m.end(), part.begin(), part.end());
  return m;
}

// The mean over the seeds, layer by layer, of a stack's profile ("enc.", "dec.", or "" for the
// decoder-only) at each placement, in each setting named with its label
std::vector<Curve> profiles(const Evidence& ev, const std::vector<std::array<const char*, 3>>& stacks) {
  std::vector<Curve> curves;
  for (const auto& [label, setting, stack] : stacks)
    for (const auto& [placement, name] : kPlacements) {
      const std::vector<double> m = mean_of(ev.of(setting, {{"model.norm.placement", placement}}), stack);
      Curve& c = curves.emplace_back(Curve{std::string(label) + name, {}, {}});
      for (std::size_t l = 0; l < m.size(); ++l) c.points.emplace_back(double(l), m[l]);
    }
  return curves;
}
std::vector<Curve> stacks(const Evidence& ev) {
  return profiles(ev, {{"encoder, ", "encoder-decoder", "enc."}, {"decoder, ", "encoder-decoder", "dec."}});
}
std::vector<Curve> decoder_only(const Evidence& ev) {
  return profiles(ev, {{"Xavier, ", "decoder-only", ""}, {"N(0, 0.02), ", "decoder-only, N(0, 0.02)", ""}});
}

std::string gradient_tables(const Evidence& ev) {
  std::string t =
      "||mean gradient of W2|| by layer, means over the seeds; the encoder-decoder (the decoder's layer 0 on "
      "the input side):\n\n" +
      curves_table("stack, placement", stacks(ev), "{:.4g}") + catalogs_note();
  if (ev.runs.count("decoder-only"))
    t += "\nThe decoder-only transformer (the ablation):\n\n" +
         curves_table("init, placement", decoder_only(ev), "{:.4g}");
  return t;
}

// Post-LN against Pre-LN in Xiong's setting (Xavier init, ReLU, a d x d feed-forward layer), in the
// encoder-decoder; the decoder-only as the ablations, with normtool's small init and d_ff = 4d
std::vector<Setting> placements() {
  const char *lm = "ablation: decoder-only, 12 layers", *xavier = "model.init=xavier", *relu = "model.activation=relu";
  std::vector<Setting> s{
      {"encoder-decoder",
       "encdec-tiny.json",
       {xavier, relu, "model.d_ff=64", "model.n_layers=6", "model.n_dec_layers=6"}},
      {"decoder-only", "lm-tiny.json", {xavier, relu, "model.d_ff=64", "model.n_layers=12"}},
      {"decoder-only, N(0, 0.02)", "lm-tiny.json", {relu, "model.d_ff=64", "model.n_layers=12"}},
      {"decoder-only, d_ff = 4d", "lm-tiny.json", {xavier, relu, "model.d_ff=256", "model.n_layers=12"}}};
  for (Setting& one : s) {
    one.axes = {"model.norm.placement=post,pre"}, one.session = gradient_profile;
    if (one.config == "lm-tiny.json") one.group = lm;
  }
  return s;
}

// ---- C16: the last layer's gradient against depth (Xiong's Theorem 1) ----

// A model's depths: its setting, its label, the stack in the profile, the depths it runs (and in
// quick mode), its config and overrides (Xiong's: Xavier init, ReLU, a d x d feed-forward layer) and
// its group ("": decides)
struct Depths {
  const char *setting, *label, *stack;
  std::vector<int> depths, quick;
  const char* config;
  std::vector<std::string> overrides;
  const char* group;
  const std::vector<int>& at(const Evidence& ev) const { return ev.ctx->quick ? quick : depths; }
};
const std::vector<Depths> kDepths{
    {"depths", "decoder-only", "", {2, 4, 6, 8, 12, 16}, {2, 4, 8}, "lm-tiny.json",
     {"model.init=xavier", "model.activation=relu", "model.d_ff=64"}, ""},
    {"encdec-depths", "encoder-decoder's decoder", "dec.", {6, 8, 10, 12, 14}, {2, 4}, "encdec-tiny.json",
     {"model.init=xavier", "model.activation=relu", "model.d_ff=64", "model.n_dec_layers=null"},
     "ablation: the encoder-decoder's decoder, 6L-6L to 14L-14L (Xiong's Fig. 3(c, d) models)"}};

// Per seed, at a placement, the last layer's ||grad W2|| at each depth (in the order of the depths)
std::vector<std::vector<double>> last_layer(const Evidence& ev, const Depths& d, const char* placement) {
  std::vector<std::vector<double>> per_seed(ev.seeds.size());
  for (int L : d.at(ev)) {
    const auto runs = ev.of(d.setting, {{"model.norm.placement", placement}, {"model.n_layers", std::to_string(L)}});
    for (std::size_t s = 0; s < runs.size(); ++s)
      per_seed[s].push_back(runs[s]->summary.at(d.stack).get<std::vector<double>>().back());
  }
  return per_seed;
}

// Per seed, f of the depths and the last layer's ||grad W2|| at each
using OverDepths = double (*)(const std::vector<int>& depths, const std::vector<double>& g);
Reader over_depths(const Depths& d, const char* placement, OverDepths f) {
  return [d, placement, f](const Evidence& ev) {
    std::vector<double> v;
    for (const auto& g : last_layer(ev, d, placement)) v.push_back(f(d.at(ev), g));
    return v;
  };
}
// The slope of log ||grad W2_L|| against log L (Theorem 1: 0 for Post-LN, -1/2 for Pre-LN)
double log_log_slope(const std::vector<int>& depths, const std::vector<double>& g) {
  std::vector<double> x, y;
  for (int L : depths) x.push_back(std::log(L));
  for (double v : g) y.push_back(std::log(v));
  return linear_fit(x, y).slope;
}
double spread(const std::vector<int>&, const std::vector<double>& g) { return max_over_min(g); }

std::vector<MeasureSpec> c16_measures(const Depths& d) {
  const std::string p = std::string(d.label) + ", ", group = d.group;
  return {{p + "Post-LN: last layer's ||grad W2||, max / min over L", AtMost{1.5}, over_depths(d, "post", spread),
           group, Scale::log, false, !group.empty(), 2},
          {p + "Pre-LN: log-log slope of the last layer's ||grad W2|| over L", Within{-0.75, -0.25},
           over_depths(d, "pre", log_log_slope), group, Scale::linear, false, !group.empty(), 2},
          {p + "Post-LN: log-log slope over L", Reported{}, over_depths(d, "post", log_log_slope), "reported"},
          {p + "Pre-LN: max / min over L", Reported{}, over_depths(d, "pre", spread), "reported", Scale::log}};
}

std::vector<Curve> against_depth(const Evidence& ev) {
  std::vector<Curve> curves;
  for (const Depths& d : kDepths) {
    if (!ev.runs.count(d.setting)) continue;  // the ablation not run
    for (const auto& [placement, name] : kPlacements) {
      std::vector<std::map<double, double>> per_seed;
      for (const auto& g : last_layer(ev, d, placement)) {
        std::map<double, double>& m = per_seed.emplace_back();
        for (std::size_t k = 0; k < g.size(); ++k) m[d.at(ev)[k]] = g[k];
      }
      curves.push_back(mean_over_seeds(fmt::format("{}, {}", d.label, name), per_seed));
    }
  }
  return curves;
}

std::string depth_table(const Evidence& ev) {
  return "The last layer's ||mean gradient of W2|| at each depth L, means over the seeds:\n\n" +
         curves_table("model, placement", against_depth(ev), "{:.4g}");
}

std::vector<Setting> depth_settings() {
  auto layers = [](const std::vector<int>& v) { return fmt::format("model.n_layers={}", fmt::join(v, ",")); };
  std::vector<Setting> s;
  for (const Depths& d : kDepths)
    s.push_back({.name = d.setting,
                 .config = d.config,
                 .overrides = d.overrides,
                 .axes = {"model.norm.placement=post,pre", layers(d.depths)},
                 .group = d.group,
                 .session = gradient_profile,
                 .quick_axes = {"model.norm.placement=post,pre", layers(d.quick)}});
  return s;
}

Claim c16() {
  std::vector<MeasureSpec> m;
  for (const Depths& d : kDepths)
    for (MeasureSpec& x : c16_measures(d)) m.push_back(std::move(x));
  return {
      .id = "C16",
      .slug = "last-layer-gradient-vs-depth",
      .title = "At initialization the last layer's FFN gradient does not depend on depth in Post-LN and falls as "
               "about 1/sqrt(L) in Pre-LN",
      .source = "Xiong et al. 2020 Theorem 1 and App. E (||dL/dW2_L|| is O(d sqrt(ln d)) for Post-LN whatever L, "
                "O(d sqrt(ln d / L)) for Pre-LN), Fig. 3(c, d) (6L-6L to 14L-14L at init: Post-LN 'around 1.6', "
                "Pre-LN falling with size)",
      .why = "Read off Theorem 1 (claims.md): independent of L is taken as max/min over L <= 1.5 for L from 2 to 16, "
             "an 8-fold range of depth in which a 1/sqrt(L) law would move the gradient 2.8-fold; 'about 1/sqrt(L)' "
             "as the log-log slope within [-0.75, -0.25] around the theory's -1/2. The decoder-only model is the "
             "theorem's one stack whose last layer feeds the softmax; the encoder-decoder's decoder, Fig. 3(c, d)'s "
             "models, is reported beside it. Fresh seeds 11-20.",
      .settings = depth_settings(),
      .measures = m,
      .plots = {{"last-layer-gradient",
                 {.title = "C16: the last layer's ||mean gradient of W2|| at init against depth (mean over seeds, "
                           "band: 95% interval over seeds)",
                  .xlabel = "layers L",
                  .ylabel = "||mean gradient of W2_L||",
                  .logx = true,
                  .logy = true},
                 against_depth}},
      .method = "At init, the Frobenius norm of the gradient of the last block's FFN output matrix W2_L, as C7 "
                "measures it (averaged over 10 batches, and for seed s over 8 inits, seeds 1000 s + k), at each "
                "depth L; per seed, "
                "Post-LN's max/min over the depths and Pre-LN's least-squares slope of log ||grad W2_L|| against "
                "log L.",
      .details = depth_table,
      .core = false,
  };
}

}  // namespace

std::vector<Claim> postln_gradients_claims() {
  return {{
      .id = "C7",
      .slug = "post-ln-gradients-at-init",
      .title = "At initialization Post-LN gradients grow toward the output layer; Pre-LN's are nearly uniform",
      .source = "Xiong et al. 2020 Fig. 3 (a 6-6 encoder-decoder on IWSLT14, one axis of layers 1-6, no split into "
                "encoder and decoder; Theorem 1: one stack whose last layer feeds the softmax; theory: Post-LN "
                "last/first ~ (3/2)^((L-1)/2), 2.8 for 6 layers, 9 for 12)",
      .why = "Revision 2: decided on the decoder, the stack whose last layer feeds the loss. Xiong's Fig. 3 has one "
             "axis (layers 1-6) with no split into encoder and decoder, and Theorem 1 and App. F treat one stack "
             "whose last layer feeds the softmax (DeepNet §3, Liu et al. 2020: the decoder is the unstable stack); "
             "the encoder's profile is reported as a finding, with no criterion. The thresholds are unchanged: "
             "last/first >= 2 (theory 2.8 at 6 layers) with Spearman >= 0.8 for monotone growth, Pre-LN's max/min "
             "<= 2 for a flat profile. Decided on fresh seeds 11-20.",
      .settings = placements(),
      .measures = c7_measures(),
      .plots = {{"grad-norms-encdec",
                 {"C7: gradient norm of each block's W2 at init, encoder-decoder 6L-6L (mean over seeds)",
                  "layer within its stack", "||mean gradient of W2||", false, true},
                 stacks},
                {"grad-norms",
                 {"C7 ablation: decoder-only, 12 layers (mean over seeds)", "layer", "||mean gradient of W2||", false,
                  true},
                 decoder_only}},
      .method = "At init, per stack, the Frobenius norm of the gradient of each block's FFN output matrix (W^2 in "
                "Xiong et al.) averaged over 10 batches; for seed s the norms averaged over 8 inits (seeds 1000 s + k) "
                "on the same data (quick: 1 init of 3 batches); per seed, Post-LN's Spearman rho(layer, norm) and "
                "last/first layer, Pre-LN's max/min over the layers. gettext-de pairs, synthetic-seq2seq where the "
                "catalogs are missing.",
      .details = gradient_tables,
  },
  c16()};
}

}  // namespace nt
