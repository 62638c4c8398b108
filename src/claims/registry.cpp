// Every claim normtool reproduces, in its order: the metadata written once (the report's rows, the
// experiment READMEs' headers and docs/claims.md are generated from it), the function that runs
// the experiment, and why the criterion is what it is. Adding a claim: a row here, its function in
// the theme's file, its README; then `normtool reproduce --sync-readmes`.
#include <algorithm>

#include "claims/claim.h"

namespace nt {

// exact.cpp
ClaimResult claim_e1(const ClaimContext&);
ClaimResult claim_e2(const ClaimContext&);
ClaimResult claim_e3(const ClaimContext&);
ClaimResult claim_e4(const ClaimContext&);
ClaimResult claim_e5(const ClaimContext&);
ClaimResult claim_e6(const ClaimContext&);
ClaimResult claim_e7(const ClaimContext&);
ClaimResult claim_e8(const ClaimContext&);
// convergence.cpp
ClaimResult claim_c1(const ClaimContext&);
ClaimResult claim_c2(const ClaimContext&);
ClaimResult claim_c6(const ClaimContext&);
// speed.cpp
ClaimResult claim_c3(const ClaimContext&);
// batchnorm.cpp
std::vector<Claim> batchnorm_claims();
// postln.cpp
ClaimResult claim_c8(const ClaimContext&);
ClaimResult claim_c9(const ClaimContext&);
// postln_gradients.cpp, postln_update.cpp
std::vector<Claim> postln_gradients_claims();
std::vector<Claim> postln_update_claims();
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
      legacy("E1", "invariance-table", "The invariance table of the LayerNorm and RMSNorm papers",
       "every cell's verdict equals the table; ✓: rel < 1e-10 (float64, eps 0) and < 1e-5 (float32, eps 1e-5); "
       "✗: rel > 1e-2",
       "Ba et al. 2016 Table 1; Zhang & Sennrich 2019 Table 1",
       "A layer y = norm(W x): W 48x64 ~ N(0, 1/64), x 32x64 ~ N(0, 1), delta 3, seed 1, no pre-norm bias and no "
       "gain or bias after the norm; the six transforms of the papers; the trainer's own ops in float64 with eps 0 "
       "and in float32 with eps 1e-5 (src/analysis/invariance.cpp).",
       true, false, claim_e1,
       "The papers' tables are qualitative (invariant or not). An invariant cell is exact in real "
       "arithmetic, so in float64 with eps 0 only rounding is left (1e-10 is far above it), and in float32 "
       "with eps 1e-5 the eps term moves the output by up to about 1e-5 relative; a cell that is not "
       "invariant changes the output by order 1. 1e-2 separates the two by orders of magnitude, with no cell "
       "in between."),
      legacy("E2", "gradient-scaling", "Scaling a weight matrix by delta scales a normalized layer's gradient by 1/delta",
       "||dL/dW at delta W|| delta / ||dL/dW|| = 1 ± 1e-8 for delta in {0.5, 2, 10}, LN, RMS, BN",
       "LN §5.2.2, RMS §4.2, BN §3.3 (implicit learning-rate decay)",
       "The layer of E1 with L = sum(y * R), R a fixed random matrix; float64, eps 0; LN, RMS, BN (batch "
       "statistics); delta in {0.5, 2, 10}.",
       true, false, claim_e2,
       "With eps 0 the identity is exact, so the ratio differs from 1 only by float64 rounding (about "
       "1e-15): 1e-8 catches any error in a backward pass while rounding stays far below it. The three "
       "deltas shrink and grow the weights; the three norms are those the papers derive it for."),
      legacy("E3", "jacobian-norm", "The norm's Jacobian has spectral norm 1/sigma(x) (LN) and 1/RMS(x) (RMS)",
       "| ||J||_2 sigma - 1 | < 1e-9 (LN), | ||J||_2 RMS - 1 | < 1e-9 (RMS)",
       "Xiong et al. 2020 Lemma 3; Zhang & Sennrich 2019 Eq. 9",
       "x in R^64 (N(0.5, 1) entries) at scales 0.1, 1, 10; gain 1, eps 0, float64; the full Jacobian from 64 "
       "backward passes (one-hot upstream gradients), its largest singular value by Eigen's JacobiSVD.",
       true, false, claim_e3,
       "The lemma is an identity: computed in float64 from the exact backward pass, only rounding separates "
       "the product from 1, hence 1e-9. Three input scales show that the norm follows 1/sigma (or 1/RMS) "
       "rather than being a constant."),
      legacy("E4", "layernorm-standardizes", "LayerNorm standardizes each sample: [2,3,5,1,4] -> mean 0, variance 1",
       "output equals (x - 3) / sqrt(2 + 1e-5) to 1e-6", "the seed article on LayerNorm",
       "normtool's layernorm op, no affine, eps 1e-5, in float64 and float32.", true, false, claim_e4,
       "The expected output is closed-form (mean 3, biased variance 2, eps inside the square root as PyTorch "
       "has it); 1e-6 is float32's resolution at these magnitudes, so float64 and float32 must both meet it."),
      legacy("E5", "batchnorm-running-stats",
       "BatchNorm running statistics follow the momentum rule; eval uses them; LN/RMS are the same in train and eval",
       "after one step running_mean = 0.1 mu_B, running_var = 0.9 + 0.1 m/(m-1) sigma^2_B to 1e-12; eval = affine "
       "map with them; LN/RMS train and eval outputs identical",
       "Ioffe & Szegedy 2015 Alg. 2; PyTorch BatchNorm1d (momentum 0.1, unbiased running variance)",
       "One batch of m = 8 rows of 4 features (N(1.5, 2^2)), fresh running statistics (mean 0, var 1), momentum "
       "0.1, eps 1e-5, float64.",
       true, false, claim_e5,
       "Both rules are exact formulas (PyTorch's BatchNorm1d normalizes with the biased variance and keeps "
       "the unbiased one): float64 rounding is about 1e-16, so 1e-12 checks the formula and nothing else. LN "
       "and RMS keep no running state, so their train and eval outputs must be identical."),
      legacy("E6", "batch-dependence",
       "Under BatchNorm a sequence's outputs depend on the other sequences in its batch and on their padding; under "
       "LN/RMS they do not",
       "the same sequence in two batches: BN changes (relative > 1e-3), LN/RMS identical to 1e-6",
       "the seed article (padding a11 vs b11)",
       "Sequence a (6 positions x 8 features) normalized in three batches: with b1, with a different b2 (scale 3, "
       "shift 1), and with b1 whose last 3 positions are zero padding (not masked); BN with batch statistics over "
       "all rows (bn_axes batch_time), float64.",
       true, false, claim_e6,
       "BatchNorm's dependence on the batch is by construction, so a real dependence is an order-one change: "
       "a relative 1e-3 is far above rounding and far below what another batch does. LN and RMS read one row "
       "at a time, so another batch can change their output by rounding only, hence 1e-6."),
      legacy("E7", "post-ln-residual-energy",
       "At initialization the Post-LN residual input has E||x||^2/d ~ 3/2 at every layer, while Pre-LN's residual "
       "stream grows linearly with depth",
       "Post-LN mean in [1.35, 1.65] for every layer; Pre-LN linear fit over layers has slope in [0.4, 1.6], "
       "R^2 >= 0.95",
       "Xiong et al. 2020 Lemma 1-2",
       "Xiong's assumptions: square FFN (d_ff = d = 64) with ReLU, all weights N(0, 1/d), biases 0, eps 0; 12 "
       "layers, 4 heads; E||x||^2/d of the vector entering each layer's FFN site (Post-LN) and attention site "
       "(Pre-LN: the residual stream x_l), over 2 batches of 16 x 32 tokens (synthetic-lm) for each of 16 weight "
       "initializations (seeds 1-16).",
       true, false, claim_e7,
       "Lemma 1-2 are expectations over the random weights and data. Post-LN's 3/2 comes from E||x + "
       "FFN(x)||^2 = d + d/2; at d = 64, over 16 initializations, a layer's mean scatters by a few percent, "
       "so +-10% ([1.35, 1.65]) holds that scatter and rejects 1 or 2. The theory's Pre-LN growth is linear "
       "in depth; attention adds to the slope of 1/2, so the wide slope range with R^2 >= 0.95 tests linear "
       "growth rather than its exact rate."),
      legacy("E8", "deepnorm-constants", "DeepNorm constants and init, per architecture",
       "Every row of DeepNet's table within 1e-4: encoder-only and decoder-only N = 12 alpha = 2.2134, beta = "
       "0.3195; encoder-decoder 6L-6L encoder alpha = 1.4179, beta = 0.4970, decoder alpha = 2.0598, beta = "
       "0.3433. FFN/V/O init std = beta sqrt(2/(fan_in + fan_out)), Q/K gain 1, within 3%",
       "Wang et al. 2022 (DeepNet) Figure 2 and its table, §4",
       "The constants as RunConfig::deepnorm resolves them for each architecture and stack; the init of a "
       "deepnorm decoder-only and encoder-only transformer with N = 12 layers and an encoder-decoder 6L-6L "
       "(cross-attention included), d = 256, d_ff = 1024, built by normtool's model code (the empirical std of "
       "each weight matrix kind); torchscale's encoder beta and "
       "GLM-130B's alpha reported beside them.",
       true, false, claim_e8,
       "The constants are formulas of N and M, checked to the 4 decimals DeepNet's table prints. The init std is "
       "measured on finite random matrices (a sampling error of a few tenths of a percent), so 3% checks "
       "that the gain beta is applied (without it the std is off by a factor 1/beta, about 3) without "
       "failing on sampling noise. The departures are reported, not judged: they are other formulas."),
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
      legacy("C3", "rmsnorm-is-faster", "RMSNorm is faster than LayerNorm",
       "per regime, per round RMS / LN time: op (forward + backward, 4096x512) <= 0.9, training step < 1 in "
       "the Transformer and in RNNSearch, across the interval over the rounds; the composite regime (the "
       "paper's) decides, the fused regime is reported beside it, with the norm's share of each step",
       "Zhang & Sennrich 2019 Tables 2-10: RMSNorm 6.9%-40.8% faster per step (64% is pRMSNorm)",
       "One thread, run alone. Two regimes: the norms composed from primitive ops (norms/composite.cpp, as "
       "the paper's framework code runs them) and normtool's fused kernels. (1) The norm op, forward + "
       "backward, on 4096 x 512 float32 with gain (and bias for LN); (2) a training step of "
       "configs/lm-tiny.json (synthetic data of the same shape) and (3) one of configs/rnnsearch-tiny.json (the "
       "paper's RNNSearch: gettext-de, synthetic-seq2seq where the catalogs are missing), with "
       "model.norm.impl composite or fused. Every per-row norm takes part (LayerNorm, RMSNorm, pRMSNorm), and "
       "the steps also without a norm (the norm's share of a step: 1 - none / LayerNorm); 50 rounds (quick "
       "15) after 3 warm-up rounds, each round timing every norm in turn.",
       false, false, claim_c3,
       "The paper reports 6.9%-40.8% per step with unfused framework ops. An op ratio <= 0.9 asks for the "
       "saving that dropping the mean and its subtraction (two of about six passes over memory) should give; "
       "a step ratio < 1 asks only that the saving survive the rest of the step, as the smallest reported "
       "speed-up is 6.9%. The paper's speed-ups are largest on RNNSearch (11-34%, against 6.9% on the "
       "Transformer), so its step is held to the same criterion, and whether its saving is the larger is "
       "reported. Timings have no seeds: the interval is over alternating rounds."),
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
  }, {batchnorm_claims(), postln_gradients_claims(), postln_update_claims()});
  return claims;
}

const Claim* find_claim(const std::string& id) {
  const auto& all = all_claims();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Claim& c) { return c.id == id; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace nt
