#include "report/report.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/report_html.h"
#include "report/results_table.h"
#include "claims/statistics.h"
#include "core/read_file.h"
#include "io/files.h"
#include "io/paths.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The marker lines of the generated part: an experiment README's kBegin..kEnd, docs/claims.md's kBegin..kDocEnd
constexpr const char* kBegin =
    "<!-- generated from src/claims/registry.cpp by `normtool reproduce --sync-readmes`: edit it there -->";
constexpr const char* kEnd = "<!-- end of the generated header -->";
constexpr const char* kDocEnd = "<!-- end of the generated claims -->";

// Where the text after the end marker found at `end` starts: past the marker and its newline
std::size_t after_marker(const std::string& text, std::size_t end, const char* marker) {
  std::size_t rest = end + std::string(marker).size();
  return rest < text.size() && text[rest] == '\n' ? rest + 1 : rest;
}

// The link from a report directory to docs/claims.md: relative to where the docs are (the source
// tree, or share/normtool/docs installed), or the plain name when they cannot be found.
std::string claims_doc_link(const std::string& report_dir) {
  std::error_code ec;
  std::string docs;
  try {
    docs = data_dir() + "/docs/claims.md";
  } catch (const std::exception&) {
    return "`docs/claims.md`";
  }
  const fs::path target = fs::canonical(docs, ec);
  if (ec) return "`docs/claims.md`";
  const fs::path from = fs::weakly_canonical(fs::absolute(report_dir), ec);
  const fs::path rel = ec ? fs::path() : target.lexically_relative(from);
  return rel.empty() ? "`docs/claims.md`" : fmt::format("[`docs/claims.md`]({})", rel.string());
}

std::string anchor_of(const Claim& c) { return fmt::format("claim-{}", c.id); }
// After a claim's rerun command: a training claim takes other seeds
// " (seeds 11-20, looked at after 3, 6 and 10; other seeds: `--seeds a,b,c`)" for a claim that trains
std::string other_seeds(const Claim& c) {
  if (c.run) return "";
  const std::vector<int> looks = looks_for(default_rules(), int(c.seeds.size()));
  std::string why = c.seeds_why;
  if (!why.empty() && why.back() == '.') why.pop_back();
  return fmt::format(" (seeds {}-{}, looked at after {}{}; other seeds: `--seeds a,b,c`)", c.seeds.front(),
                     c.seeds.back(), fmt::join(looks, ", "), why.empty() ? "" : ": " + why);
}
int look_of(const ClaimResult& r) { return r.look ? r.look : int(r.seeds.size()); }
bool quick_run(const ClaimResult& r) { return r.setting.starts_with("quick"); }

std::string values_text(const Measure& m, const std::vector<int>& seeds) {
  std::vector<std::string> labels = m.labels;
  if (labels.empty())
    for (int s : seeds) labels.push_back(fmt::format("seed {}", s));
  if (m.values.size() > 6) {
    std::vector<double> sorted = m.values;
    std::sort(sorted.begin(), sorted.end());
    return fmt::format("{} values: min {:.4g}, median {:.4g}, max {:.4g}", sorted.size(), sorted.front(),
                       median(sorted), sorted.back());
  }
  std::string t;
  for (std::size_t i = 0; i < m.values.size(); ++i)
    t += fmt::format("{}{}: {:.4g}", i ? ", " : "", i < labels.size() ? labels[i] : "?", m.values[i]);
  return t;
}

// "95%, two-sided", "98.3%, one-sided, log scale (geometric mean)"
std::string interval_kind(const Measure& m) {
  return fmt::format("{:.3g}%, {}{}", 100 * m.confidence, m.sides == 1 ? "one-sided" : "two-sided",
                     m.scale == "log" ? ", log scale (geometric mean)" : "");
}

