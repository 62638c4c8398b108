#include "claims/claim.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "config/describe.h"
#include "io/paths.h"
#include "sweep/sweep.h"

namespace nt {

std::string ClaimContext::seeds_axis() const { return fmt::format("seed={}", fmt::join(seeds, ",")); }

ClaimVerdict verdict_of(const std::vector<Measure>& measures) {
  std::vector<ClaimVerdict> v;
  for (const Measure& m : measures)
    if (m.group.empty() && !m.precondition) v.push_back(m.verdict);
  return all_of(v);
}

std::string criterion_text(const Claim& c) {
  if (c.run) return c.criterion;
  if (c.report) return "none: a report (REPORT), every figure with its interval over seeds";
  std::vector<std::string> parts, pre;
  for (const MeasureSpec& m : c.measures)
    if (m.group.empty() && decides(m.criterion))
      (m.precondition ? pre : parts).push_back(fmt::format("{} {}", m.name, text(m.criterion)));
  std::string s = fmt::format("{}", fmt::join(parts, "; and "));
  if (!pre.empty()) s += fmt::format("; precondition: {}", fmt::join(pre, "; "));
  return s;
}

namespace {

// What a setup paragraph leaves out: how often a run logs and evaluates, not what it trains
bool plumbing(const std::string& kv) {
  for (const char* k : {"train.log_every=", "train.eval_every=", "train.stats_every=", "train.eval_batches=",
                        "train.checkpoint_every=", "train.threads="})
    if (kv.starts_with(k)) return true;
  return false;
}

std::vector<std::string> shown(const std::vector<std::string>& overrides, const std::vector<std::string>& except = {}) {
  std::vector<std::string> out;
  for (const std::string& kv : overrides)
    if (!plumbing(kv) && std::find(except.begin(), except.end(), kv) == except.end()) out.push_back("`" + kv + "`");
  return out;
}

// What every setting of a claim has in common: said once, before the settings
struct Common {
  std::vector<std::string> overrides, quick;
};

Common common_of(const std::vector<Setting>& settings) {
  if (settings.size() < 2) return {};
  Common c{settings.front().overrides, settings.front().quick};
  for (const Setting& s : settings)
    for (auto [all, mine] : {std::pair{&c.overrides, &s.overrides}, std::pair{&c.quick, &s.quick}})
      std::erase_if(*all,
                    [&](const std::string& kv) { return std::find(mine->begin(), mine->end(), kv) == mine->end(); });
  return c;
}

// A setting in words: the first of its config described whole from the resolved config, a later
// one as what it changes
std::string setting_text(const Setting& s, const Setting* like, const Common& common) {
  std::string text = fmt::format("**{}**{}: ", s.name, s.group.empty() ? "" : " (" + s.group + ")");
  std::vector<std::string> except = like ? like->overrides : std::vector<std::string>{};
  except.insert(except.end(), common.overrides.begin(), common.overrides.end());
  std::vector<std::string> at_first = s.overrides;  // the overrides of the axes' first job
  for (const std::string& a : s.axes) {
    const SweepAxis axis = parse_axis(a);
    for (const std::string& kv : s.overrides)  // an override an axis sets again says nothing of the runs
      if (kv.starts_with(axis.key + "=")) except.push_back(kv);
    at_first.push_back(axis.key + "=" + axis.values.front());
  }
  if (like) {
    text += fmt::format("as {}", like->name);
    if (const auto o = shown(s.overrides, except); !o.empty()) text += fmt::format(" with {}", fmt::join(o, ", "));
  } else {
    text += fmt::format("`configs/{}`", s.config);
    if (const auto o = shown(s.overrides, except); !o.empty()) text += fmt::format(" with {}", fmt::join(o, ", "));
    // at each axis's first value: the base config itself may be no run of the setting
    text += " (" + describe(load_config_file(config_path(s.config), at_first)) + ")";
  }
  if (!s.axes.empty() && (!like || like->axes != s.axes)) text += fmt::format(", over `{}`", fmt::join(s.axes, "`, `"));
  if (const auto q = shown(s.quick, common.quick); !q.empty()) text += fmt::format("; quick {}", fmt::join(q, ", "));
  if (!s.quick_axes.empty()) text += fmt::format("; quick over `{}`", fmt::join(s.quick_axes, "`, `"));
  return text;
}

}  // namespace

std::string setup_text(const Claim& c) {
  if (c.run) return c.setup;
  const Common common = common_of(c.settings);
  std::string text;
  if (const auto o = shown(common.overrides); !o.empty())
    text += fmt::format("Every setting with {}", fmt::join(o, ", "));
  if (const auto q = shown(common.quick); !q.empty())
    text += fmt::format("{}quick {}", text.empty() ? "Every setting in " : "; in ", fmt::join(q, ", "));
  std::vector<std::string> parts;
  for (const Setting& s : c.settings) {
    const auto first =
        std::find_if(c.settings.begin(), c.settings.end(), [&](const Setting& t) { return t.config == s.config; });
    try {
      parts.push_back(setting_text(s, &*first == &s ? nullptr : &*first, common));
    } catch (const InputError& e) {  // a data directory's config broken: say whose description failed
      throw InputError(fmt::format("claim {}, setting {} (configs/{}): {}", c.id, s.name, s.config, e.what()));
    }
  }
  return fmt::format("{}{}. {}", text.empty() ? "" : text + ". ", fmt::join(parts, "; "), c.method);
}

bool sweeps(const Claim& c) {
  if (c.run) return false;  // the exact claims and C3 compute here
  return std::any_of(c.settings.begin(), c.settings.end(), [](const Setting& s) { return !s.session; });
}

}  // namespace nt
