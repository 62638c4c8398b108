#include "config/config.h"

#include "config/arch.h"
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

std::string range_text(double lo, double hi, bool lo_open) {
  std::string s;
  if (std::isfinite(lo)) s += fmt::format("{} {}", lo_open ? ">" : ">=", lo);
  if (std::isfinite(hi)) s += fmt::format("{}<= {}", s.empty() ? "" : " and ", hi);
  return s;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kIntMax = 2147483647;  // every integer key fits an int; larger values are refused, not wrapped

// A run's name names its directory (runs/<name>-<time>): at most 100 letters, digits, spaces
// and . _ - + = , @, neither starting with . - or a space nor ending with a space (so never
// "..", a path, or an option).
// (std::strchr would also find the string's terminator: a NUL would pass as a name character.)
bool name_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || std::string_view(" ._-+=,@").find(ch) != std::string_view::npos;
}

std::optional<std::string> name_problem(const std::string& name) {
  if (name.empty() || name.size() > 100) return fmt::format("expected 1 to 100 characters, got {}", name.size());
  for (char ch : name)
    if (!name_char(ch)) return fmt::format("expected letters, digits, spaces and . _ - + = , @ only, got {}", describe(json(name)));
  if (name[0] == '.' || name[0] == '-' || name[0] == ' ' || name.back() == ' ')
    return fmt::format("must not start with '.', '-' or a space, nor end with a space; got {}", describe(json(name)));
  return std::nullopt;
}

// The name a config file gives its run when it names none: its stem, with every character a
// name cannot hold replaced by _.
std::string name_from_file(const std::string& source) {
  std::string stem = std::filesystem::path(source).stem().string(), name;
  for (char ch : stem) name += name_char(ch) ? ch : '_';
  while (!name.empty() && (name[0] == '.' || name[0] == '-' || name[0] == ' ')) name.erase(0, 1);
  if (name.size() > 100) name.resize(100);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name.empty() ? "run" : name;
}