// The measure that made the verdict: an INCONCLUSIVE's unmet precondition, else the first deciding measure
// with the claim's verdict (a FAIL's first failing one), else the first deciding one; null: none.
const Measure* headline_measure(const ClaimResult& r) {
  const auto deciding = [](const Measure& m) { return m.group.empty() && !m.precondition; };
  for (const Measure& m : r.measures)
    if (m.group.empty() && m.precondition && m.verdict != ClaimVerdict::pass && r.verdict == ClaimVerdict::inconclusive)
      return &m;
  const auto it = std::find_if(r.measures.begin(), r.measures.end(),
                               [&](const Measure& m) { return deciding(m) && m.verdict == r.verdict; });
  const auto first = it != r.measures.end() ? it : std::find_if(r.measures.begin(), r.measures.end(), deciding);
  return first != r.measures.end() ? &*first : nullptr;
}

// The figure a claim's summary row shows: its headline measure, with the kind of its interval.
std::string headline_figure(const ClaimResult& r) {
  const Measure* m = headline_measure(r);
  return m ? fmt::format("{}: {} ({}; {})", m->name, show(m->interval, 3), interval_kind(*m), m->criterion)
           : r.measured;
}

// The same figure number first, for the README's results table: "1.46 [1.37, 1.56] for <= 1.5: <name>"
std::string headline_value(const ClaimResult& r) {
  const Measure* m = headline_measure(r);
  return m ? fmt::format("{} for {}: {}", show(m->interval, 3), m->criterion, m->name) : "";
}

// "3 (1, 2, 3)": the look a training claim stopped at and its seeds
std::string seeds_text(const ClaimResult& r) {
  if (r.seeds.empty()) return "-";
  return fmt::format("{} ({})", look_of(r), fmt::join(r.seeds, ", "));
}

// The measures of a training claim: those that decide the verdict, then each reported group.
std::string measures_table(const ClaimResult& r) {
  if (r.measures.empty()) return "";
  std::vector<std::string> groups;  // the deciding measures first, when there are any (a report has none)
  if (std::any_of(r.measures.begin(), r.measures.end(), [](const Measure& m) { return m.group.empty(); }))
    groups.push_back("");
  for (const Measure& m : r.measures)
    if (std::find(groups.begin(), groups.end(), m.group) == groups.end()) groups.push_back(m.group);
  std::string t;
  for (const std::string& g : groups) {
    t += g.empty() ? "The measures the verdict rests on:\n\n"
                   : fmt::format("**{}** (reported, not part of the verdict):\n\n", g);
    t += "| measure | values | mean [interval] | interval | criterion | verdict |\n|---|---|---|---|---|---|\n";
    for (const Measure& m : r.measures)
      if (m.group == g)
        // a measure without values (not defined for that system, e.g. P1's rnnsearch) shows "-"
        t += fmt::format("| {}{} | {} | {} | {} | {} | {} |\n", m.precondition ? "precondition: " : "",
                         markdown_cell(m.name), m.values.empty() ? "-" : markdown_cell(values_text(m, r.seeds)),
                         m.values.empty() ? "-" : show(m.interval, 4), m.values.empty() ? "-" : interval_kind(m),
                         markdown_cell(m.criterion), m.criterion == "-" ? "-" : to_string(m.verdict));
    t += "\n";
  }
  return t;
}

