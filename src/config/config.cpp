#include "config/config.h"

#include "config/arch.h"
#include "config/field_kinds.h"
#include "config/parser.h"
#include "config/user_json.h"
#include "core/read_file.h"
#include "norms/norms.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <array>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <sstream>

namespace nt {

using json = nlohmann::json;

namespace {

std::string describe(const json& v) { return describe_json(v); }

// A run's name names its directory (runs/<name>-<time>): at most 100 letters, digits, spaces
// and . _ - + = , @, neither starting with . - or a space nor ending with a space (so never
// "..", a path, or an option).
// (std::strchr would also find the string's terminator: a NUL would pass as a name character.)
bool name_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) ||
         std::string_view(" ._-+=,@").find(ch) != std::string_view::npos;
}

std::optional<std::string> name_problem(const std::string& name) {
  if (name.empty() || name.size() > 100) return fmt::format("expected 1 to 100 characters, got {}", name.size());
  for (char ch : name)
    if (!name_char(ch))
      return fmt::format("expected letters, digits, spaces and . _ - + = , @ only, got {}", describe(json(name)));
  if (name[0] == '.' || name[0] == '-' || name[0] == ' ' || name.back() == ' ')
    return fmt::format("must not start with '.', '-' or a space, nor end with a space; got {}", describe(json(name)));
  return std::nullopt;
}

}  // namespace

std::string name_from_file(const std::string& source) {
  std::string stem = std::filesystem::path(source).stem().string(), name;
  for (char ch : stem) name += name_char(ch) ? ch : '_';
  while (!name.empty() && (name[0] == '.' || name[0] == '-' || name[0] == ' ')) name.erase(0, 1);
  if (name.size() > 100) name.resize(100);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name.empty() ? "run" : name;
}

