// The runner of the claims written as data (claim.h): the settings' runs over the seeds of each
// look (statistics.h), the measures read from them and held to their criteria, the verdict, the
// one-line result, the plots and the details. A claim with a function runs that function.
#pragma once
#include "claims/claim.h"

namespace nt {

ClaimResult reproduce_claim(const Claim& c, const ClaimContext& ctx);

// Every run the claim's settings make under ctx (quick or not, with the ablations or not) is a
// valid config; else an InputError naming the claim, the setting, the run and why. Checked before
// a reproduction starts, so that a setting broken in the full mode fails at once, not an hour in.
void check_settings(const Claim& c, const ClaimContext& ctx);

// The seeds a claim runs on when reproduce is given none: its own list, in quick mode only the
// seeds of its first look.
std::vector<int> claim_seeds(const Claim& c, bool quick, const Rules& rules = default_rules());

}  // namespace nt