// The report's title and first paragraph: what a verdict means, the statistics, and whether this
// report is quick or partial (it says so in its title; each row of a quick one says so too)
std::string report_intro(const std::string& dir, const std::vector<std::pair<const Claim*, ClaimResult>>& results) {
  const bool quick = std::any_of(results.begin(), results.end(), [](const auto& cr) { return quick_run(cr.second); });
  std::string title = quick ? " (QUICK: shrunken settings that show the claims run; not their verdicts)" : "";
  if (results.size() < all_claims().size())
    title += fmt::format(" (PARTIAL: {} of the {} claims)", results.size(), all_claims().size());
  return fmt::format(
      "# normtool: the claims about normalization, reproduced{}\n\n"
      "Rerun everything with `normtool reproduce --jobs 2 --ablations` (without `--ablations`, every verdict but not "
      "the settings kept beside the papers' as ablations; or one claim with the command in its row; other seeds with "
      "`--seeds a,b,c`). Each claim's source with its own figures, the criterion and why it is what it is: {}; each "
      "claim's setup and any change with its reason: `experiments/<id>-<slug>/README.md`. A training claim's verdict "
      "comes from an interval over seeds: PASS when the criterion holds across the interval, FAIL when the interval "
      "lies entirely on the failing side, INCONCLUSIVE otherwise, or when a precondition is not met. The statistics: "
      "{}{}. REPORT: an experiment that puts systems side by side with no criterion (P1), its figures reported with "
      "their intervals.\n\n",
      title, claims_doc_link(dir), rules_text(default_rules()),
      quick ? " (a quick report takes the first look only, at the confidence of a single look)" : "");
}

json verdict_entry(const Claim& c, const ClaimResult& r) {
  return {{"id", c.id},
          {"slug", c.slug},
          {"title", c.title},
          {"figure", r.ran ? headline_figure(r) : r.measured},
          {"value", r.ran ? headline_value(r) : ""},
          {"quick", quick_run(r)},
          {"verdict", to_string(r.verdict)},
          {"ran", r.ran},
          {"measured", r.measured},
          {"criterion", criterion_text(c)},
          {"source", c.source},
          {"seeds", r.seeds},
          {"look", r.look},
          {"seconds", r.seconds}};
}

// How the deciding measures make the verdict, when there are several
std::string combination(const ClaimResult& r) {
  const auto deciding = std::count_if(r.measures.begin(), r.measures.end(),
                                      [](const Measure& m) { return m.group.empty() && !m.precondition; });
  return deciding < 2 ? ""
                      : fmt::format(
                            "The {} deciding measures combine as one criterion: PASS when every one passes, "
                            "FAIL when one fails, INCONCLUSIVE otherwise.\n\n",
                            deciding);
}

std::string claim_section(const Claim& c, const ClaimResult& r) {
  std::string md = fmt::format(
      "\n<a id=\"{}\"></a>\n<a id=\"{}-{}\"></a>\n## {}: {}\n\n**{}** ({:.0f} s)\n\n- measured: {}\n- criterion: {}\n"
      "- why this criterion: {}\n- source: {}\n- setup: {} (`experiments/{}/README.md`)\n"
      "- rerun: `normtool reproduce {}`\n\n",
      c.id, c.id, c.slug, c.id, c.title, to_string(r.verdict), r.seconds, r.measured, criterion_text(c), c.why,
      c.source, setup_text(c), dir_name(c), c.id);
  if (!r.reason.empty()) md += fmt::format("INCONCLUSIVE because the {}.\n\n", r.reason);
  md += combination(r);
  if (!r.seeds.empty())
    md += fmt::format("Seeds {}: the verdict stopped at the look of {} seeds{}.\n\n", fmt::join(r.seeds, ", "),
                      look_of(r), r.rules.empty() ? "" : " (statistics " + r.rules + ")");
  if (!r.setting.empty()) md += "Run here: " + r.setting + "\n\n";
  if (!r.ablations_not_run.empty())
    md += fmt::format("Ablations not run (`normtool reproduce {} --ablations` runs them): {}.\n\n", c.id,
                      fmt::join(r.ablations_not_run, "; "));
  md += measures_table(r);
  for (const auto& p : r.plots) md += fmt::format("![{}]({}/{})\n\n", c.id, dir_name(c), p);
  return md + r.details + "\n";
}

}  // namespace