std::vector<Field> fields_of(RunConfig& c) {
  std::vector<Field> f;
  auto integer = [&](std::string path, int& ref, double lo, double hi = kIntMax) -> Field& {
    f.push_back({path,
                 [&ref, lo, hi](const json& v) -> std::optional<std::string> {
                   const bool integral = v.is_number_integer() ||
                                         (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
                   if (!integral || v.get<double>() < lo || v.get<double>() > hi)
                     return fmt::format("expected an integer {}, got {}", range_text(lo, hi, false), describe(v));
                   ref = int(v.get<double>());
                   return std::nullopt;
                 },
                 [&ref] { return json(ref); }, {}, {}, {}});
    f.back().type = "integer", f.back().range = range_text(lo, hi, false);
    return f.back();
  };
  auto number = [&](std::string path, double& ref, double lo, double hi = kInf, bool lo_open = false) -> Field& {
    f.push_back({path,
                 [&ref, lo, hi, lo_open](const json& v) -> std::optional<std::string> {
                   const double d = v.is_number() ? v.get<double>() : 0.0;
                   if (!v.is_number() || d < lo || (lo_open && d == lo) || d > hi)
                     return fmt::format("expected a number {}, got {}", range_text(lo, hi, lo_open), describe(v));
                   ref = d;
                   return std::nullopt;
                 },
                 [&ref] { return json(ref); }, {}, {}, {}});
    f.back().type = "number", f.back().range = range_text(lo, hi, lo_open);
    return f.back();
  };
  auto optional_number = [&](std::string path, std::optional<double>& ref) -> Field& {
    f.push_back({path,
                 [&ref](const json& v) -> std::optional<std::string> {
                   if (v.is_null()) return ref = std::nullopt, std::nullopt;
                   if (!v.is_number() || v.get<double>() <= 0)
                     return fmt::format("expected null or a number > 0, got {}", describe(v));
                   ref = v.get<double>();
                   return std::nullopt;
                 },
                 [&ref] { return ref ? json(*ref) : json(nullptr); }, {}, {}, {}});
    f.back().type = "number or null", f.back().range = "> 0, or null";
    return f.back();
  };
  auto optional_integer = [&](std::string path, std::optional<int>& ref, double lo, double hi) -> Field& {
    f.push_back({path,
                 [&ref, lo, hi](const json& v) -> std::optional<std::string> {
                   if (v.is_null()) return ref = std::nullopt, std::nullopt;
                   const bool integral = v.is_number_integer() ||
                                         (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
                   if (!integral || v.get<double>() < lo || v.get<double>() > hi)
                     return fmt::format("expected null or an integer {}, got {}", range_text(lo, hi, false), describe(v));
                   ref = int(v.get<double>());
                   return std::nullopt;
                 },
                 [&ref] { return ref ? json(*ref) : json(nullptr); }, {}, {}, {}});
    f.back().type = "integer or null", f.back().range = range_text(lo, hi, false) + ", or null";
    return f.back();
  };
  auto boolean = [&](std::string path, bool& ref) -> Field& {
    f.push_back({path,
                 [&ref](const json& v) -> std::optional<std::string> {
                   if (!v.is_boolean()) return fmt::format("expected true or false, got {}", describe(v));
                   ref = v.get<bool>();
                   return std::nullopt;
                 },
                 [&ref] { return json(ref); }, {}, {}, {}});
    f.back().type = "boolean";
    return f.back();
  };
  auto text = [&](std::string path, std::string& ref) -> Field& {
    f.push_back({path,
                 [&ref](const json& v) -> std::optional<std::string> {
                   if (!v.is_string()) return fmt::format("expected a string, got {}", describe(v));
                   ref = v.get<std::string>();
                   return std::nullopt;
                 },
                 [&ref] { return json(ref); }, {}, {}, {}});
    f.back().type = "string";
    return f.back();
  };
  // null, or a non-empty list of catalog stems: a file name without '/', NUL or a leading '.'
  auto stems = [&](std::string path, std::optional<std::vector<std::string>>& ref) -> Field& {
    f.push_back({path,
                 [&ref](const json& v) -> std::optional<std::string> {
                   if (v.is_null()) return ref = std::nullopt, std::nullopt;
                   if (!v.is_array() || v.empty() || v.size() > 1000)
                     return fmt::format("expected null or a list of 1 to 1000 catalog names, got {}", describe(v));
                   std::vector<std::string> out;
                   for (const json& e : v) {
                     const bool ok = e.is_string() && !e.get<std::string>().empty() && e.get<std::string>().size() <= 200 &&
                                     e.get<std::string>()[0] != '.' &&
                                     e.get<std::string>().find_first_of(std::string("/\0", 2)) == std::string::npos;
                     if (!ok)
                       return fmt::format("expected catalog names (1 to 200 bytes, no '/', no NUL, not starting "
                                          "with '.'), got {}", describe(e));
                     out.push_back(e.get<std::string>());
                   }
                   ref = std::move(out);
                   return std::nullopt;
                 },
                 [&ref] { return ref ? json(*ref) : json(nullptr); }, {}, {}, {}});
    f.back().type = "list of strings or null", f.back().range = "1 to 1000 names";
    return f.back();
  };
  auto choice = [&]<class E>(std::string path, E& ref, std::span<const char* const> names) -> Field& {
    f.push_back({path,
                 [&ref, names](const json& v) -> std::optional<std::string> {
                   for (std::size_t i = 0; i < names.size(); ++i)
                     if (v.is_string() && v.get<std::string>() == names[i]) return ref = E(i), std::nullopt;
                   return fmt::format("expected one of {}, got {}", join_names(names), describe(v));
                 },
                 [&ref, names] { return json(names[int(ref)]); }, {}, {}, {}});
    f.back().type = "one of", f.back().range = join_names(names);
    return f.back();
  };

  f.push_back({"name",
               [&c](const json& v) -> std::optional<std::string> {
                 if (!v.is_string()) return fmt::format("expected a string, got {}", describe(v));
                 if (auto p = name_problem(v.get<std::string>())) return p;
                 c.name = v.get<std::string>();
                 return std::nullopt;
               },
               [&c] { return json(c.name); }, {}, {}, {}});
  f.back().type = "string", f.back().range = "1 to 100 letters, digits, spaces and . _ - + = , @";
  f.back().means("Names the run and its directory (runs/<name>-<time>); empty: the config file's stem.");
  integer("seed", c.seed, 0, 2147483647).means("One seed drives the initial weights, the data order and every random draw of the run.");
  choice("data.dataset", c.data.dataset, kDatasetNames).means("The data: fortunes and synthetic-lm for language modelling (transformer), fashion-mnist and synthetic-classify for classification (mlp), gettext-de and synthetic-seq2seq for translation (seq2seq models); docs/data.md defines each exactly.");
  text("data.path", c.data.path).means("Where the dataset's files are; empty: its Debian location (docs/data.md).");
  integer("data.seq_len", c.data.seq_len, 1, 4096).means("Language modelling: tokens (bytes) per row; the model predicts each next byte.");
  choice("data.layout", c.data.layout, kLayoutNames).means("Language modelling: packed cuts rows at random offsets from one byte stream of the documents; padded puts one document per row, right-padded with byte 0, the padding masked out of the loss and the statistics.");
  number("data.val_fraction", c.data.val_fraction, 0, 1, true).means("The held-out share of the documents, for a dataset with no split of its own (fortunes).");
  integer("data.max_len", c.data.max_len, 1, 4096)
      .means("seq2seq (gettext-de, synthetic-seq2seq): the longest source and target, in bytes; longer pairs are skipped.");
  stems("data.catalogs", c.data.catalogs)
      .means("gettext-de: the message catalogs (file stems of data.path) to read; null: the documented default list.");
  number("data.mask_prob", c.data.mask_prob, 0, 1, true)
      .means("encoder (masked LM): the share of each row's real positions it predicts; a chosen position's input is byte 1 (MASK) 80% of the time, a random byte 10%, kept 10%. Refused when a batch would choose no position with probability 1/2 or more: (1 - mask_prob)^(batch_size x seq_len) for full rows, more for short padded ones; a batch that chooses none by chance is drawn again and counted (summary.json batches_without_target).");
  choice("model.arch", c.model.arch, kArchNames).means("transformer: decoder-only and causal; mlp: hidden layers Linear -> norm -> activation; encoder: bidirectional, a BERT-style masked LM; encoder-decoder: an encoder over the source and a causal decoder with cross-attention (seq2seq datasets); rnn: a recurrent LM of model.n_layers stacked cells (model.cell); rnnsearch: the GRU encoder-decoder with attention of the RMSNorm paper, in Nematus's layout (seq2seq datasets; one GRU each way in the encoder, two in the decoder: model.n_layers is not read).");
  integer("model.d_model", c.model.d_model, 1, 8192).means("Transformer width (embedding and residual stream).");
  integer("model.n_layers", c.model.n_layers, 1, 1000).means("Transformer blocks (an encoder-decoder's encoder blocks), stacked cells of an rnn, or hidden layers of the mlp; rnnsearch does not read it.");
  integer("model.n_heads", c.model.n_heads, 1, 1024).means("Attention heads; must divide model.d_model.");
  integer("model.d_ff", c.model.d_ff, 1, 65536).means("Transformer feed-forward width.");
  integer("model.hidden", c.model.hidden, 1, 65536).means("Width of the mlp's hidden layers.");
  choice("model.activation", c.model.activation, kActivationNames).means("The activation of the feed-forward (transformer) or of each hidden layer (mlp).");
  choice("model.init", c.model.init, kInitNames).means("normal: every Linear weight and both embeddings N(0, init_std), biases 0; xavier: every Linear weight Glorot normal with gain 1 and both embeddings N(0, 1) (the setting of Xiong et al. 2020 and DeepNet); nematus (rnn, rnnsearch): non-square weights and the embeddings N(0, 0.01^2), square ones orthogonal, each H x H block of a recurrent matrix orthogonal (Nematus). deepnorm keeps its gain beta on the feed-forward, value and output projections either way.");
  number("model.init_std", c.model.init_std, 0, kInf, true).means("The standard deviation of model.init normal.");
  choice("model.norm.type", c.model.norm.type, norm_type_names()).means("The normalization at every norm site; deepnorm is LayerNorm in DeepNet's residual x = LN(alpha x + f(x)), transformer only.");
  choice("model.norm.placement", c.model.norm.placement, kPlacementNames).means("Transformer: pre is x + f(norm(x)) with a final norm; post is norm(x + f(x)). deepnorm is always post.");
  number("model.norm.eps", c.model.norm.eps, 0).means("Added to the variance (or mean square) inside the square root.");
  boolean("model.norm.affine", c.model.norm.affine).means("A learnable gain after the norm (and a bias, except for rmsnorm and prmsnorm).");
  boolean("model.norm.bias", c.model.norm.bias).means("With model.norm.affine, the norm's additive bias where its kind has one (layernorm, deepnorm, batchnorm; rmsnorm, prmsnorm and scalenorm have none); false: the gain alone (T5-style without the mean is rmsnorm; nanoGPT's bias=False is layernorm with this false).");
  number("model.norm.momentum", c.model.norm.momentum, 0, 1).means("batchnorm: the weight of the new batch in the running mean and variance (the running variance is unbiased).");
  choice("model.norm.bn_axes", c.model.norm.bn_axes, kBnAxesNames).means("batchnorm in a transformer: batch_time normalizes each feature over the batch and the positions; batch over the batch only, per position.");
  optional_number("model.norm.alpha", c.model.norm.alpha).means("deepnorm: the residual scale of every stack; null: DeepNet's constant for the architecture and stack (docs/deepnorm.md), e.g. (2N)^(1/4) for a decoder-only or encoder-only model of N = model.n_layers blocks.");
  optional_number("model.norm.beta", c.model.norm.beta).means("deepnorm: the init gain of the feed-forward, value and output projections (cross-attention's too) of every stack; null: DeepNet's constant for the architecture and stack, e.g. (8N)^(-1/4) for a single stack.");
  number("model.norm.p", c.model.norm.p, 0, 1, true).means("prmsnorm: the share of the features its RMS is computed from (the first max(1, floor(p d))).");
  choice("model.norm.impl", c.model.norm.impl, kNormImplNames).means("fused: normtool's kernels; composite: the norm composed from primitive ops, as a framework without fused kernels runs it (same values, other speed; not for batchnorm).");
  boolean("model.final_norm", c.model.final_norm).means("A norm at the end of each stack in pre placement (before the output layer; an encoder-decoder's encoder output too).");
  boolean("model.embed_norm", c.model.embed_norm).means("A norm of the summed embeddings before the first block (BERT, BLOOM), in every stack; site embed.");
  boolean("model.bias", c.model.bias).means("Every Linear has an additive bias: q, k, v and out of every attention, fc1 and fc2, the output layer, the mlp's layers (Llama and T5: false); rnn and rnnsearch keep Nematus's biases (true only). Biases start at 0.");
  optional_integer("model.n_dec_layers", c.model.n_dec_layers, 1, 1000)
      .means("encoder-decoder: the decoder blocks; null: model.n_layers. Other architectures: must be null.");
  choice("model.cell", c.model.cell, kCellNames)
      .means("rnn: the recurrent cell, gru (Nematus's transition, four norm sites) or lstm (the LayerNorm paper's LN-LSTM).");
  optional_integer("model.d_emb", c.model.d_emb, 1, 8192)
      .means("rnn, rnnsearch: the embedding width; null: model.d_model (the recurrent state's width). Other architectures: must be null.");
  integer("train.steps", c.train.steps, 1).means("Optimizer updates of the run.");
  integer("train.batch_size", c.train.batch_size, 1, 1 << 20).means("Rows per batch, drawn with replacement.");
  choice("train.optimizer", c.train.optimizer, kOptimizerNames).means("sgd (with train.momentum), adam, or adamw (decoupled weight decay).");
  number("train.lr", c.train.lr, 0).means("The peak learning rate (after the warm-up, before the schedule's decay).");
  number("train.momentum", c.train.momentum, 0, 1).means("sgd: momentum.");
  number("train.beta1", c.train.beta1, 0, 1).means("adam, adamw: the first moment's decay.");
  number("train.beta2", c.train.beta2, 0, 1).means("adam, adamw: the second moment's decay.");
  number("train.adam_eps", c.train.adam_eps, 0).means("adam, adamw: added to the root of the second moment.");
  number("train.weight_decay", c.train.weight_decay, 0).means("L2 penalty in the gradient (sgd, adam), or decoupled decay (adamw).");
  choice("train.schedule", c.train.schedule, kScheduleNames).means("The learning rate after the warm-up: constant, linear to 0 at the last step, cosine to 0, or inverse_sqrt (lr sqrt(w / t) from the end w of the warm-up).");
  integer("train.warmup_steps", c.train.warmup_steps, 0).means("A linear warm-up from 0 to train.lr over this many steps, before the schedule.");
  number("train.grad_clip", c.train.grad_clip, 0).means("Clip the global gradient norm to this value; 0: off.");
  integer("train.log_every", c.train.log_every, 1).means("Steps between train lines of metrics.jsonl (and layers.jsonl).");
  integer("train.eval_every", c.train.eval_every, 1).means("Steps between validation losses; the last step is always evaluated.");
  integer("train.eval_batches", c.train.eval_batches, 1).means("Validation batches per evaluation: the first eval_batches x batch_size validation rows, in order.");
  integer("train.stats_every", c.train.stats_every, 0).means("Steps between per-position statistics (stats.csv, ranges.csv); 0: none.");
  integer("train.checkpoint_every", c.train.checkpoint_every, 0).means("Steps between checkpoints (checkpoint.bin); 0: only when the run stops (end, SIGINT, SIGTERM).");
  integer("train.threads", c.train.threads, 0, 1024).means("Math threads; 0: all cores.");
  choice("train.parallel", c.train.parallel, kParallelNames).means("How a training step uses two math threads or more. batch: each thread runs the forward and backward of its share of the batch's rows on its own copy of the model, the gradients added in thread order (the fastest; the last bits of a run then depend on the thread count; a batchnorm model runs ops). ops: every op splits its rows across the threads, and every sum over rows is cut where the thread count does not move the cuts (the same bits at any thread count, but for products that OpenBLAS runs: NORMTOOL_GEMM=openblas, or a CPU without AVX).");
  choice("train.precision", c.train.precision, kPrecisionNames).means("The number format of every value between ops and of every weight the forward reads: fp32, or bf16 and fp16 emulated by rounding (fp32 master weights and optimizer state; fp16 with dynamic loss scaling).");
  return f;
}

}  // namespace

DeepNorm deepnorm_single_stack(int N) { return {std::pow(2.0 * N, 0.25), std::pow(8.0 * N, -0.25)}; }
DeepNorm deepnorm_encdec_encoder(int N, int M) {
  const double nm = std::pow(double(N), 4) * M;
  return {0.81 * std::pow(nm, 1.0 / 16), 0.87 * std::pow(nm, -1.0 / 16)};
}
DeepNorm deepnorm_encdec_decoder(int, int M) { return {std::pow(3.0 * M, 0.25), std::pow(12.0 * M, -0.25)}; }
double torchscale_encoder_beta(int N, int M) { return 1.15 * std::pow(std::pow(double(N), 4) * M, -1.0 / 16); }
double glm130b_alpha(int N) { return std::sqrt(2.0 * N); }

DeepNorm RunConfig::deepnorm(StackRole stack) const {
  const int N = model.n_layers, M = model.dec_layers();
  const DeepNorm paper = arch_desc(model.arch).stacks != Stacks::encoder_decoder ? deepnorm_single_stack(N)
                         : stack == StackRole::encoder ? deepnorm_encdec_encoder(N, M)
                                                       : deepnorm_encdec_decoder(N, M);
  return {model.norm.alpha ? *model.norm.alpha : paper.alpha, model.norm.beta ? *model.norm.beta : paper.beta};
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

namespace {

// A layer of a config: a file's JSON or the overrides of one kind, and what its errors name.
struct Layer {
  json value;
  std::string source;
};

// A config file's text as a layer; its problem, if any, goes to `problems`.
std::optional<Layer> file_layer(const std::string& text, const std::string& source, std::vector<std::string>& problems) {
  UserJson parsed = parse_user_json(text);
  if (!parsed.problem.empty()) {
    problems.push_back(parsed.syntax ? fmt::format("{}: {}", source, parsed.problem)
                                     : fmt::format("{} ({})", parsed.problem, source));
    return std::nullopt;
  }
  json& user = parsed.value;
  if (!user.is_object()) {
    problems.push_back(fmt::format("{}: expected a JSON object at the top", source));
    return std::nullopt;
  }
  // "_sources" at the top is a config's citations (configs/presets/, cli/presets.h): never read as config
  if (auto it = user.find("_sources"); it != user.end()) {
    if (!it->is_object()) {
      problems.push_back(fmt::format("_sources: expected an object of citations, got {} ({})", describe(*it), source));
      return std::nullopt;
    }
    user.erase(it);
  }
  return Layer{std::move(user), source};
}

// The overrides of one kind ("override", "--set") as a layer, a later one of a key winning.
Layer override_layer(const std::vector<std::string>& overrides, const std::string& kind,
                     std::vector<std::string>& problems) {
  Layer layer{json::object(), kind};
  for (const auto& o : overrides) {
    std::string path;
    if (auto err = apply_override(layer.value, o, path, kind)) problems.push_back(*err);
  }
  return layer;
}

// The layers walked in order over the defaults, then the checks across keys.
RunConfig resolve(const std::vector<Layer>& layers, std::vector<std::string> problems, const std::string& name_source,
                  ConfigOrigins* origins) {
  RunConfig c;
  auto fields = fields_of(c);
  Parser parser(fields);
  parser.problems() = std::move(problems);  // an override that is not key.path=value, then the keys' own
  for (const Layer& l : layers) parser.walk(l.value, l.source);
  if (parser.problems().empty()) validate_combinations(c, parser);
  if (!parser.problems().empty()) throw ConfigError(parser.problems());
  if (c.name.empty()) c.name = name_source.empty() ? "run" : name_from_file(name_source);
  if (origins) *origins = parser.origins();
  return c;
}

std::string read_config_file(const std::string& path) {
  try {
    return read_file(path, kMaxDocumentBytes);  // a FIFO or /dev/zero is refused, not read forever
  } catch (const InputError& e) {  // "<path>: <why>"
    const std::string what = e.what(), why = what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : what;
    throw ConfigError({fmt::format("{}: cannot read the config file: {}", path, why)});
  }
}

}  // namespace

RunConfig load_config(const std::string& text, const std::string& source, const std::vector<std::string>& overrides) {
  std::vector<std::string> problems;
  std::vector<Layer> layers;
  if (auto l = file_layer(text, source, problems)) layers.push_back(std::move(*l));
  if (!problems.empty()) throw ConfigError(problems);  // the file's own problem first, alone
  layers.push_back(override_layer(overrides, "override", problems));
  return resolve(layers, problems, source, nullptr);
}

RunConfig load_config_file(const std::string& path, const std::vector<std::string>& overrides) {
  if (path.empty()) return load_configs({{}, overrides, {}});
  return load_config(read_config_file(path), path, overrides);
}

RunConfig load_configs(const ConfigInputs& in, ConfigOrigins* origins) {
  std::vector<std::string> problems;
  std::vector<Layer> layers;
  for (const std::string& f : in.files)
    if (auto l = file_layer(read_config_file(f), f, problems)) layers.push_back(std::move(*l));
  if (!problems.empty()) throw ConfigError(problems);
  layers.push_back(override_layer(in.overrides, "override", problems));
  layers.push_back(override_layer(in.sets, "--set", problems));
  return resolve(layers, problems, in.files.empty() ? "" : in.files.back(), origins);
}

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
