// The measurements of the claims after the seed papers (after_seeds.cpp), for their tests.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "claims/claim.h"
#include "core/params.h"

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

// C21: the residual stream after each block l = 1..L of a Pre-LN or Peri-LN transformer run, read from
// <dir>/stats.csv at its last logged step: block l's output is what enters block l + 1's first norm
// (site attn.in of layer l), the last block's what enters the final norm (final.in, layer L); its
// variance is stats.csv's std squared (the std over the hidden dimension, averaged over the batch's
// real tokens at a position), averaged over the positions. Layer 0's attn.in (the embeddings) is left out.
std::map<int, double> block_output_variance(const std::string& dir);
// Spearman's rho of (block, variance) over the blocks, and the last block's variance over the first's
double depth_rank_correlation(const std::map<int, double>& variance);
double last_over_first(const std::map<int, double>& variance);

// C21: block l (1..L) of a Pre-LN or Peri-LN transformer removed: its residual branches' outputs set
// to zero, so that it passes its input through (x + 0). Pre-LN's branch ends in the attention's output
// projection and fc2, Peri-LN's in its output norms: those parameters of block l (weights, biases,
// gains) are zeroed. Returns what it overwrote (offset, values), for restore_block.
using SavedParams = std::vector<std::pair<std::size_t, std::vector<float>>>;
SavedParams remove_block(ParamStore<float>& params, int l);
void restore_block(ParamStore<float>& params, const SavedParams& saved);
// The validation loss's increase (train.eval_batches batches, eval mode) when each block l = 1..L is
// removed from the trained run in `dir`, its checkpoint loaded into a session of this process.
std::map<int, double> removal_loss_increase(const std::string& dir);

}  // namespace nt
