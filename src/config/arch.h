// The model families, each described once: its spelling in model.arch, what it learns from which
// datasets, the Transformer stacks it is made of, and what it allows. config/validate.cpp checks
// a config against its family's description, make_dataset (data/) reads the rows as its task says,
// and model/model.cpp builds the model from the same list. config/config.h only declares Arch, so
// that adding a family recompiles what names one.
//
// Adding a family: model/<id>.cpp, defining make_<id>(config, inputs, outputs) and
// <id>_shape(config, inputs, outputs) (model/shape.h), and one line in NT_FAMILIES.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "config/config.h"

namespace nt {

// What a family learns; the datasets it reads follow (data_kind).
enum class Task {
  causal_lm,  // the next byte at each position
  masked_lm,  // the masked bytes of unshifted rows (BERT; data/masked_lm.cpp)
  classify,   // a row's label
  seq2seq,    // the target of a (source, target) pair
};
constexpr DataKind data_kind(Task t) {
  return t == Task::classify ? DataKind::classification : t == Task::seq2seq ? DataKind::seq2seq : DataKind::lm;
}

// The Transformer stacks (model/blocks/stack.h) a family is made of. The embedding norm, attention
// heads and DeepNorm (a constant pair per stack, RunConfig::deepnorm) are a stack's.
enum class Stacks { none, decoder, encoder, encoder_decoder };

// A set of an enum's values, a bit per value.
template <class E, class... Es>
constexpr unsigned bits(E e, Es... es) {
  return ((1u << unsigned(e)) | ... | (1u << unsigned(es)));
}

// What a family allows of the keys that not every family reads.
struct Allows {
  unsigned placements;  // model.norm.placement's values; pre alone: its norm sites are fixed
  unsigned precisions;  // train.precision's values
  bool batch_norms;     // norms over the batch (Reduction::batch); else only norms over each row
  bool bias_off;        // model.bias false
  bool recurrent;       // model.d_emb (the embedding width) and model.init nematus
};
// pre and post, every norm, precision and bias setting.
inline constexpr Allows kEverything{bits(Placement::pre, Placement::post),
                                    bits(Precision::fp32, Precision::bf16, Precision::fp16), true, true, false};
// A Transformer stack's: every placement, peri (x + norm_out(f(norm_in(x))), Peri-LN) and reordered
// (x + norm(f(x)), OLMo 2) too.
inline constexpr Allows kStacked{bits(Placement::pre, Placement::post, Placement::peri, Placement::reordered),
                                 kEverything.precisions, true, true, false};
// Nematus's layout: norm sites fixed, norms over each row, its biases kept, fp32; its own embedding
// width and init.
inline constexpr Allows kNematus{bits(Placement::pre), bits(Precision::fp32), false, false, true};

// X(id, spelling, task, stacks, allows, about): one line per family, in the order messages and
// docs/config.md list them; `about` is the family in model.arch's text (normtool config).
#define NT_FAMILIES(X)                                                                                       \
  X(transformer, "transformer", Task::causal_lm, Stacks::decoder, kStacked, "decoder-only and causal")       \
  X(mlp, "mlp", Task::classify, Stacks::none, kEverything, "hidden layers Linear -> norm -> activation")     \
  X(encoder, "encoder", Task::masked_lm, Stacks::encoder, kStacked, "bidirectional, a BERT-style masked LM") \
  X(encoder_decoder, "encoder-decoder", Task::seq2seq, Stacks::encoder_decoder, kStacked,                    \
    "an encoder over the source and a causal decoder with cross-attention (seq2seq datasets)")               \
  X(rnn, "rnn", Task::causal_lm, Stacks::none, kNematus,                                                     \
    "a recurrent LM of model.n_layers stacked cells (model.cell)")                                           \
  X(rnnsearch, "rnnsearch", Task::seq2seq, Stacks::none, kNematus,                                           \
    "the GRU encoder-decoder with attention of the RMSNorm paper, in Nematus's layout (seq2seq datasets; "   \
    "one GRU each way in the encoder, two in the decoder: model.n_layers is not read)")                      \
  /* a new family: one line above */

#define NT_ARCH_ID(id, ...) id,
enum class Arch : unsigned char { NT_FAMILIES(NT_ARCH_ID) };
#undef NT_ARCH_ID
#define NT_ARCH_NAME(id, name, ...) name,
inline constexpr const char* kArchNames[] = {NT_FAMILIES(NT_ARCH_NAME)};
#undef NT_ARCH_NAME

struct ArchDesc {
  Arch arch;
  const char* name;  // as model.arch spells it
  Task task;
  Stacks stacks;
  Allows allows;
  const char* about;  // what it is, in a few words
  DataKind data() const { return data_kind(task); }
  bool has_stacks() const { return stacks != Stacks::none; }
};

#define NT_ARCH_DESC(id, name, task, stacks, allows, about) ArchDesc{Arch::id, name, task, stacks, allows, about},
inline constexpr ArchDesc kArchDescs[] = {NT_FAMILIES(NT_ARCH_DESC)};
#undef NT_ARCH_DESC

constexpr const ArchDesc& arch_desc(Arch a) { return kArchDescs[int(a)]; }
constexpr std::span<const ArchDesc> all_archs() { return kArchDescs; }

// The families whose description satisfies `has`, as "rnn|rnnsearch" (for messages).
template <class F>
std::string families_where(F has) {
  std::vector<const char*> names;
  for (const ArchDesc& a : all_archs())
    if (has(a)) names.push_back(a.name);
  return join_names(names);
}

}  // namespace nt