namespace {

// The run's name: a string that name_problem accepts.
Field& name_field(FieldList& f, std::string& ref) {
  auto set = [&ref](const json& v) -> std::optional<std::string> {
    if (!v.is_string()) return fmt::format("expected a string, got {}", describe(v));
    if (auto p = name_problem(v.get<std::string>())) return p;
    ref = v.get<std::string>();
    return std::nullopt;
  };
  auto get = [&ref] { return json(ref); };
  return f.leaf("name", set, get, "string", "1 to 100 letters, digits, spaces and . _ - + = , @");
}

// The table of every config key: its kind, range and meaning (docs/config.md), in the order the
// docs list them; a function per section of the config.
void data_fields(FieldList& f, DataConfig& d) {
  f.choice("data.dataset", d.dataset, kDatasetNames)
      .means(
          "The data: fortunes and synthetic-lm for language modelling (transformer), "
          "fashion-mnist and synthetic-classify for classification (mlp), gettext-de and synthetic-seq2seq for "
          "translation (seq2seq models); docs/data.md defines each exactly.");
  f.text("data.path", d.path).means("Where the dataset's files are; empty: its Debian location (docs/data.md).");
  f.integer("data.seq_len", d.seq_len, 1, 4096)
      .means("Language modelling: tokens (bytes) per row; the model predicts each next byte.");
  f.choice("data.layout", d.layout, kLayoutNames)
      .means(
          "Language modelling: packed cuts rows at random offsets from one byte stream of the documents; "
          "padded puts one document per row, right-padded with byte 0, the padding masked out of the loss and the "
          "statistics.");
  f.number("data.val_fraction", d.val_fraction, 0, 1, true)
      .means("The held-out share of the documents, for a dataset with no split of its own (fortunes).");
  f.integer("data.max_len", d.max_len, 1, 4096)
      .means(
          "seq2seq (gettext-de, synthetic-seq2seq): the longest source and target, in bytes; "
          "longer pairs are skipped.");
  f.stems("data.catalogs", d.catalogs)
      .means("gettext-de: the message catalogs (file stems of data.path) to read; null: the documented default list.");
  f.number("data.mask_prob", d.mask_prob, 0, 1, true)
      .means(
          "encoder (masked LM): the share of each row's real positions it predicts; "
          "a chosen position's input is byte 1 (MASK) 80% of the time, a random byte 10%, kept 10%. "
          "Refused when a batch would choose no position with probability 1/2 or more: "
          "(1 - mask_prob)^(batch_size x seq_len) for full rows, more for short padded ones; "
          "a batch that chooses none by chance is drawn again and counted (summary.json batches_without_target).");
}

void norm_fields(FieldList& f, NormConfig& n) {
  f.choice("model.norm.type", n.type, norm_type_names())
      .means(
          "The normalization at every norm site; deepnorm is LayerNorm in DeepNet's residual x = LN(alpha x + f(x)), "
          "transformer only.");
  f.choice("model.norm.placement", n.placement, kPlacementNames)
      .means(
          "Transformer: pre is x + f(norm(x)) with a final norm; post is norm(x + f(x)); peri is "
          "x + norm_out(f(norm_in(x))) with a final norm, each output norm its own (Peri-LN, Kim et al. 2025; "
          "Gemma 2); reordered is x + norm(f(x)) with a final norm, f's input not normalized (OLMo 2's reordered "
          "norm); peri and reordered for none, layernorm and rmsnorm. deepnorm is always post.");
  f.number("model.norm.eps", n.eps, 0).means("Added to the variance (or mean square) inside the square root.");
  f.boolean("model.norm.affine", n.affine)
      .means("A learnable gain after the norm (and a bias, except for rmsnorm, prmsnorm and scalenorm).");
  f.boolean("model.norm.bias", n.bias)
      .means(
          "With model.norm.affine, the norm's additive bias where its kind has one (layernorm, deepnorm, batchnorm, "
          "dyt; rmsnorm, prmsnorm and scalenorm have none); false: the gain alone (T5-style without the mean is "
          "rmsnorm; nanoGPT's bias=False is layernorm with this false).");
  f.number("model.norm.momentum", n.momentum, 0, 1)
      .means("batchnorm: the weight of the new batch in the running mean and variance (the running variance is "
             "unbiased).");
  f.choice("model.norm.bn_axes", n.bn_axes, kBnAxesNames)
      .means("batchnorm in a transformer: batch_time normalizes each feature over the batch and the positions; "
             "batch over the batch only, per position.");
  f.optional_number("model.norm.alpha", n.alpha)
      .means(
          "deepnorm: the residual scale of every stack; null: DeepNet's constant for the architecture and stack "
          "(docs/deepnorm.md), e.g. (2N)^(1/4) for a decoder-only or encoder-only model of N = model.n_layers blocks.");
  f.optional_number("model.norm.beta", n.beta)
      .means(
          "deepnorm: the init gain of the feed-forward, value and output projections (cross-attention's too) "
          "of every stack; null: DeepNet's constant for the architecture and stack, e.g. (8N)^(-1/4) "
          "for a single stack.");
  f.number("model.norm.p", n.p, 0, 1, true)
      .means("prmsnorm: the share of the features its RMS is computed from (the first max(1, floor(p d))).");
  f.number("model.norm.dyt_alpha0", n.dyt_alpha0, 0, kInf, true)
      .means("dyt: alpha's initial value in gamma * tanh(alpha x) + beta, a scalar per site (Zhu et al. 2025: 0.5).");
  f.choice("model.norm.impl", n.impl, kNormImplNames)
      .means(
          "fused: normtool's kernels; composite: the norm composed from primitive ops, "
          "as a framework without fused kernels runs it (same values, other speed; not for batchnorm).");
  f.boolean("model.norm.depth_scaling", n.depth_scaling)
      .means(
          "LayerNorm Scaling (Sun et al. 2025): block l = 1..N of each stack multiplies the output of its input "
          "norms (attn, cross, ffn; not peri's output norms, embed or final) by 1 / sqrt(l). Transformer families, "
          "pre or peri, layernorm or rmsnorm.");
  f.boolean("model.norm.unit_offset", n.unit_offset)
      .means(
          "The gain as Gemma's RMSNorm applies it: x_hat * (1 + w), the parameter w learned from 0, so that weight "
          "decay pulls the gain toward 1, not 0 (the same model and updates as a gain from 1 without decay). "
          "Norms whose gain is per feature and starts at 1, with model.norm.affine.");
}

// What a Transformer stack's attention and feed-forward are made of, beyond the norms.
void stack_fields(FieldList& f, ModelConfig& m) {
  f.choice("model.ffn", m.ffn, kFfnNames)
      .means(
          "Transformer families: mlp is fc2(act(fc1 x)); glu is the gated fc2(act(fc1 x) * fc3 x), fc3 a third "
          "Linear of d_model -> d_ff drawn as fc1 (Shazeer 2020): SwiGLU with model.activation silu (Llama), "
          "GeGLU with gelu (GLM-130B, Gemma; theirs the tanh approximation, normtool's gelu the exact one).");
  f.boolean("model.qk_norm", m.qk_norm)
      .means("A norm of the block's type (layernorm|rmsnorm; model.norm's eps, affine, bias) on each head's queries "
             "and keys (d_model / n_heads features) before q.k, in every attention, cross-attention too: q_norm, "
             "k_norm, one gain (and bias) each shared by the heads (Dehghani et al. 2023). Transformer families.");
  f.choice("model.qk_norm_scope", m.qk_norm_scope, kQkNormScopeNames)
      .means("model.qk_norm's features: head normalizes each head's d_model / n_heads (Dehghani et al. 2023); all "
             "normalizes q's (and k's) d_model features at once before the heads split, one gain of d_model each "
             "(OLMo 2).");
  f.boolean("model.scaled_residual_init", m.scaled_residual_init)
      .means(
          "Transformer families: after model.init, every attention's out and every fc2 weight (the projections "
          "that write into the residual stream) divided by sqrt(2 N), N the stack's blocks (GPT-2, Radford et "
          "al. 2019; nanoGPT's c_proj.weight std 0.02 / sqrt(2 n_layer)); with deepnorm, after its gain beta.");
  f.boolean("model.tie_embeddings", m.tie_embeddings)
      .means(
          "transformer, encoder: the output layer's weight is the token embedding table tok_emb (Press & Wolf "
          "2017; GPT-2, Gemma), drawn as an embedding, its gradient the sum of both uses; the output bias stays "
          "a parameter of its own with model.bias.");
  f.boolean("model.embed_scale", m.embed_scale)
      .means(
          "Transformer families: the token embedding times sqrt(d_model) before the position table is added and "
          "before any embedding norm (Vaswani et al. 2017 §3.4; Gemma), in every stack; a tied output layer reads "
          "the table unscaled.");
  f.number("model.attn_softcap", m.attn_softcap, 0)
      .means("Transformer families: > 0 caps every attention's scores softly, c tanh(s / c) with c this value, "
             "before the mask and the softmax (Gemma 2: 50); 0: no cap.");
  f.number("model.logit_softcap", m.logit_softcap, 0)
      .means("Transformer families: > 0 caps the output layer's logits softly, c tanh(z / c) (Gemma 2: 30); "
             "0: no cap.");
  f.choice("model.position", m.position, kPositionNames)
      .means(
          "Transformer families: learned adds a learned position table (pos_emb) to the token embedding; none "
          "has no position signal but the causal mask; rotary (RoPE, Su et al. 2021) turns each head's queries "
          "and keys in every self-attention (not cross-attention) by position, GPT-NeoX's half-split pairs "
          "(feature i with i + d_head/2; GLM-130B, Gemma, OLMo 2), and has no position table. rotary needs an "
          "even d_head = model.d_model / model.n_heads.");
  f.number("model.rotary_base", m.rotary_base, 1)
      .means("rotary: the base of the angles, pair i at position t turning by t * base^(-2i / d_head) "
             "(10000: RoFormer, Llama, GLM-130B, Gemma; OLMo 2: 500000).");
}

void model_fields(FieldList& f, ModelConfig& m) {
  std::vector<std::string> families;
  for (const ArchDesc& a : all_archs()) families.push_back(fmt::format("{}: {}", a.name, a.about));
  f.choice("model.arch", m.arch, kArchNames).means(fmt::format("{}.", fmt::join(families, "; ")));
  f.integer("model.d_model", m.d_model, 1, 8192).means("Transformer width (embedding and residual stream).");
  f.integer("model.n_layers", m.n_layers, 1, 1000)
      .means(
          "Transformer blocks (an encoder-decoder's encoder blocks), stacked cells of an rnn, "
          "or hidden layers of the mlp; rnnsearch does not read it.");
  f.integer("model.n_heads", m.n_heads, 1, 1024).means("Attention heads; must divide model.d_model.");
  f.integer("model.d_ff", m.d_ff, 1, 65536).means("Transformer feed-forward width.");
  f.integer("model.hidden", m.hidden, 1, 65536).means("Width of the mlp's hidden layers.");
  f.choice("model.activation", m.activation, kActivationNames)
      .means("The activation of the feed-forward (transformer; with model.ffn glu, of its gate) or of each hidden "
             "layer (mlp); silu is x sigmoid(x).");
  f.choice("model.init", m.init, kInitNames)
      .means(
          "normal: every Linear weight and both embeddings N(0, init_std), biases 0; xavier: "
          "every Linear weight Glorot normal with gain 1 and both embeddings N(0, 1) "
          "(the setting of Xiong et al. 2020 and DeepNet); nematus (rnn, rnnsearch): non-square weights and the "
          "embeddings N(0, 0.01^2), "
          "square ones orthogonal, each H x H block of a recurrent matrix orthogonal (Nematus). "
          "deepnorm keeps its gain beta on the feed-forward, value and output projections either way. "
          "postln-init (Post-LN, DeepNet §3): xavier, then block l = 1..N of each stack has fc1, fc2 and every "
          "attention's v and out divided by N - l + 1.");
  f.number("model.init_std", m.init_std, 0, kInf, true).means("The standard deviation of model.init normal.");
  f.number("model.init_mean", m.init_mean, -kInf)
      .means("Added to every Linear weight after every other init rule (RMS §6.1 Fig. 4: 0.2); embeddings, "
             "biases and norm gains keep theirs.");
  norm_fields(f, m.norm);
  f.boolean("model.final_norm", m.final_norm)
      .means(
          "A norm at the end of each stack in pre, peri and reordered placements (before the output layer; "
          "an encoder-decoder's encoder output too).");
  f.boolean("model.embed_norm", m.embed_norm)
      .means("A norm of the summed embeddings before the first block (BERT, BLOOM), in every stack; site embed.");
  f.boolean("model.bias", m.bias)
      .means(
          "Every Linear has an additive bias: q, k, v and out of every attention, fc1 and fc2, the output layer, "
          "the mlp's layers (Llama and T5: false); rnn and rnnsearch keep Nematus's biases (true only). "
          "Biases start at 0.");
  stack_fields(f, m);
  f.optional_integer("model.n_dec_layers", m.n_dec_layers, 1, 1000)
      .means("encoder-decoder: the decoder blocks; null: model.n_layers. Other architectures: must be null.");
  f.choice("model.cell", m.cell, kCellNames)
      .means(
          "rnn: the recurrent cell, gru (Nematus's transition, four norm sites) "
          "or lstm (the LayerNorm paper's LN-LSTM).");
  f.optional_integer("model.d_emb", m.d_emb, 1, 8192)
      .means(
          "rnn, rnnsearch: the embedding width; null: model.d_model (the recurrent state's width). "
          "Other architectures: must be null.");
}

void train_fields(FieldList& f, TrainConfig& t) {
  f.integer("train.steps", t.steps, 1).means("Optimizer updates of the run.");
  f.integer("train.batch_size", t.batch_size, 1, 1 << 20).means("Rows per batch, drawn with replacement.");
  f.choice("train.optimizer", t.optimizer, kOptimizerNames)
      .means("sgd (with train.momentum), adam, or adamw (decoupled weight decay).");
  f.number("train.lr", t.lr, 0).means("The peak learning rate (after the warm-up, before the schedule's decay).");
  f.number("train.momentum", t.momentum, 0, 1).means("sgd: momentum.");
  f.number("train.beta1", t.beta1, 0, 1).means("adam, adamw: the first moment's decay.");
  f.number("train.beta2", t.beta2, 0, 1).means("adam, adamw: the second moment's decay.");
  f.number("train.adam_eps", t.adam_eps, 0).means("adam, adamw: added to the root of the second moment.");
  f.number("train.weight_decay", t.weight_decay, 0)
      .means("L2 penalty in the gradient (sgd, adam), or decoupled decay (adamw).");
  f.choice("train.schedule", t.schedule, kScheduleNames)
      .means(
          "The learning rate after the warm-up: constant, linear to 0 at the last step, cosine to 0, "
          "or inverse_sqrt (lr sqrt(w / t) from the end w of the warm-up).");
  f.integer("train.warmup_steps", t.warmup_steps, 0)
      .means("A linear warm-up from 0 to train.lr over this many steps, before the schedule.");
  f.number("train.grad_clip", t.grad_clip, 0).means("Clip the global gradient norm to this value; 0: off.");
  f.integer("train.log_every", t.log_every, 1)
      .means("Steps between train lines of metrics.jsonl. Unset: the default, or steps / 50 when "
             "that is smaller (at least 1), as for eval_every (steps / 10) and stats_every (steps / 10).");
  f.integer("train.eval_every", t.eval_every, 1)
      .means("Steps between validation losses; the last step is always evaluated.");
  f.integer("train.eval_batches", t.eval_batches, 1)
      .means("Validation batches per evaluation: the first eval_batches x batch_size validation rows, in order.");
  f.integer("train.stats_every", t.stats_every, 0)
      .means("Steps between per-position statistics (stats.csv, ranges.csv) and per-layer lines (layers.jsonl), which "
               "the last step also gets; 0: none.");
  f.integer("train.checkpoint_every", t.checkpoint_every, 0)
      .means("Steps between checkpoints (checkpoint.bin); 0: only when the run stops (end, SIGINT, SIGTERM).");
  f.number("train.pictures_every_s", t.pictures_every_s, 0)
      .means("While the run trains, its pictures (loss.png, stats.png, layers.png, ranges.png, shown by index.html) "
             "are redrawn at an evaluation once this many seconds have passed since the last drawing; 0: at every "
             "evaluation. They are always drawn when the run stops.");
  f.integer("train.threads", t.threads, 0, 1024).means("Math threads; 0: all cores.");
  f.choice("train.parallel", t.parallel, kParallelNames)
      .means(
          "How a training step uses two math threads or more. batch: each thread runs the forward and backward of "
          "its share of the batch's rows on its own copy of the model, the gradients added in thread order (the "
          "fastest; the last bits of a run then depend on the thread count; a batchnorm model runs ops). ops: "
          "every op splits its rows across the threads, and every sum over rows is cut where the thread count does "
          "not move the cuts (the same bits at any thread count, but for products that OpenBLAS runs: "
          "NORMTOOL_GEMM=openblas, or a CPU without AVX).");
  f.choice("train.precision", t.precision, kPrecisionNames)
      .means(
          "The number format of every value between ops and of every weight the forward reads: fp32, "
          "or bf16 and fp16 emulated by rounding (fp32 master weights and optimizer state; "
          "fp16 with dynamic loss scaling).");
}

}  // namespace

