// What the Post-LN claims share (postln.cpp: C8, C9; postln_gradients.cpp: C7, C16; postln_update.cpp:
// C10, C17; postln_init.cpp: C18).
#pragma once
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "claims/claim.h"
#include "claims/evidence.h"

namespace nt {

struct RunConfig;
class Dataset;

// Post-LN against DeepNorm: model.norm.type's value and the name the measures and curves give it
struct NormName {
  const char *type, *name;
};
inline constexpr NormName kPostLn{"layernorm", "Post-LN"}, kDeepNorm{"deepnorm", "DeepNorm"};
inline constexpr NormName kPostLnAndDeepNorm[] = {kPostLn, kDeepNorm};
inline std::string post_ln_and_deepnorm_axis() {  // the sweep axis over both
  return fmt::format("model.norm.type={},{}", kPostLn.type, kDeepNorm.type);
}
inline Where with_norm(const NormName& n) { return with_norm(std::string(n.type)); }

// A run's final validation loss; a diverged run (or a non-finite loss) counts as ln 256 = 5.545, the
// loss of the uniform predictor over bytes, the most a diverged model can be credited with (also C14's).
double final_loss(const RunRecord& r);

// A depth as the tables name it: "6L-6L" in the encoder-decoder (layers per stack), "6 layers" else.
inline std::string depth_label(bool encoder_decoder, int depth) {
  return encoder_decoder ? fmt::format("{0}L-{0}L", depth) : fmt::format("{} layers", depth);
}

// The dataset of the encoder-decoder claims: gettext-de (the catalog pairs, Xiong's and DeepNet's
// translation task at this scale) when its catalogs load on this machine, else synthetic-seq2seq.
const std::string& seq2seq_dataset();
// A session's config on this machine: gettext-de as asked, or synthetic-seq2seq (the same vocabulary)
// where its catalogs are missing
RunConfig on_this_machine(RunConfig c);
// The tables' note when the pairs are synthetic-seq2seq's ("" on gettext-de)
std::string catalogs_note();

// `c` for a measure held to it, Reported for one reported with no criterion
inline Criterion held_or_reported(bool held, Criterion c) { return held ? c : Criterion{Reported{}}; }

// The mean over the runs, entry by entry, of a summary field that is a list of numbers
std::vector<double> mean_of(const std::vector<const RunRecord*>& runs, const std::string& field);

// At init, per stack and layer, the Frobenius norm of each block's FFN output matrix's gradient
// (W2 of Xiong et al., "<stack>ffn.fc2.weight") averaged over `batches` batches of the session's
// stream: stack "" for the decoder-only transformer, "enc." and "dec." for the encoder-decoder.
std::map<std::string, std::vector<double>> w2_gradient_norms(const RunConfig& c,
                                                             const std::shared_ptr<const Dataset>& data, int batches);

// C10's probe: trains a session on its data stream and probes F (the output of the last block,
// which the output layer reads: the decoder's, in the encoder-decoder) on its first validation
// batch after every step; ||F_t - F_0|| per real target token (padding left out) at each t in
// `at`, and the mean ||x||/sqrt(d) of the real tokens' vectors entering the norms at t = 0 and the
// last t.
struct UpdateTrace {
  std::vector<double> update;  // at the probe times
  double ln_in0 = 0, ln_in = 0;
};
UpdateTrace model_update(const RunConfig& c, const std::vector<int>& at);

}  // namespace nt
