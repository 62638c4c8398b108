// The runner of the claims written as data (claim.h): the settings' runs over the seeds of each
// look (statistics.h), the measures read from them and held to their criteria, the verdict, the
// one-line result, the plots and the details. A claim with a function runs that function.
#pragma once
#include "claims/claim.h"

namespace nt {

ClaimResult reproduce_claim(const Claim& c, const ClaimContext& ctx);

}  // namespace nt
