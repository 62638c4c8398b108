// Every claim normtool reproduces, in the order of docs/claims.md. Each theme's file holds its
// claims as values (claims/claim.h: settings, measures, plots, the why); the report's rows, the
// experiment READMEs' headers and docs/claims.md are generated from them. Adding a claim: a value
// in its theme's file (a new theme: its file and one line below), its experiments/<id>-<slug>/README.md;
// then `normtool reproduce --sync-readmes`.
#include <algorithm>

#include "claims/claim.h"

namespace nt {

std::vector<Claim> exact_claims();             // exact.cpp: E1-E8
std::vector<Claim> convergence_claims();       // convergence.cpp: C1, C2, C6
std::vector<Claim> speed_claims();             // speed.cpp: C3
std::vector<Claim> batchnorm_claims();         // batchnorm.cpp: C4, C5, C11, C13
std::vector<Claim> postln_gradients_claims();  // postln_gradients.cpp: C7, C16
std::vector<Claim> postln_claims();            // postln.cpp: C8, C9
std::vector<Claim> postln_update_claims();     // postln_update.cpp: C10, C17
std::vector<Claim> precision_claims();         // precision.cpp: C12
std::vector<Claim> side_by_side_claims();      // side_by_side.cpp: P1
std::vector<Claim> rmsnorm_paper_claims();     // rmsnorm_paper.cpp: C15
std::vector<Claim> dyt_claims();               // dyt.cpp: C20

const std::vector<Claim>& all_claims() {
  static const std::vector<Claim> claims = [] {
    std::vector<Claim> all;
    for (auto theme : {exact_claims, convergence_claims, speed_claims, batchnorm_claims, postln_gradients_claims,
                       postln_claims, postln_update_claims, precision_claims, side_by_side_claims,
                       rmsnorm_paper_claims, dyt_claims}) {
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

}  // namespace nt
