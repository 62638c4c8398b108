// The checks of a config that no single key can make: combinations that make no sense are errors
// naming the key (and the values resolved from others, as n_dec_layers and deepnorm's constants).
#include <cmath>
#include <fmt/format.h>

#include "config/config.h"
#include "config/parser.h"
#include "config/gettext_catalogs.h"
#include "norms/norms.h"

namespace nt {

namespace {

// rnn, rnnsearch: the recurrent layouts are fixed, their norms act per row, and their fields are
// their own.
void validate_recurrent(RunConfig& c, Parser& p) {
  const bool recurrent = c.model.arch == Arch::rnn || c.model.arch == Arch::rnnsearch;
  const std::string arch = to_string(c.model.arch);
  if (!recurrent) {
    if (c.model.d_emb)
      p.problem("model.d_emb", fmt::format("is the embedding width of model.arch rnn or rnnsearch, not of \"{}\": "
                                           "leave it null", arch));
    if (c.model.init == Init::nematus)
      p.problem("model.init", fmt::format("nematus is for model.arch rnn or rnnsearch, got \"{}\"", arch));
    return;
  }
  const NormType t = c.model.norm.type;
  if (t == NormType::batchnorm || t == NormType::deepnorm)
    p.problem("model.norm.type", fmt::format("model.arch {} takes a norm over each row (none|layernorm|rmsnorm|"
                                             "prmsnorm|scalenorm), got \"{}\"", arch, to_string(t)));
  if (c.model.norm.placement != Placement::pre)
    p.problem("model.norm.placement",
              fmt::format("model.arch {} has no placement (its norm sites are fixed): leave the default pre", arch));
  if (c.model.embed_norm) p.problem("model.embed_norm", fmt::format("model.arch {} has no embedding norm", arch));
  if (!c.model.bias)
    p.problem("model.bias", fmt::format("model.arch {} keeps Nematus's biases (GRU and LSTM input terms, output "
                                        "layers): leave it true", arch));
  if (c.train.precision != Precision::fp32)
    p.problem("train.precision", fmt::format("model.arch {} runs in fp32 only, got \"{}\"", arch,
                                             to_string(c.train.precision)));
}

}  // namespace

void validate_combinations(RunConfig& c, Parser& p) {
  validate_recurrent(c, p);
  const bool lm = c.is_lm();
  if ((c.model.arch == Arch::transformer || c.model.arch == Arch::encoder || c.model.arch == Arch::rnn) && !lm)
    p.problem("model.arch", fmt::format("{} needs a language-modelling dataset (fortunes|synthetic-lm), "
                                        "got data.dataset \"{}\"", to_string(c.model.arch), to_string(c.data.dataset)));
  if (c.model.arch == Arch::mlp && (lm || c.is_seq2seq()))
    p.problem("model.arch", fmt::format("mlp needs a classification dataset (fashion-mnist|synthetic-classify), "
                                        "got data.dataset \"{}\"", to_string(c.data.dataset)));
  const bool seq2seq_model = c.model.arch == Arch::encoder_decoder || c.model.arch == Arch::rnnsearch;
  if (seq2seq_model && !c.is_seq2seq())
    p.problem("model.arch", fmt::format("{} needs a seq2seq dataset (gettext-de|synthetic-seq2seq), got data.dataset "
                                        "\"{}\"", to_string(c.model.arch), to_string(c.data.dataset)));
  if (c.is_seq2seq() && !seq2seq_model)
    p.problem("model.arch", fmt::format("the seq2seq dataset {} needs model.arch encoder-decoder or rnnsearch, got "
                                        "\"{}\"", to_string(c.data.dataset), to_string(c.model.arch)));
  if (c.model.arch == Arch::encoder_decoder && !c.model.n_dec_layers) c.model.n_dec_layers = c.model.n_layers;
  if (c.model.arch != Arch::encoder_decoder && c.model.n_dec_layers)
    p.problem("model.n_dec_layers", fmt::format("counts the decoder blocks of an encoder-decoder, not of model.arch "
                                                "\"{}\": leave it null", to_string(c.model.arch)));
  if (c.model.arch == Arch::mlp && c.model.embed_norm)
    p.problem("model.embed_norm", "the mlp has no embeddings to normalize");
  if (c.model.arch == Arch::encoder_decoder && c.model.norm.type == NormType::batchnorm &&
      c.model.norm.bn_axes == BnAxes::batch)
    p.problem("model.norm.bn_axes", "batch (per position) needs fixed-length rows; an encoder-decoder's are padded "
                                    "to each batch's longest: use batch_time");
  if (c.data.catalogs && c.data.dataset != DatasetKind::gettext_de)
    p.problem("data.catalogs", fmt::format("only gettext-de reads catalogs, got data.dataset \"{}\"",
                                           to_string(c.data.dataset)));
  if (c.data.dataset == DatasetKind::gettext_de && !c.data.catalogs) c.data.catalogs = default_gettext_catalogs();
  const bool heads = c.model.arch != Arch::mlp && c.model.arch != Arch::rnn && c.model.arch != Arch::rnnsearch;
  if (heads && c.model.d_model % c.model.n_heads != 0)
    p.problem("model.n_heads", fmt::format("must divide model.d_model = {}, got {}", c.model.d_model, c.model.n_heads));
  if (c.model.norm.type == NormType::deepnorm && c.model.arch != Arch::rnn &&
      c.model.arch != Arch::rnnsearch) {  // refused above
    if (c.model.arch == Arch::mlp) p.problem("model.norm.type", "deepnorm is a transformer residual scheme, not for mlp");
    c.model.norm.placement = Placement::post;  // the spec: deepnorm is always post, whatever placement says
    if (c.model.arch != Arch::encoder_decoder) {  // one stack, one pair: shown resolved
      c.model.norm.alpha = c.deepnorm_alpha();
      c.model.norm.beta = c.deepnorm_beta();
    }  // encoder-decoder: a pair per stack, run --print-config shows both (deepnorm_of)
  }
  if (c.model.norm.type == NormType::batchnorm && c.model.norm.impl == NormImpl::composite)
    p.problem("model.norm.impl", "composite batchnorm keeps no running statistics: use fused");
  if (c.train.precision == Precision::fp16 && c.model.init == Init::normal && c.model.init_std > 0 &&
      c.model.init_std < 0x1p-24)
    p.problem("model.init_std", fmt::format("{} is below fp16's smallest subnormal 2^-24 = 5.96e-08: with "
                                            "train.precision fp16 nearly every initial weight would round to 0",
                                            c.model.init_std));
  if (c.model.arch == Arch::encoder) {  // every position real at best: a padded row has fewer
    const int64_t n = int64_t(c.train.batch_size) * c.data.seq_len;
    const double q = std::pow(1 - c.data.mask_prob, double(n));
    if (q >= kMaxBatchWithoutTarget)
      p.problem("data.mask_prob", fmt::format("{} chooses no position of a batch of train.batch_size x data.seq_len = "
                                              "{} x {} = {} positions with probability (1 - {})^{} = {:.3g}, {} or more: "
                                              "the batch would have no target to predict",
                                              c.data.mask_prob, c.train.batch_size, c.data.seq_len, n,
                                              c.data.mask_prob, n, q, kMaxBatchWithoutTarget));
  }
  if (c.model.norm.type == NormType::batchnorm && c.model.arch == Arch::mlp && c.train.batch_size < 2)
    p.problem("train.batch_size", "batchnorm needs at least 2 rows per batch, got 1");
}

}  // namespace nt
