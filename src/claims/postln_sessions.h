// What the in-process Post-LN claims (postln_gradients.cpp: C7; postln_update.cpp: C10) share
// beyond claims/postln.h.
#pragma once
#include "config/config.h"

namespace nt {

// A session's config on this machine: gettext-de as asked, or synthetic-seq2seq (the same
// vocabulary) where its catalogs are missing (seq2seq_dataset, claims/postln.h).
RunConfig on_this_machine(RunConfig c);

}  // namespace nt