std::vector<Field> fields_of(RunConfig& c) {
  FieldList f;
  name_field(f, c.name).means("Names the run and its directory (runs/<name>-<time>); empty: the config file's stem.");
  f.integer("seed", c.seed, 0, 2147483647)
      .means("One seed drives the initial weights, the data order and every random draw of the run.");
  data_fields(f, c.data);
  model_fields(f, c.model);
  train_fields(f, c.train);
  return std::move(f.fields);
}


ConfigError::ConfigError(std::vector<std::string> problems)
    : InputError([&] {
        std::string s = problems.size() == 1 ? "config is invalid: " + problems[0]
                                             : fmt::format("config is invalid ({} problems):", problems.size());
        if (problems.size() > 1)
          for (const auto& p : problems) s += "\n  " + p;
        return s;
      }()),
      problems_(std::move(problems)) {}

json config_to_json(const RunConfig& config) {
  RunConfig copy = config;
  json out = json::object();
  for (const auto& f : fields_of(copy)) {
    std::string pointer = f.path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    out[json::json_pointer(pointer.insert(0, 1, '/'))] = f.get();
  }
  return out;
}

std::vector<ConfigKey> config_keys() {
  RunConfig defaults;
  std::vector<ConfigKey> keys;
  for (const Field& f : fields_of(defaults)) keys.push_back({f.path, f.type, f.range, f.get().dump(), f.meaning});
  return keys;
}

}  // namespace nt
