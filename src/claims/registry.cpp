// The list of claims in the order of ../shared/claims.md, and the verdict names.
#include "claims/claim.h"

namespace nt {

const char* to_string(ClaimVerdict v) {
  return v == ClaimVerdict::pass ? "PASS" : v == ClaimVerdict::fail ? "FAIL" : "INCONCLUSIVE";
}

const std::vector<Claim>& all_claims() {
  static const std::vector<Claim> claims{
      {"E1", "invariance-table", true, claim_e1},
      {"E2", "gradient-scaling", true, claim_e2},
      {"E3", "jacobian-norm", true, claim_e3},
      {"E4", "layernorm-standardizes", true, claim_e4},
      {"E5", "batchnorm-running-stats", true, claim_e5},
      {"E6", "batch-dependence", true, claim_e6},
      {"E7", "post-ln-residual-energy", true, claim_e7},
      {"E8", "deepnorm-constants", true, claim_e8},
      {"C1", "normalization-speeds-convergence", false, claim_c1},
      {"C2", "rmsnorm-matches-layernorm", false, claim_c2},
      {"C3", "rmsnorm-is-faster", false, claim_c3},
      {"C4", "batchnorm-small-batches", false, claim_c4},
      {"C5", "batchnorm-train-vs-eval", false, claim_c5},
      {"C6", "per-position-statistics", false, claim_c6},
      {"C7", "post-ln-gradients-at-init", false, claim_c7},
      {"C8", "post-ln-needs-warmup", false, claim_c8},
      {"C9", "deep-post-ln-vs-deepnorm", false, claim_c9},
      {"C10", "post-ln-model-update", false, claim_c10},
      {"C11", "batchnorm-smooths-landscape", false, claim_c11},
  };
  return claims;
}

}  // namespace nt