void write_report(const std::string& dir, const std::vector<std::pair<const Claim*, ClaimResult>>& results) {
  fs::create_directories(dir);
  std::string md = report_intro(dir, results);
  md += "| claim | verdict | seeds (look) | deciding figure | rerun |\n|---|---|---|---|---|\n";
  json verdicts = json::array();
  for (const auto& [c, r] : results) {
    md += fmt::format("| [{}](#{}-{}) {} | **{}**{} | {} | {} | `normtool reproduce {}` |\n", c->id, c->id, c->slug,
                      markdown_cell(c->title), to_string(r.verdict), quick_run(r) ? " (quick)" : "", seeds_text(r),
                      markdown_cell(r.ran ? headline_figure(r) : r.measured), c->id);
    verdicts.push_back(verdict_entry(*c, r));
  }
  for (const auto& [c, r] : results) md += claim_section(*c, r);
  // whole files only: on Slurm a --collect rewrites them while an array task of the same
  // reproduction starts and reads REPORT.md (reproduce's check of its --out)
  write_file_atomically((fs::path(dir) / "REPORT.md").string(), md);
  write_file_atomically((fs::path(dir) / "REPORT.html").string(), report_html(md, dir));  // the same text
  write_file_atomically((fs::path(dir) / "verdicts.json").string(), verdicts.dump(2) + "\n");
  sync_results_table(dir);  // the README's results, when dir is the source tree's reports/
}

std::string readme_header(const Claim& c) {
  return fmt::format(
      "{}\n# {}: {}\n\n- **Source**: {}\n- **Criterion**: {}\n- **Setup**: {}\n- **Rerun**: "
      "`normtool reproduce {}`{}\n{}\n",
      kBegin, c.id, c.title, c.source, criterion_text(c), setup_text(c), c.id, other_seeds(c), kEnd);
}

std::string with_readme_header(const Claim& c, const std::string& readme) {
  const auto end = readme.find(kEnd);
  if (readme.rfind(kBegin, 0) == 0 && end != std::string::npos)
    return readme_header(c) + readme.substr(after_marker(readme, end, kEnd));
  return readme_header(c) + "\n" + readme;
}

std::string claims_reference() {
  std::string md = std::string(kBegin) + "\n## Every claim\n\n";
  for (const Claim& c : all_claims()) md += fmt::format("- [{}](#{}) {}\n", c.id, anchor_of(c), c.title);
  for (const Claim& c : all_claims())
    md += fmt::format(
        "\n<a id=\"{}\"></a>\n### {}: {}\n\n- **Source, and its own figures**: {}\n"
        "- **Criterion**: {}\n- **Why this criterion**: {}\n- **The experiment here**: {}\n"
        "- **Notes and changes**: [`experiments/{}/README.md`](../experiments/{}/README.md); rerun: "
        "`normtool reproduce {}`{}\n",
        anchor_of(c), c.id, c.title, c.source, criterion_text(c), c.why.empty() ? "(not written yet)" : c.why,
        setup_text(c), dir_name(c), dir_name(c), c.id, other_seeds(c));
  return md + kDocEnd + "\n";
}

std::string with_claims_reference(const std::string& doc) {
  const auto begin = doc.find(kBegin), end = doc.find(kDocEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    return doc + (doc.empty() || doc.back() == '\n' ? "\n" : "\n\n") + claims_reference();
  return doc.substr(0, begin) + claims_reference() + doc.substr(after_marker(doc, end, kDocEnd));
}

std::vector<std::string> sync_readmes(const std::string& experiments_dir) {
  std::vector<std::string> changed;
  for (const Claim& c : all_claims()) {
    const fs::path path = fs::path(experiments_dir) / dir_name(c) / "README.md";
    const std::string now = read_file_if_present(path.string(), kMaxDocumentBytes).value_or("");
    const std::string want = with_readme_header(c, now);
    if (want == now) continue;
    fs::create_directories(path.parent_path());
    write_file_atomically(path.string(), want);
    changed.push_back(path.string());
  }
  return changed;
}

}  // namespace nt
