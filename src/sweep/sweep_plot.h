// sweep.png: validation loss against step, one curve per grid point, the mean over its seeds with
// its 95% interval as the band (analysis/seed_band.h), the y axis fitted to the last half of the
// steps; data beside it in sweep.tsv (io/plot.h). Drawn where
// aggregate.md is written, which links to it.
#pragma once
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace nt {

// Draws sweep.png in `dir` from the jobs' metrics.jsonl and returns the markdown to append to
// aggregate.md: the picture's link, or a line saying why there is none.
std::string sweep_picture(const std::string& dir, const std::vector<SweepJob>& jobs);

}  // namespace nt
