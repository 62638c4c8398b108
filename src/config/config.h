// The run config: typed structs with their defaults (docs/config.md, generated from config.cpp's field table).
// load_config() parses strictly: unknown keys (with a did-you-mean), wrong types, unknown
// enum strings and out-of-range values are all reported at once as a ConfigError, before
// anything runs. config_to_json() gives the resolved config, every default filled in.
#pragma once
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/errors.h"
#include "core/number_format.h"  // Precision, its names beside it
#include "ops/activation_kind.h"

namespace nt {

// The norm kinds (norms/norm_kind.h lists them; their names come from their descriptions). Only
// declared here, so that adding a kind recompiles what names one, not everything that reads the config.
enum class NormType : unsigned char;
NormType default_norm_type();  // layernorm
std::ostream& operator<<(std::ostream& os, NormType k);  // by name, as norms/norm_kind.h declares it too

// The model families (config/arch.h describes them), only declared here like NormType.
enum class Arch : unsigned char;
Arch default_arch();  // transformer

// Each enum with the names the config spells (Activation's in ops/activation_kind.h), in its order.
// What a dataset's rows are: byte sequences, feature vectors with a label, or (source, target) pairs.
enum class DataKind { lm, classification, seq2seq };
inline constexpr const char* kDataKindNames[] = {"language-modelling", "classification", "seq2seq"};
enum class DatasetKind { fortunes, fashion_mnist, synthetic_lm, synthetic_classify, gettext_de, synthetic_seq2seq };
inline constexpr const char* kDatasetNames[] = {"fortunes",           "fashion-mnist", "synthetic-lm",
                                                "synthetic-classify", "gettext-de",    "synthetic-seq2seq"};
inline constexpr DataKind kDatasetDataKinds[] = {DataKind::lm,             DataKind::classification, DataKind::lm,
                                                 DataKind::classification, DataKind::seq2seq,        DataKind::seq2seq};
constexpr DataKind data_kind(DatasetKind d) { return kDatasetDataKinds[int(d)]; }
enum class Layout { packed, padded };
inline constexpr const char* kLayoutNames[] = {"packed", "padded"};
enum class RnnCell { gru, lstm };
inline constexpr const char* kCellNames[] = {"gru", "lstm"};
enum class Init { normal, xavier, nematus, postln_init };
inline constexpr const char* kInitNames[] = {"normal", "xavier", "nematus", "postln-init"};
// How a Transformer stack knows a token's position: a learned table added to the token embedding,
// nothing (only the causal mask tells), or rotary embedding of every self-attention's q and k.
enum class Position { learned, none, rotary };
inline constexpr const char* kPositionNames[] = {"learned", "none", "rotary"};
enum class QkNormScope { head, all };  // model.qk_norm over each head's features, or over all of q's (k's)
inline constexpr const char* kQkNormScopeNames[] = {"head", "all"};
// A Transformer block's feed-forward: mlp fc2(act(fc1 x)); glu fc2(act(fc1 x) * fc3 x) (Shazeer 2020:
// SwiGLU with silu, GeGLU with gelu).
enum class Ffn { mlp, glu };
inline constexpr const char* kFfnNames[] = {"mlp", "glu"};
enum class Placement { pre, post, peri, reordered };
inline constexpr const char* kPlacementNames[] = {"pre", "post", "peri", "reordered"};
enum class BnAxes { batch_time, batch };
inline constexpr const char* kBnAxesNames[] = {"batch_time", "batch"};
enum class NormImpl { fused, composite };
inline constexpr const char* kNormImplNames[] = {"fused", "composite"};
enum class Optimizer { sgd, adam, adamw };
inline constexpr const char* kOptimizerNames[] = {"sgd", "adam", "adamw"};
enum class Schedule { constant, linear, cosine, inverse_sqrt };
inline constexpr const char* kScheduleNames[] = {"constant", "linear", "cosine", "inverse_sqrt"};
enum class Parallel { batch, ops };
inline constexpr const char* kParallelNames[] = {"batch", "ops"};
// NormType's names, in its order (its descriptions', norms/norms.h).
std::span<const char* const> norm_type_names();

// "a|b|c", as the error messages list the choices.
std::string join_names(std::span<const char* const> names);

struct DataConfig {
  DatasetKind dataset = DatasetKind::fortunes;
  std::string path;            // "" = the dataset's Debian location
  int seq_len = 64;            // tokens (bytes) per row
  Layout layout = Layout::packed;
  double val_fraction = 0.05;  // held-out share where the dataset has no split of its own
  int max_len = 48;            // seq2seq: longest source and target, in bytes
  // gettext-de: the catalog stems to read; unset = the documented default list (resolved into
  // the config when the dataset is gettext-de, so config.json shows it)
  std::optional<std::vector<std::string>> catalogs;
  double mask_prob = 0.15;     // encoder: share of the real positions the masked LM predicts
};

struct NormConfig {
  NormType type = default_norm_type();
  Placement placement = Placement::pre;  // deepnorm is always post
  double eps = 1e-5;
  bool affine = true;                    // learnable gain (and bias where the kind has one: norms/norms.h)
  bool bias = true;                      // with affine, the additive bias of a kind that has one (layernorm, deepnorm,
                                         // batchnorm); false: gain only (nanoGPT's bias=False)
  double momentum = 0.1;                 // batchnorm running statistics: weight of the new batch
  BnAxes bn_axes = BnAxes::batch_time;
  std::optional<double> alpha;           // deepnorm residual scale; unset: DeepNet's (RunConfig::deepnorm)
  std::optional<double> beta;            // deepnorm init gain; unset: DeepNet's, e.g. (8N)^(-1/4) in one stack
  double p = 0.0625;                     // prmsnorm: the share of the features its RMS reads
  double dyt_alpha0 = 0.5;               // dyt: alpha's initial value (Zhu et al. 2025's default)
  NormImpl impl = NormImpl::fused;       // composite: composed from primitive ops (a framework without fused kernels)
  bool depth_scaling = false;            // pre, peri: block l's input norms times 1 / sqrt(l) (LayerNorm Scaling)
  bool unit_offset = false;              // the gain is 1 + w, w learned from 0 (Gemma's RMSNorm)
};

struct ModelConfig {
  Arch arch = default_arch();
  int d_model = 64;
  int n_layers = 2;          // transformer blocks, or hidden layers of the mlp
  int n_heads = 4;
  int d_ff = 256;
  int hidden = 256;          // mlp hidden width
  Activation activation = Activation::gelu;
  Ffn ffn = Ffn::mlp;        // glu: fc2(act(fc1 x) * fc3 x), a third d_model x d_ff matrix
  Init init = Init::normal;  // normal: N(0, init_std) everywhere; xavier: Glorot normal, embeddings N(0, 1)
  double init_std = 0.02;
  double init_mean = 0.0;    // added to every Linear weight after its init (RMS §6.1 Fig. 4)
  NormConfig norm;
  bool final_norm = true;    // a norm before the output layer in pre, peri and reordered placements (of each stack)
  bool embed_norm = false;   // a norm of the summed embeddings before the first block (BERT, BLOOM)
  bool bias = true;          // every Linear (attention, feed-forward, output layer, mlp layers): Llama, T5 false
  bool qk_norm = false;      // a norm of model.norm's type on each head's queries and keys (Dehghani et al. 2023)
  QkNormScope qk_norm_scope = QkNormScope::head;  // all: over q's (k's) d_model features, before the heads (OLMo 2)
  Position position = Position::learned;  // learned: pos_emb table; none; rotary: RoPE on q, k of self-attention
  double rotary_base = 10000;
  bool scaled_residual_init = false;      // out and fc2 weights / sqrt(2 n_layers) after model.init (GPT-2)
  bool tie_embeddings = false;            // transformer, encoder: the output layer's weight is tok_emb (GPT-2)
  bool embed_scale = false;               // the token embedding times sqrt(d_model) (Vaswani et al. 2017; Gemma)
  double attn_softcap = 0;                // > 0: attention scores c tanh(s / c) (Gemma 2: 50)
  double logit_softcap = 0;               // > 0: output logits c tanh(z / c) (Gemma 2: 30)
  std::optional<int> n_dec_layers;  // encoder-decoder: decoder blocks; unset = n_layers (= encoder blocks)
  int dec_layers() const { return n_dec_layers ? *n_dec_layers : n_layers; }
  RnnCell cell = RnnCell::gru;     // rnn: the recurrent cell
  std::optional<int> d_emb;  // rnn: the embedding width; unset = d_model (the state width)
  int emb_width() const { return d_emb ? *d_emb : d_model; }
};

// DeepNorm's two constants for one stack: x = LN(alpha x + f(x)), and beta the Xavier-normal gain
// of fc1, fc2 and every attention's v and out (q and k gain 1).
struct DeepNorm {
  double alpha, beta;
};
// DeepNet (Wang et al. 2022, Figure 2 and its table), N encoder and M decoder blocks:
//   encoder-only (N) and decoder-only (M = N)   alpha = (2N)^(1/4),            beta = (8N)^(-1/4)
//   encoder-decoder, encoder                    alpha = 0.81 (N^4 M)^(1/16),   beta = 0.87 (N^4 M)^(-1/16)
//   encoder-decoder, decoder                    alpha = (3M)^(1/4),            beta = (12M)^(-1/4)
DeepNorm deepnorm_single_stack(int N);
DeepNorm deepnorm_encdec_encoder(int N, int M);
DeepNorm deepnorm_encdec_decoder(int N, int M);
// Two departures from the paper met in code (docs/deepnorm.md), selectable as explicit
// model.norm.alpha / model.norm.beta: torchscale's encoder beta 1.15 (N^4 M)^(-1/16)
// (architecture/encoder.py), and GLM-130B's alpha (2N)^(1/2) (its code, N = layers).
double torchscale_encoder_beta(int N, int M);
double glm130b_alpha(int N);
enum class StackRole { encoder, decoder };

struct TrainConfig {
  int steps = 500;
  int batch_size = 16;
  Optimizer optimizer = Optimizer::adam;
  double lr = 1e-3;
  double momentum = 0.9;     // sgd
  double beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8;
  double weight_decay = 0.0;
  Schedule schedule = Schedule::constant;
  int warmup_steps = 0;      // linear warm-up from 0 before the schedule
  double grad_clip = 0.0;    // global-norm clipping; 0 = off
  int log_every = 10;
  int eval_every = 100;
  int eval_batches = 20;
  int stats_every = 100;     // 0 = no statistics
  int checkpoint_every = 0;  // steps between checkpoints; 0 = only when the run stops (end, SIGINT, SIGTERM)
  double pictures_every_s = 30;  // while it trains: seconds between redrawings of the pictures, at an evaluation
  int threads = 0;           // 0 = all cores
  Parallel parallel = Parallel::batch;  // how a training step uses the threads (train/shards.h)
  // The number format of activations and weights at op boundaries (core/number_format.h), master
  // weights and optimizer state fp32; fp16 with dynamic loss scaling (train/loss_scale.h).
  Precision precision = Precision::fp32;
};

struct RunConfig {
  std::string name;          // "" = the config file's stem
  int seed = 1;
  DataConfig data;
  ModelConfig model;
  TrainConfig train;

