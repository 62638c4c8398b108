// The keys only some configs read (train.momentum: sgd's; model.cell: the rnn's). Set where nothing
// reads it, a key would be ignored without a word, so it is refused, naming what reads it, unless it
// was set in an earlier layer than the key that decides: `train.momentum=0.5` beside adam in the
// same file, or beside a file's adam, is refused; a file of sgd with its momentum, run with
// `train.optimizer=adam` or swept over optimizers (a sweep's axes are a layer after its --set), is
// the later choice superseding it. At its default (every key of a config.json) it says nothing.
#include <algorithm>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "config/arch.h"
#include "config/config.h"
#include "config/parser.h"
#include "config/user_json.h"
#include "norms/norms.h"

namespace nt {

namespace {

struct ReadOnlyBy {
  const char* key;
  bool (*family)(const ArchDesc&);   // the families that read it (model.arch decides); nullptr: every family
  bool (*config)(const RunConfig&);  // and the configs of those that do; nullptr: every one
  const char* when = "";             // `config` in words
  const char* decides = "";          // the key `config` reads
};

bool lm_data(const ArchDesc& a) { return a.data() == DataKind::lm; }
bool sequences(const ArchDesc& a) { return a.data() != DataKind::classification; }
bool stacked(const ArchDesc& a) { return a.has_stacks(); }
bool over_batch(const RunConfig& c) { return norm_desc(c.model.norm.type).reduction == Reduction::batch; }
bool scaled_residual(const RunConfig& c) { return norm_desc(c.model.norm.type).scaled_residual; }
bool adam(const RunConfig& c) { return c.train.optimizer != Optimizer::sgd; }
constexpr const char* kBatchNorm = "a norm over the batch (model.norm.type batchnorm)";
constexpr const char* kAdam = "train.optimizer adam|adamw";

const ReadOnlyBy kReadOnlyBy[] = {
    {"data.seq_len", lm_data, nullptr},
    {"data.layout", lm_data, nullptr},
    {"data.max_len", [](const ArchDesc& a) { return a.data() == DataKind::seq2seq; }, nullptr},
    {"data.mask_prob", [](const ArchDesc& a) { return a.task == Task::masked_lm; }, nullptr},
    {"data.path", nullptr,
     [](const RunConfig& c) {
       const DatasetKind d = c.data.dataset;
       return d != DatasetKind::synthetic_lm && d != DatasetKind::synthetic_classify &&
              d != DatasetKind::synthetic_seq2seq;
     },
     "a dataset read from files (data.dataset fortunes|fashion-mnist|gettext-de)", "data.dataset"},
    {"model.d_model", sequences, nullptr},
    {"model.n_heads", stacked, nullptr},
    {"model.d_ff", stacked, nullptr},
    {"model.hidden", [](const ArchDesc& a) { return a.arch == Arch::mlp; }, nullptr},
    {"model.n_layers", [](const ArchDesc& a) { return a.arch != Arch::rnnsearch; }, nullptr},
    {"model.cell", [](const ArchDesc& a) { return a.arch == Arch::rnn; }, nullptr},
    {"model.rotary_base", stacked, [](const RunConfig& c) { return c.model.position == Position::rotary; },
     "model.position rotary", "model.position"},
    {"model.norm.momentum", nullptr, over_batch, kBatchNorm, "model.norm.type"},
    {"model.norm.bn_axes", [](const ArchDesc& a) { return a.allows.batch_norms && sequences(a); }, over_batch,
     kBatchNorm, "model.norm.type"},
    {"model.norm.alpha", stacked, scaled_residual, "model.norm.type deepnorm", "model.norm.type"},
    {"model.norm.beta", stacked, scaled_residual, "model.norm.type deepnorm", "model.norm.type"},
    {"model.norm.p", nullptr, [](const RunConfig& c) { return c.model.norm.type == NormType::prmsnorm; },
     "model.norm.type prmsnorm", "model.norm.type"},
    {"model.norm.dyt_alpha0", nullptr, [](const RunConfig& c) { return norm_desc(c.model.norm.type).alpha; },
     "model.norm.type dyt", "model.norm.type"},
    {"train.momentum", nullptr, [](const RunConfig& c) { return c.train.optimizer == Optimizer::sgd; },
     "train.optimizer sgd", "train.optimizer"},
    {"train.beta1", nullptr, adam, kAdam, "train.optimizer"},
    {"train.beta2", nullptr, adam, kAdam, "train.optimizer"},
    {"train.adam_eps", nullptr, adam, kAdam, "train.optimizer"},
};

nlohmann::json::json_pointer pointer_of(const char* key) {
  std::string p = std::string("/") + key;
  std::replace(p.begin(), p.end(), '.', '/');
  return nlohmann::json::json_pointer(p);
}

}  // namespace

void refuse_unread_keys(const RunConfig& c, Parser& p) {
  const nlohmann::json set = config_to_json(c), defaults = config_to_json(RunConfig{});
  const ArchDesc& a = arch_desc(c.model.arch);
  for (const ReadOnlyBy& r : kReadOnlyBy) {
    const bool by_family = !r.family || r.family(a);
    if (by_family && (!r.config || r.config(c))) continue;
    const nlohmann::json& value = set.at(pointer_of(r.key));
    const int decided = p.layer(by_family ? r.decides : "model.arch");
    if (value == defaults.at(pointer_of(r.key)) || (decided >= 0 && p.layer(r.key) < decided)) continue;
    const std::string got = fmt::format("got {}: leave it out", describe_json(value));
    if (!by_family)
      p.problem(r.key, fmt::format("model.arch {} does not read it (model.arch {}{} does); {}", a.name,
                                   families_where(r.family), r.config ? std::string(" with ") + r.when : "", got));
    else
      p.problem(r.key, fmt::format("read only with {}, which this config is not; {}", r.when, got));
  }
}

}  // namespace nt
