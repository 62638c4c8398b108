// C7, Post-LN's gradients at init (Xiong et al. 2020, Fig. 3), as data: in the paper's own
// architecture, an encoder-decoder (6L-6L, as Xiong's IWSLT14 model), decided on the decoder, the
// stack whose last layer feeds the loss; the encoder's profile reported beside it with no criterion;
// the 12-layer decoder-only transformer of the earlier version as an ablation, with its own
// ablations (normtool's small init, d_ff = 4d).
#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "claims/postln.h"
#include "data/dataset.h"
#include "train/session.h"

namespace nt {

const std::string& seq2seq_dataset() {
  static const std::string name = [] {
    try {
      make_dataset(session_config("encdec-tiny.json", {"data.dataset=gettext-de"}));
      return std::string("gettext-de");
    } catch (const DataError&) {
      return std::string("synthetic-seq2seq");
    }
  }();
  return name;
}

// A session's config on this machine: gettext-de as asked, or synthetic-seq2seq (the same vocabulary)
// where its catalogs are missing; also C10's (postln_update.cpp)
RunConfig on_this_machine(RunConfig c) {
  if (c.data.dataset == DatasetKind::gettext_de && seq2seq_dataset() != "gettext-de") {
    c.data.dataset = DatasetKind::synthetic_seq2seq;
    c.data.catalogs.reset();
  }
  return c;
}

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
    if (info.name.size() < w2.size() || info.name.compare(info.name.size() - w2.size(), w2.size(), w2) != 0) continue;
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
  auto or_reported = [held](Criterion c) { return held ? c : Criterion{Reported{}}; };
  return {{prefix + "Post-LN: Spearman rho(layer, ||grad W2||)", or_reported(AtLeast{0.8}),
           of(setting, "post", stack, rho), group, Scale::linear, false, headline, 2},
          {prefix + "Post-LN: ||grad W2|| last layer / first layer", or_reported(AtLeast{2}),
           of(setting, "post", stack, last_over_first), group, Scale::log, false, headline, 2},
          {prefix + "Pre-LN: ||grad W2|| max / min over layers", or_reported(AtMost{2}),
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
    for (const char* placement : {"post", "pre"}) {
      const auto runs = ev.of(setting, {{"model.norm.placement", placement}});
      std::vector<double> m;
      for (const RunRecord* r : runs) {
        const auto layers = r->summary.at(stack).get<std::vector<double>>();
        m.resize(layers.size(), 0.0);
        for (std::size_t l = 0; l < layers.size(); ++l) m[l] += layers[l] / double(runs.size());
      }
      curves.push_back({fmt::format("{}{}-LN", label, placement == std::string("post") ? "Post" : "Pre"), {}, {}});
      for (std::size_t l = 0; l < m.size(); ++l) curves.back().points.emplace_back(double(l), m[l]);
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
      curves_table("stack, placement", stacks(ev), "{:.4g}");
  if (seq2seq_dataset() != "gettext-de") t += "\nsynthetic-seq2seq pairs: the gettext catalogs are missing.\n";
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
      .seeds = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
  }};
}

}  // namespace nt
