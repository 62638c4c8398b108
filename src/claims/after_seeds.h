// The measurements of the claims after the seed papers (after_seeds.cpp), for their tests.
#pragma once
#include <string>
#include <vector>

#include "claims/claim.h"

namespace nt {

// C19: a run's loss as Wortsman et al. 2023 count it: the final validation loss, at most the run's
// validation loss at step 0; a diverged run (or one without a finite final loss) counts as that
// initial loss. NaN when the run has no step-0 validation loss.
double capped_loss(const RunRecord& r);
// Per seed, Wortsman et al.'s LR sensitivity from the capped losses by_rate[rate][seed]: their mean
// over the rates minus their smallest.
std::vector<double> lr_sensitivity(const std::vector<std::vector<double>>& by_rate);
// The largest finite attn_logit_max of <dir>/layers.jsonl, over its logged steps and layers (NaN when none).
double largest_attn_logit(const std::string& dir);

}  // namespace nt
