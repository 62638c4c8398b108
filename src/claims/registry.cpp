// Every claim normtool reproduces, in the order of docs/claims.md. Each theme's file holds its
// claims as values (claims/claim.h: settings, measures, plots, the why); the report's rows, the
// experiment READMEs' headers and docs/claims.md are generated from them. Adding a claim: a value
// in its theme's file (a new theme: its file and one line below), its experiments/<id>-<slug>/README.md;
// then `normtool reproduce --sync-readmes`.
#include <algorithm>
#include <fmt/format.h>

#include "claims/claim.h"
#include "core/errors.h"

namespace nt {

std::vector<Claim> exact_claims();             // exact.cpp: E1-E8
std::vector<Claim> convergence_claims();       // convergence.cpp: C1, C2, C6
std::vector<Claim> speed_claims();             // speed.cpp: C3
std::vector<Claim> batchnorm_claims();         // batchnorm.cpp: C4, C5, C11, C13
std::vector<Claim> postln_gradients_claims();  // postln_gradients.cpp: C7, C16
std::vector<Claim> postln_claims();            // postln.cpp: C8, C9
std::vector<Claim> postln_update_claims();     // postln_update.cpp: C10, C17; C18 (postln_init.cpp)
std::vector<Claim> precision_claims();         // precision.cpp: C12
std::vector<Claim> side_by_side_claims();      // side_by_side.cpp: P1
std::vector<Claim> rmsnorm_paper_claims();     // rmsnorm_paper.cpp: C14, C15
std::vector<Claim> after_seeds_claims();       // after_seeds.cpp: C19, C21
std::vector<Claim> dyt_claims();               // dyt.cpp: C20

const std::vector<Claim>& all_claims() {
  static const std::vector<Claim> claims = [] {
    std::vector<Claim> all;
    for (auto theme : {exact_claims, convergence_claims, speed_claims, batchnorm_claims, postln_gradients_claims,
                       postln_claims, postln_update_claims, precision_claims, side_by_side_claims,
                       rmsnorm_paper_claims, after_seeds_claims, dyt_claims}) {
      std::vector<Claim> some = theme();
      all.insert(all.end(), some.begin(), some.end());
    }
    auto key = [](const Claim& c) { return std::pair{std::string("ECP").find(c.id[0]), std::stoi(c.id.substr(1))}; };
    std::sort(all.begin(), all.end(), [&](const Claim& a, const Claim& b) { return key(a) < key(b); });
    return all;
  }();
  return claims;
}

const Claim* find_claim(const std::string& id) {
  const auto& all = all_claims();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Claim& c) { return c.id == id; });
  return it == all.end() ? nullptr : &*it;
}

std::vector<const Claim*> claims_named(const std::string& id) {
  std::vector<const Claim*> named;
  for (const Claim& c : all_claims())
    if (c.id == id || (id == "core" && c.core) || (id == "extra" && !c.core)) named.push_back(&c);
  return named;
}

std::vector<const Claim*> choose_claims(const std::vector<std::string>& ids) {
  std::vector<const Claim*> chosen;
  for (const auto& id : ids) {
    const std::vector<const Claim*> named = claims_named(id);
    if (named.empty()) {
      std::string known = "core|extra";
      for (const Claim& k : all_claims()) known += "|" + k.id;
      throw UsageError(fmt::format("unknown claim \"{}\" (expected {})", id, known));
    }
    for (const Claim* c : named)
      if (std::find(chosen.begin(), chosen.end(), c) == chosen.end()) chosen.push_back(c);
  }
  if (ids.empty())
    for (const Claim& c : all_claims()) chosen.push_back(&c);
  return chosen;
}

}  // namespace nt
