// The checks of a config that no single key can make: combinations that make no sense are errors
// naming the key (and the values resolved from others, as n_dec_layers and deepnorm's constants).
#include <cmath>
#include <fmt/format.h>

#include <bit>
#include <span>
#include <string>
#include <vector>

#include "config/arch.h"
#include "config/config.h"
#include "config/parser.h"
#include "config/gettext_catalogs.h"
#include "norms/norms.h"

namespace nt {

namespace {

// The names whose bit is in `set`, as "a|b".
std::string names_in(unsigned set, std::span<const char* const> names) {
  std::vector<const char*> in;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (set & (1u << i)) in.push_back(names[i]);
  return join_names(in);
}

// `value` of `key` against the values the family allows.
template <class E>
void check_allowed(Parser& p, const char* key, E value, unsigned allowed, std::span<const char* const> names,
                   const ArchDesc& a, const char* why = "") {
  if (allowed & bits(value)) return;
  p.problem(key, fmt::format("{} is not allowed for model.arch {}{}: expected {}{}", names[int(value)], a.name, why,
                             std::popcount(allowed) > 1 ? "one of " : "", names_in(allowed, names)));
}

// The kinds whose descriptions say yes, as the error messages list them ("a|b").
template <class Yes>
std::string kinds_where(Yes yes) {
  std::vector<const char*> names;
  for (NormType k : all_norm_types())
    if (yes(norm_desc(k))) names.push_back(to_string(k));
  return join_names(names);
}
bool takes_later_options(const NormDesc& d) { return d.later_options; }

// DeepNorm is a Transformer stack's residual scheme; a norm over the batch needs a family that allows one.
void check_norm_type(const ArchDesc& a, NormType t, Parser& p) {
  auto allowed = [&](const NormDesc& d) {
    return (!(d.scaled_residual || d.transformer_only) || a.has_stacks()) &&
           (a.allows.batch_norms || d.reduction != Reduction::batch);
  };
  if (allowed(norm_desc(t))) return;
  const char* why = norm_desc(t).scaled_residual    ? "is a transformer residual scheme"
                    : norm_desc(t).transformer_only ? "is defined for Transformer blocks"
                                                    : "normalizes over the batch";
  p.problem("model.norm.type", fmt::format("{} {}, not for model.arch {}: expected one of {}", to_string(t), why,
                                           a.name, kinds_where(allowed)));
}

// A family reads the datasets of its kind.
void check_dataset(const ArchDesc& a, DatasetKind dataset, Parser& p) {
  const DataKind data = data_kind(dataset);
  if (a.data() == data) return;
  std::vector<const char*> datasets;
  for (std::size_t d = 0; d < std::size(kDatasetNames); ++d)
    if (data_kind(DatasetKind(d)) == a.data()) datasets.push_back(kDatasetNames[d]);
  const auto readers = families_where([&](const ArchDesc& f) { return f.data() == data; });
  p.problem("model.arch", fmt::format("{} needs a {} dataset ({}), got data.dataset \"{}\", a {} dataset "
                                      "(model.arch {})",
                                      a.name, kDataKindNames[int(a.data())], join_names(datasets), to_string(dataset),
                                      kDataKindNames[int(data)], readers));
}

// The parts of a Transformer stack beyond its norms (query and key norms, embeddings, soft caps,
// feed-forward, positions): refused in the other families, and where their own settings disagree.
void validate_stack_parts(const ModelConfig& m, const ArchDesc& a, Parser& p) {
  if (m.qk_norm && !a.has_stacks())
    p.problem("model.qk_norm", fmt::format("needs dot-product attention, model.arch {}, got \"{}\"",
                                           families_where([](const ArchDesc& f) { return f.has_stacks(); }), a.name));
  else if (m.qk_norm && !norm_desc(m.norm.type).later_options)
    p.problem("model.qk_norm", fmt::format("a norm of the block's type, which must be {}, got model.norm.type \"{}\"",
                                           kinds_where(takes_later_options), to_string(m.norm.type)));
  if (m.qk_norm_scope != QkNormScope::head && !m.qk_norm)
    p.problem("model.qk_norm_scope", fmt::format("{} sets model.qk_norm's features, which is false: set it true or "
                                                 "leave the scope head",
                                                 to_string(m.qk_norm_scope)));
  if (m.tie_embeddings && a.stacks != Stacks::decoder && a.stacks != Stacks::encoder)
    p.problem("model.tie_embeddings", fmt::format("ties the token table of a single-stack model (model.arch "
                                                  "transformer|encoder) to its output layer, got \"{}\"",
                                                  a.name));
  if (m.scaled_residual_init && !a.has_stacks())
    p.problem("model.scaled_residual_init",
              fmt::format("scales a Transformer stack's out and fc2 (model.arch {}), "
                          "got \"{}\"",
                          families_where([](const ArchDesc& f) { return f.has_stacks(); }), a.name));
  const auto soft_cap = [&](const char* key, double cap) {
    if (cap > 0 && !a.has_stacks())
      p.problem(key, fmt::format("caps a Transformer stack's scores or logits (model.arch {}), got \"{}\": leave it 0",
                                 families_where([](const ArchDesc& f) { return f.has_stacks(); }), a.name));
  };
  soft_cap("model.attn_softcap", m.attn_softcap);
  soft_cap("model.logit_softcap", m.logit_softcap);
  if (m.embed_scale && !a.has_stacks())
    p.problem("model.embed_scale",
              fmt::format("scales a Transformer stack's token embedding (model.arch {}), got \"{}\"",
                          families_where([](const ArchDesc& f) { return f.has_stacks(); }), a.name));
  if (m.ffn == Ffn::glu && !a.has_stacks())
    p.problem("model.ffn", fmt::format("glu is a Transformer block's feed-forward (model.arch {}), not for \"{}\": "
                                       "leave it mlp",
                                       families_where([](const ArchDesc& f) { return f.has_stacks(); }), a.name));
  if (m.position != Position::learned && !a.has_stacks())
    p.problem("model.position", fmt::format("{} is a Transformer stack's position scheme (model.arch {}), not for "
                                            "\"{}\": leave it learned",
                                            to_string(m.position),
                                            families_where([](const ArchDesc& f) { return f.has_stacks(); }), a.name));
  else if (m.position == Position::rotary && m.n_heads > 0 && m.d_model % m.n_heads == 0 &&
           (m.d_model / m.n_heads) % 2 != 0)
    p.problem("model.position", fmt::format("rotary turns pairs of features: it needs an even head size "
                                            "model.d_model / model.n_heads, got {} / {} = {}",
                                            m.d_model, m.n_heads, m.d_model / m.n_heads));
}

// The keys and values of the model that its family's description refuses, and the dataset it reads;
// n_dec_layers resolved.
void validate_family(RunConfig& c, Parser& p) {
  const ArchDesc& a = arch_desc(c.model.arch);
  ModelConfig& m = c.model;
  const std::string recurrent = families_where([](const ArchDesc& f) { return f.allows.recurrent; });
  if (m.d_emb && !a.allows.recurrent)
    p.problem("model.d_emb",
              fmt::format("is the embedding width of model.arch {}, not of \"{}\": leave it null", recurrent, a.name));
  if (m.init == Init::nematus && !a.allows.recurrent)
    p.problem("model.init", fmt::format("nematus is for model.arch {}, got \"{}\"", recurrent, a.name));
  check_norm_type(a, m.norm.type, p);
  check_allowed(p, "model.norm.placement", m.norm.placement, a.allows.placements, kPlacementNames, a,
                std::popcount(a.allows.placements) == 1 ? " (its norm sites are fixed)" : "");
  if (m.embed_norm && !a.has_stacks())
    p.problem("model.embed_norm", fmt::format("model.arch {} has no embedding norm (a Transformer stack's): leave it "
                                              "false",
                                              a.name));
  validate_stack_parts(m, a, p);
  if (!m.bias && !a.allows.bias_off)
    p.problem("model.bias", fmt::format("model.arch {} keeps its biases: leave it true", a.name));
  check_allowed(p, "train.precision", c.train.precision, a.allows.precisions, kPrecisionNames, a);
  check_dataset(a, c.data.dataset, p);
  const bool two_stacks = a.stacks == Stacks::encoder_decoder;
  if (two_stacks && !m.n_dec_layers) m.n_dec_layers = m.n_layers;
  if (!two_stacks && m.n_dec_layers) {
    const auto encoder_decoders = families_where([](const ArchDesc& f) { return f.stacks == Stacks::encoder_decoder; });
    p.problem("model.n_dec_layers", fmt::format("counts the decoder blocks of model.arch {}, not of \"{}\": leave it "
                                                "null",
                                                encoder_decoders, a.name));
  }
  if (a.has_stacks() && m.d_model % m.n_heads != 0)
    p.problem("model.n_heads", fmt::format("must divide model.d_model = {}, got {}", m.d_model, m.n_heads));
}

// The options of "Normalization after the seed papers", each where its paper defines it: peri
// (Peri-LN) and depth_scaling (LayerNorm Scaling) with LayerNorm or RMSNorm (peri: none too) in a
// Transformer stack, postln-init (DeepNet's Post-LN-init) in Post-LN. Before deepnorm's placement
// resolves to post, so that peri given with deepnorm is refused.
void validate_later_norms(const RunConfig& c, Parser& p) {
  const ArchDesc& a = arch_desc(c.model.arch);
  const NormConfig& n = c.model.norm;
  const bool later_options = norm_desc(n.type).later_options;
  const std::string stacked = families_where([](const ArchDesc& f) { return f.has_stacks(); });
  if ((n.placement == Placement::peri || n.placement == Placement::reordered) && a.has_stacks() && !later_options &&
      n.type != NormType::none)
    p.problem("model.norm.placement", fmt::format("{} takes model.norm.type none|{}, got {}", to_string(n.placement),
                                                  kinds_where(takes_later_options), to_string(n.type)));
  if (n.depth_scaling && !a.has_stacks())
    p.problem("model.norm.depth_scaling", fmt::format("scales the norms of Transformer blocks (model.arch {}), "
                                                      "got \"{}\"",
                                                      stacked, a.name));
  else if (n.depth_scaling &&
           (n.placement == Placement::post || n.placement == Placement::reordered || norm_desc(n.type).scaled_residual))
    p.problem("model.norm.depth_scaling",
              fmt::format("scales the input norms of pre and peri placements, got {}",
                          norm_desc(n.type).scaled_residual
                              ? fmt::format("model.norm.type {}", to_string(n.type))
                              : fmt::format("model.norm.placement {}", to_string(n.placement))));
  else if (n.depth_scaling && !later_options)
    p.problem("model.norm.depth_scaling",
              fmt::format("takes model.norm.type {}, got {}", kinds_where(takes_later_options), to_string(n.type)));
  if (n.unit_offset) {  // Gemma's (1 + w): a gain per feature that starts at 1
    const auto offsettable = [](const NormDesc& d) {
      return d.gain == ParamShape::per_feature && d.gain_init(2) == 1.0;
    };
    if (!offsettable(norm_desc(n.type)))
      p.problem("model.norm.unit_offset", fmt::format("offsets a gain per feature that starts at 1 (model.norm.type "
                                                      "{}), got {}",
                                                      kinds_where(offsettable), to_string(n.type)));
    else if (!n.affine)
      p.problem("model.norm.unit_offset", "offsets the norm's gain, which model.norm.affine false leaves out");
  }
  if (c.model.init == Init::postln_init && !a.has_stacks())
    p.problem("model.init", fmt::format("postln-init is for model.arch {}, got \"{}\"", stacked, a.name));
  else if (c.model.init == Init::postln_init && (n.placement != Placement::post || norm_desc(n.type).scaled_residual))
    p.problem("model.init", fmt::format("postln-init is DeepNet's init for Post-LN: it needs model.norm.placement "
                                        "post and a model.norm.type other than {}, got {} {}",
                                        kinds_where([](const NormDesc& d) { return d.scaled_residual; }),
                                        to_string(n.placement), to_string(n.type)));
}

// A statistic over the batch has B values in a classifier (a row is one position), B per position
// or B x T in a sequence model; of one value the norm outputs its bias alone, whatever the input.
void validate_batch_statistics(const RunConfig& c, Parser& p) {
  const ArchDesc& a = arch_desc(c.model.arch);
  const NormDesc& norm = norm_desc(c.model.norm.type);
  if (norm.reduction == Reduction::batch && a.data() == DataKind::classification && c.train.batch_size < 2)
    p.problem("train.batch_size",
              fmt::format("{} needs at least 2 rows per batch, got 1", to_string(c.model.norm.type)));
  if (norm.reduction == Reduction::batch && a.data() == DataKind::lm && c.train.batch_size < 2 &&
      (c.model.norm.bn_axes == BnAxes::batch || c.data.seq_len < 2))
    p.problem("train.batch_size",
              c.model.norm.bn_axes == BnAxes::batch
                  ? fmt::format("{} with model.norm.bn_axes batch takes each statistic over the batch's rows at "
                                "one position: it needs at least 2 rows, got 1",
                                norm.name)
                  : fmt::format("{} takes each statistic over train.batch_size x data.seq_len = 1 x 1 value: it "
                                "needs at least 2",
                                norm.name));
}

}  // namespace

void validate_combinations(RunConfig& c, Parser& p) {
  validate_family(c, p);
  validate_later_norms(c, p);
  const ArchDesc& a = arch_desc(c.model.arch);
  const NormDesc& norm = norm_desc(c.model.norm.type);
  if (a.allows.batch_norms && a.data() == DataKind::seq2seq && norm.reduction == Reduction::batch &&
      c.model.norm.bn_axes == BnAxes::batch)
    p.problem("model.norm.bn_axes", fmt::format("batch (per position) needs fixed-length rows; model.arch {}'s are "
                                                "padded to each batch's longest: use batch_time",
                                                a.name));
  if (c.data.catalogs && c.data.dataset != DatasetKind::gettext_de)
    p.problem("data.catalogs",
              fmt::format("only gettext-de reads catalogs, got data.dataset \"{}\"", to_string(c.data.dataset)));
  if (c.data.dataset == DatasetKind::gettext_de && !c.data.catalogs) c.data.catalogs = default_gettext_catalogs();
  if (norm.scaled_residual && a.has_stacks()) {  // elsewhere refused above
    // The spec: deepnorm is always post. A placement left out resolves to it, and so does the pre of
    // a layer before the one that chose deepnorm (a file's pre, model.norm.type=deepnorm after it);
    // pre given with deepnorm or after it is a contradiction.
    const int placement_layer = p.layer("model.norm.placement");
    if (c.model.norm.placement == Placement::pre && placement_layer >= 0 &&
        placement_layer >= p.layer("model.norm.type"))
      p.problem("model.norm.placement", fmt::format("pre contradicts model.norm.type {}, which is always post "
                                                    "(norm(alpha x + f(x))): give post or leave the placement out",
                                                    norm.name));
    c.model.norm.placement = Placement::post;
    if (a.stacks != Stacks::encoder_decoder) {  // one stack, one pair: shown resolved
      c.model.norm.alpha = c.deepnorm_alpha();
      c.model.norm.beta = c.deepnorm_beta();
    }  // encoder-decoder: a pair per stack, run --print-config shows both (deepnorm_of)
  }
  if (norm.reduction == Reduction::batch && c.model.norm.impl == NormImpl::composite)
    p.problem("model.norm.impl", fmt::format("composite {} keeps no running statistics: use fused", norm.name));
  if (c.train.precision == Precision::fp16 && c.model.init == Init::normal && c.model.init_std > 0 &&
      c.model.init_std < 0x1p-24)
    p.problem("model.init_std", fmt::format("{} is below fp16's smallest subnormal 2^-24 = 5.96e-08: with "
                                            "train.precision fp16 nearly every initial weight would round to 0",
                                            c.model.init_std));
  if (a.task == Task::masked_lm) {  // every position real at best: a padded row has fewer
    const int64_t n = int64_t(c.train.batch_size) * c.data.seq_len;
    const double q = std::pow(1 - c.data.mask_prob, double(n));
    if (q >= kMaxBatchWithoutTarget)
      p.problem("data.mask_prob",
                fmt::format("{} chooses no position of a batch of train.batch_size x data.seq_len = "
                            "{} x {} = {} positions with probability (1 - {})^{} = {:.3g}, {} or more: "
                            "the batch would have no target to predict",
                            c.data.mask_prob, c.train.batch_size, c.data.seq_len, n, c.data.mask_prob, n, q,
                            kMaxBatchWithoutTarget));
  }
  validate_batch_statistics(c, p);
  refuse_unread_keys(c, p);
}

}  // namespace nt
