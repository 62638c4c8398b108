#include "config/describe.h"

#include <fmt/format.h>

#include <array>

#include "config/arch.h"
#include "norms/norm_kind.h"

namespace nt {

namespace {

std::string model_phrase(const RunConfig& c) {
  const ModelConfig& m = c.model;
  const ArchDesc& a = arch_desc(m.arch);
  std::string s = a.name;
  if (m.arch == Arch::mlp)
    return s + fmt::format(", {} hidden layers of {}, {}", m.n_layers, m.hidden, kActivationNames[int(m.activation)]);
  if (a.allows.recurrent)
    s += fmt::format(" ({}), embedding {}, state {}", kCellNames[int(m.cell)], m.emb_width(), m.d_model);
  else if (a.stacks == Stacks::encoder_decoder)
    s += fmt::format(" {}L-{}L, d {}, FFN {}, {} heads", m.n_layers, m.dec_layers(), m.d_model, m.d_ff, m.n_heads);
  else
    s += fmt::format(", {} layers, d {}, FFN {}, {} heads", m.n_layers, m.d_model, m.d_ff, m.n_heads);
  return s;
}

std::string norm_phrase(const RunConfig& c) {
  const NormConfig& n = c.model.norm;
  const std::string kind = to_string(n.type);
  if (kind == "none") return "no norm";
  const bool placed = arch_desc(c.model.arch).has_stacks();
  return fmt::format("{}{}{}", placed ? std::array{"Pre-LN ", "Post-LN ", "Peri-LN "}[int(n.placement)] : "", kind,
                     kind == "prmsnorm" ? fmt::format(" p {:g}", n.p) : "");
}

}  // namespace

std::string describe(const RunConfig& c) {
  const TrainConfig& t = c.train;
  std::string opt = fmt::format("{} lr {:g}", kOptimizerNames[int(t.optimizer)], t.lr);
  if (t.optimizer == Optimizer::sgd)
    opt += fmt::format(" momentum {:g}", t.momentum);
  else
    opt += fmt::format(" ({:g}, {:g})", t.beta1, t.beta2);
  if (t.warmup_steps) opt += fmt::format(", warm-up {}", t.warmup_steps);
  if (t.schedule != Schedule::constant || !t.warmup_steps) opt += fmt::format(", {}", kScheduleNames[int(t.schedule)]);
  if (t.grad_clip > 0) opt += fmt::format(", clip {:g}", t.grad_clip);
  return fmt::format("{}, {}, init {}; {}{}, batch {}; {}, {} steps", model_phrase(c), norm_phrase(c),
                     kInitNames[int(c.model.init)], kDatasetNames[int(c.data.dataset)],
                     c.is_lm() ? fmt::format(", seq {}", c.data.seq_len) : "", t.batch_size, opt, t.steps);
}

}  // namespace nt
