// The runs of convergence.cpp's claims that C14 (rmsnorm_paper.cpp) shares: the normal-init LN and
// RMS runs of RNNSearch (2000 steps) and of the 4-layer Pre-LN transformer (600 steps). Defined once,
// so that the claims name the same runs (Claims.SharedRunsAreTheSameInEveryClaim).
#pragma once
#include "claims/claim.h"

namespace nt {

Setting rnnsearch_normed();
Setting transformer_normed();

}  // namespace nt