  bool is_lm() const { return data_kind(data.dataset) == DataKind::lm; }
  bool is_seq2seq() const { return data_kind(data.dataset) == DataKind::seq2seq; }
  // DeepNorm's constants for a stack of this config's model: model.norm.alpha / beta where given
  // (both stacks), else DeepNet's for the architecture (see DeepNorm above). A single-stack model
  // (transformer, encoder) has one pair, whichever stack is asked.
  DeepNorm deepnorm(StackRole stack = StackRole::decoder) const;
  double deepnorm_alpha() const { return deepnorm().alpha; }  // a single-stack model's
  double deepnorm_beta() const { return deepnorm().beta; }
};

// All the problems of one config, one line each ("model.norm.type: expected one of ...").
// A training batch without a counted target (padded rows of one byte; a masked LM that chose no
// position) trains on nothing: the session draws another in its place and counts it. A config
// (validate.cpp: data.mask_prob) or data (data/: a padded corpus) on which a batch holds no target
// with this probability or more is refused.
inline constexpr double kMaxBatchWithoutTarget = 0.5;

class ConfigError : public InputError {
 public:
  explicit ConfigError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// Parses `text` (the file's content, `source` names it in messages), applies the overrides
// ("key.path=value", value as JSON or else a string) and validates. Throws ConfigError.
// An empty name becomes the source's stem. load_config_file("") gives the defaults, named "run".
RunConfig load_config(const std::string& text, const std::string& source, const std::vector<std::string>& overrides);
RunConfig load_config_file(const std::string& path, const std::vector<std::string>& overrides);

// What a command line composes a config from, in the order of precedence, later winning key by
// key (docs/usage.md): the files in order (a preset, then one's own), then the positional
// overrides, then --set. An empty name becomes the last file's stem ("run" with no file).
struct ConfigInputs {
  std::vector<std::string> files;
  std::vector<std::string> overrides;  // positional key.path=value
  std::vector<std::string> sets;       // --set key.path=value
};
// Where each key that is not a default got its value: a file's path, "override" or "--set".
using ConfigOrigins = std::map<std::string, std::string>;
RunConfig load_configs(const ConfigInputs& in, ConfigOrigins* origins = nullptr);

nlohmann::json config_to_json(const RunConfig& config);

// Every key of the field table (config.cpp), in its order: what docs/config.md lists.
struct ConfigKey {
  std::string path, type, range;  // "train.steps", "integer", ">= 1 and <= 2147483647"
  std::string default_value;      // as JSON: 500, "fortunes", null
  std::string meaning;
};
std::vector<ConfigKey> config_keys();
// docs/config.md, exactly as `normtool config` prints it (a test keeps the two equal).
std::string config_reference();

// The config's spelling of an enum value.
const char* to_string(DatasetKind v);
const char* to_string(Placement v);
const char* to_string(BnAxes v);
const char* to_string(Arch v);
const char* to_string(Optimizer v);
const char* to_string(Schedule v);
const char* to_string(Parallel v);
const char* to_string(Activation v);
const char* to_string(Layout v);
const char* to_string(Init v);
const char* to_string(Position v);
const char* to_string(QkNormScope v);
const char* to_string(Ffn v);
const char* to_string(RnnCell v);
const char* to_string(NormImpl v);
const char* to_string(Precision v);

}  // namespace nt
