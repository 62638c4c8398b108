// Every claim normtool reproduces, in its order: the metadata written once (the report's rows, the
// experiment READMEs' headers and docs/claims.md are generated from it), the function that runs
// the experiment, and why the criterion is what it is. Adding a claim: a row here, its function in
// the theme's file, its README; then `normtool reproduce --sync-readmes`.
#include <algorithm>

#include "claims/claim.h"

namespace nt {

std::vector<Claim> exact_claims();  // exact.cpp
// convergence.cpp
ClaimResult claim_c1(const ClaimContext&);
ClaimResult claim_c2(const ClaimContext&);
ClaimResult claim_c6(const ClaimContext&);
std::vector<Claim> speed_claims();  // speed.cpp
// batchnorm.cpp
std::vector<Claim> batchnorm_claims();
// postln.cpp (C7: postln_gradients.cpp, C10: postln_update.cpp)
ClaimResult claim_c7(const ClaimContext&);
ClaimResult claim_c8(const ClaimContext&);
ClaimResult claim_c9(const ClaimContext&);
ClaimResult claim_c10(const ClaimContext&);
// precision.cpp
ClaimResult claim_c12(const ClaimContext&);
// side_by_side.cpp: reports, no verdict
ClaimResult claim_p1(const ClaimContext&);

namespace {

// transitional: a claim still written as a function, its metadata in words
Claim legacy(const char* id, const char* slug, const char* title, const char* criterion, const char* source,
             const char* setup, bool exact, bool sweeps, ClaimResult (*run)(const ClaimContext&), const char* why) {
  Claim c;
  c.id = id, c.slug = slug, c.title = title, c.criterion = criterion, c.source = source, c.setup = setup;
  c.exact = exact, c.function_sweeps = sweeps, c.run = run, c.why = why;
  return c;
}

// Every claim, E1 ... E8, C1 ... C12, P1: the order of docs/claims.md
std::vector<Claim> in_order(std::vector<Claim> all, const std::vector<std::vector<Claim>>& themes) {
  for (const auto& t : themes) all.insert(all.end(), t.begin(), t.end());
  auto key = [](const Claim& c) { return std::pair{std::string("ECP").find(c.id[0]), std::stoi(c.id.substr(1))}; };
  std::sort(all.begin(), all.end(), [&](const Claim& a, const Claim& b) { return key(a) < key(b); });
  return all;
}

}  // namespace

const std::vector<Claim>& all_claims() {
  static const std::vector<Claim> claims = in_order({
      legacy("C1", "normalization-speeds-convergence", "Normalization speeds convergence: LN/RMS reach a given loss in far fewer steps than none",
       "per seed, the steps none needs to reach LN's step-N validation loss, over N (2 when never within its "
       "2N steps): >= 1.5 across the interval, in RNNSearch and in the LSTM language model (the papers' "
       "settings); the Transformer and the MLP are reported beside them",
       "Zhang & Sennrich 2019 §6.1 and Fig. 2 (RNNSearch); Ba et al. 2016 §6 (recurrent models; curves only)",
       "The papers' settings. RNNSearch: configs/rnnsearch-tiny.json (gettext-de, d_emb 64, state 128, nematus "
       "init, Adam 1e-3, clip 1, batch 32; synthetic-seq2seq where the catalogs are missing), none, LN and "
       "RMS for 2000 steps (quick 100), N = 1000 (half of them), validation loss (20 batches) every 250 steps "
       "(quick 50); runs shared with C2 and C6. LSTM LM: configs/rnn-lstm-tiny.json (the LN-LSTM on "
       "fortunes, d_emb 64, H 128, seq 64, batch 16, Adam 1e-3), LN and RMS for N = 600 steps (quick 100), "
       "none for 2N, validation loss (10 batches) every 50 steps (quick 25); runs shared with C2. Ablations: "
       "configs/lm-tiny.json with 4 layers (Pre-LN, d 64, fortunes, seq 64, batch 16, Adam 1e-3), N = 600 "
       "(quick 100), none for 2N, validation every 50 steps (quick 25), runs shared with C2 and C6; "
       "configs/mlp-fmnist.json with 6 hidden layers (256, ReLU, SGD 0.1 momentum 0.9, batch 128), N = 400 "
       "(quick 100), none for 2N, validation every 25 steps. None runs twice as long so that 'never' means "
       "'not within 2N'. Seeds 1, 2, 3.",
       false, true, claim_c1,
       "The sources give curves, not a number. 'Far fewer steps' is read as at least 1.5 times the steps to "
       "LN's loss at step N, a factor that seed noise in the crossing step (a few percent) cannot produce; "
       "runs without a norm are cut at 2N, so 'never' counts as 2. The RMSNorm paper shows it on RNNSearch "
       "and the LayerNorm paper on recurrent networks, so those two settings decide; the Transformer and "
       "the MLP are the tool's earlier settings, kept as ablations."),
      legacy("C2", "rmsnorm-matches-layernorm", "RMSNorm matches LayerNorm's quality",
       "per seed, RMS / LN final validation loss in RNNSearch (the paper's setting): the interval within "
       "[0.98, 1.02] (within 2%); the LSTM LM and the Transformer are reported beside it",
       "Zhang & Sennrich 2019 Tables 2-4 (RNNSearch on WMT14 En-De, BLEU: LN 22.6, RMS 22.4)",
       "The RNNSearch runs of C1 (gettext-de, 2000 steps, quick 100); ablations: C1's LSTM LM runs (600 "
       "steps) and its transformer runs (4-layer Pre-LN on fortunes, 600 steps); seeds 1, 2, 3.",
       false, true, claim_c2,
       "The paper's own differences between LN and RMS are within noise (WMT14 BLEU 22.6 against 22.4, under "
       "1%). 2% of the final validation loss is about the seed-to-seed spread of these small runs and far "
       "below the gap to no normalization, so 'within 2%' means the same quality at this scale."),
      legacy("C6", "per-position-statistics", "Per-position statistics: in RNNSearch's decoder LN and RMS keep the std of the hidden-to-hidden "
       "term flat over positions; without a norm position 1, the state built from the encoder, stands apart",
       "per seed, in the first decoder GRU's hidden-to-hidden terms: without a norm S1 / mean(S2..S4) >= 1.5; "
       "with LN and RMS S1 / mean(S2..S4) within [0.67, 1.5] and the CV of S over positions 2..T <= 5%; across "
       "the intervals",
       "Zhang & Sennrich 2019 Table 5 (RNNSearch in Nematus, newstest2013; S at positions 1-4: baseline 7.35, "
       "2.33, 2.61, 2.73; LN 1.19, 1.51, 1.51, 1.51; RMS 1.27, 1.51, 1.50, 1.49)",
       "RNNSearch, configs/rnnsearch-tiny.json (gettext-de, d_emb 64, state 128, nematus init, Adam 1e-3, "
       "clip 1, batch 32): none, LN and RMS for 2000 steps each (quick 100), stats every 250 steps; at the "
       "last statistics step, per target position, M and S of U_g h and U_c h in the first decoder GRU after "
       "their norm, beside the paper's M and S at positions 1-4 and ALL. Ablation: the 4-layer transformer "
       "runs of C1, the CV over 64 positions of the std leaving each site. Seeds 1, 2, 3.",
       false, true, claim_c6,
       "Read off the paper's own table: its baseline's S at position 1 is 2.87 times the mean of positions "
       "2-4, LN's 0.79 and RMS's 0.85 times, and LN's and RMS's S at positions 2-4 vary by under 1%. "
       "'Stands apart' is read as a factor of at least 1.5 (half the paper's distance from 1), 'close' as "
       "within a factor 1.5 either way, 'flat' as a CV under 5% over the later positions. Position 1 is "
       "where the mechanism is: the decoder's first state s0 = tanh(W mean(annotations) + b) comes from the "
       "encoder, every later one from the decoder. The budget is 2000 steps because without a norm "
       "RNNSearch sits on the unigram plateau (3.52 nats) until about step 1000 at this lr (measured: 3.52 "
       "at step 400, 2.61 at 1500, seed 1), and Table 5's baseline is a trained model. The decoder-only "
       "transformer, where this claim was first measured, has no s0: its baseline's CV was 8.2% over "
       "positions, which the old criterion (>= 15%) failed, and which the paper's own baseline (6.6% over "
       "positions 2-4) would fail too."),
      legacy("C7", "post-ln-gradients-at-init", "At initialization Post-LN gradients grow toward the output layer; Pre-LN's are nearly uniform",
       "in the encoder-decoder, for the encoder's layers and for the decoder's each: Post-LN Spearman rho(layer, "
       "grad norm) >= 0.8 and last/first >= 2; Pre-LN max/min <= 2; across the intervals over the seeds",
       "Xiong et al. 2020 Fig. 3 (a 6-6 encoder-decoder on IWSLT14, encoder and decoder layers shown apart; theory: "
       "Post-LN last/first ~ (3/2)^((L-1)/2), 2.8 for 6 layers, 9 for 12)",
       "Xiong's setting at init in Xiong's architecture: configs/encdec-tiny.json at 6L-6L, model.init xavier, ReLU, "
       "d_ff = d_model = 64, 4 heads, gettext-de pairs (batch 32; synthetic-seq2seq where the catalogs are missing); "
       "Post-LN vs Pre-LN; per stack the Frobenius norm of each block's W2 gradient averaged over 10 batches; per "
       "seed s the norms averaged over 8 inits (seeds 1000 s + k; quick 1), seeds 1, 2, 3. Ablation: the "
       "decoder-only configs/lm-tiny.json with 12 layers in the same setting (fortunes, 16 x 64), and there "
       "model.init normal (N(0, 0.02)) and d_ff = 4d.",
       false, false, claim_c7,
       "Xiong's theory predicts last/first about 2.8 at 6 layers and 9 at 12; at d = 64 the growth is weaker, so "
       "last/first >= 2 asks for clear growth and Spearman >= 0.8 for growth that is monotone rather than "
       "one noisy layer. Pre-LN's theory is a flat profile: max/min <= 2 allows the noise of a few "
       "initializations while excluding Post-LN-like growth. Each stack is held to it because Xiong et al. state "
       "the growth of the Post-LN Transformer's gradients with the layer index and show the encoder and the decoder "
       "apart, not one of them."),
      legacy("C8", "post-ln-needs-warmup", "Post-LN needs learning-rate warm-up; Pre-LN trains without it",
       "per seed: in the encoder-decoder (6L-6L, Xavier), Post-LN no-warm-up final loss >= 1.2x its warm-up loss "
       "(a diverged run counts as ln 256) and Pre-LN no-warm-up <= 1.05x Post-LN warm-up; in the BERT-style encoder, "
       "Pre-LN no-warm-up <= 1.05x Post-LN warm-up; across the intervals",
       "Xiong et al. 2020 §3.2 (IWSLT14, a 6-6 encoder-decoder: Post-LN without warm-up BLEU 8.45 vs ~34 with "
       "4000 steps of warm-up) and §4 (BERT: Pre-LN without warm-up trains faster than Post-LN with it)",
       "Xiong's two settings: configs/encdec-tiny.json at 6L-6L (d 64, FFN 128, 4 heads, batch 32) with "
       "model.init xavier on gettext-de pairs (synthetic-seq2seq where the catalogs are missing), and the "
       "BERT-style configs/encoder-tiny.json (Post-LN, eps 1e-12, embedding LayerNorm, FFN 4d, masked LM on "
       "fortunes) at 12 layers with BERT's init N(0, 0.02); Adam (0.9, 0.98), lr 2e-3; linear warm-up of 0 or 500 "
       "steps, then the constant lr; 1000 steps; Post-LN with and without warm-up, Pre-LN without; final "
       "validation loss (10 batches); seeds 1, 2, 3. Ablation: the decoder-only configs/lm-tiny.json at 12 layers, "
       "FFN 128, with model.init xavier and normal (N(0, 0.02)). Quick: 2L-2L, 2 layers, decoder-only 6 layers "
       "(Xavier), 100 steps, warm-up 50.",
       false, true, claim_c8,
       "Xiong reports a collapse (BLEU 8.45 against about 34), not a small gap: 1.2x the warm-up loss is "
       "about the distance between the unigram plateau (3.19) and a trained model (2.3-2.6), so it marks a "
       "run that failed to train, and a diverged run counts as ln 256, a uniform guess. Pre-LN within 5% of "
       "warmed-up Post-LN is 'trains without it' with room for seed noise (1-2%). Xiong's BERT experiment runs "
       "Post-LN with warm-up only (BERT's recipe), so there Post-LN without warm-up is reported, not held to 1.2x."),
      legacy("C9", "deep-post-ln-vs-deepnorm", "Deep Post-LN diverges or stalls where DeepNorm trains",
       "in the encoder-decoder, per seed: the largest Post-LN / DeepNorm final loss ratio over the depths >= 1.2 (a "
       "depth where Post-LN ends >= 1.2x DeepNorm's exists), and DeepNorm's loss non-increasing in depth (each "
       "depth's loss <= 1.03x the previous one's), across the intervals",
       "Wang et al. 2022 §3, §5 (Post-LN fails at 18L-18L on IWSLT-14; DeepNet trains 100L-100L)",
       "DeepNet's architecture: configs/encdec-tiny.json at 6L-6L, 12L-12L, 18L-18L (quick 2L-2L, 4L-4L) with d 64, "
       "FFN 128, 2 heads (DeepNet's 64-128-2 tiny models), gettext-de pairs (batch 16; synthetic-seq2seq where the "
       "catalogs are missing), Post-LN with model.init xavier vs DeepNorm with the encoder-decoder constants "
       "(encoder alpha = 0.81 (N^4 M)^(1/16), beta = 0.87 (N^4 M)^(-1/16); decoder alpha = (3M)^(1/4), beta = "
       "(12M)^(-1/4); its own init), Adam lr 1e-3, no warm-up, 300 steps (quick 20); seeds 1, 2, 3. Ablation: the "
       "decoder-only configs/lm-tiny.json with the same widths on fortunes at depth 6, 18, 36 (quick 6, 12), 400 "
       "steps (quick 50), alpha = (2N)^(1/4), beta = (8N)^(-1/4).",
       false, true, claim_c9,
       "DeepNet reports Post-LN failing to converge from 18L-18L: 'fails' is read as a final loss at least "
       "1.2x DeepNorm's (the plateau against a trained model) at some depth. 'DeepNorm trains' at every "
       "depth is read as no growth of its loss with depth beyond 3%, the seed noise of a final loss: at "
       "equal steps a deeper model should be no worse."),
      legacy("C10", "post-ln-model-update", "Post-LN's model update explodes early; DeepNorm's stays bounded",
       "per seed, in the encoder-decoder at t = 10: Post-LN's update >= 3x DeepNorm's at 18L-18L, and that ratio "
       "larger at 18L-18L than at 6L-6L, across the intervals (a per-token output of norm sqrt(d) saturates near "
       "sqrt(2d) once it decorrelates: compare before that)",
       "Wang et al. 2022 (DeepNet) Fig. 4-5 (64-128-2 models, 6L-6L to 100L-100L, early training with "
       "warm-up)",
       "DeepNet's Figure 5 models: Post-LN (model.init xavier) vs DeepNorm (the encoder-decoder constants) in "
       "configs/encdec-tiny.json at 6L-6L and 18L-18L (quick 2L-2L, 4L-4L), d 64, FFN 128, 2 heads, gettext-de "
       "pairs (batch 16; synthetic-seq2seq where the catalogs are missing), Adam lr 1e-3 with DeepNet's linear "
       "warm-up over 500 steps; after each of the first 50 steps (quick 10) the decoder's final hidden states F "
       "(the last block's output) on a fixed validation batch, and ||F_t - F_0|| per real target token at t = 1, "
       "2, 5, 10, 20, 50; also the mean ||x||/sqrt(d) entering the norms. Seeds 1, 2, 3. Ablations: model.init "
       "normal (N(0, 0.02)); the decoder-only configs/lm-tiny.json at 6 and 18 layers (quick 6, 12), both inits.",
       false, false, claim_c10,
       "DeepNet's figures show Post-LN's early update an order of magnitude above DeepNorm's and growing "
       "with depth; 3x at depth 18 is well inside that order yet far above seed noise, and 'larger at 18 "
       "than at 6' is the growth with depth. t = 10 reads the update before it saturates: an output of norm "
       "sqrt(d) per token cannot move by more than about sqrt(2d) once decorrelated."),
      legacy("C12", "low-precision-ranges",
       "Normalization narrows the range of hidden values, so low-precision representations (8-bit, 16-bit) lose "
       "less of them; it does not by itself reduce memory",
       "(a) per seed, the int8 absmax SNR of the vector leaving each norm >= 6 dB above that of the vector "
       "entering it (the unnormalized residual stream), LN and RMS, across the intervals; (b) reported per "
       "format: the loss gap to fp32 of none vs LN/RMS, with intervals (in floating point a null result is "
       "expected and stated as such)",
       "the seed article on normalization (memory efficiency); Micikevicius et al. 2018 (fp16 range, loss "
       "scaling); Dettmers et al. 2022 (int8 outliers)",
       "The 4-layer Pre-LN transformer of C1 (configs/lm-tiny.json, d 64, fortunes, seq 64, batch 16, Adam 1e-3), "
       "none vs LN vs RMS at train.precision fp32, bf16 and fp16 (emulated: round to nearest even at every op "
       "boundary, fp32 master weights and optimizer state, fp16 with dynamic loss scaling), 400 steps (quick "
       "50); seeds 1, 2, 3. (a) ranges.csv of the fp32 runs at the last statistics step: int8 SNR of the vector "
       "entering and leaving each norm (attn, ffn, final), one absmax scale per token (the claim's vector) and, "
       "reported beside, one per tensor; the share outside fp16's normal range. (b) final validation loss (10 "
       "batches) at bf16 and fp16 minus fp32's, per norm and seed.",
       false, true, claim_c12,
       "(a) 6 dB is one bit of int8 resolution: a smaller gain would not change what 8 bits hold; the "
       "comparison is the unnormalized residual stream, the norm's input, as it would be quantized. (b) A "
       "float's relative error does not depend on the magnitude within its range, so no threshold is set: "
       "the gap is reported with its interval, and a null result is the expected one."),
      legacy("P1", "presets-side-by-side",
       "The seed articles' systems side by side: what their normalization does to the values it sees",
       "none: a report (REPORT), every figure with its interval over seeds",
       "the systems the seed articles name (BERT, GPT, GPT-2, BLOOM, Llama, GLM-130B, T5, RNNSearch), normalized as their "
       "code does it: configs/presets/ and docs/presets.md, every value cited by file and function",
       "Every preset of configs/presets/ (the Transformers d 64, 4 blocks, T5 2 + 2; RNNSearch embedding 64, state "
       "128; each on its own task: decoders a causal LM and BERT a masked LM on fortunes, T5 and RNNSearch seq2seq "
       "on gettext-de), 600 steps (quick 40), AdamW 1e-3, cosine, seeds 1, 2, 3; reported side by side: the final "
       "validation loss; the std of the vector entering the norms (the blocks'; RNNSearch's decoder GRUs' "
       "recurrent norms, a GRU as a layer) by position and by layer; the gradient norm by layer at init; from "
       "ranges.csv (as C12) the share entering the norms outside fp16's normal range and the int8 absmax SNR "
       "entering and leaving them. One plot per statistic, every preset on it.",
       false, true, claim_p1,
       "The articles explain normalization through these systems, but the systems differ in task, size and much "
       "besides their norm, and their papers claim nothing about one another's: there is no criterion to hold "
       "them to. What a reader wants is the comparison itself at one scale, with what varies between seeds shown, "
       "so the experiment reports and decides nothing."),
  }, {exact_claims(), speed_claims(), batchnorm_claims()});
  return claims;
}

const Claim* find_claim(const std::string& id) {
  const auto& all = all_claims();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Claim& c) { return c.id == id; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace nt
