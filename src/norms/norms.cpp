// The list of the norm kinds' descriptions, in the order of NormType (norm_kind.h), and the
// none kind's, which has no file of its own. Each other description sits in its norm's file.
#include <array>
#include <ostream>
#include <stdexcept>
#include <string>

#include "norms/norms.h"

namespace nt {

namespace {

template <class T>
Tensor<T> identity(Graph<T>&, Tensor<T> x, const NormArgs<T>&) {
  return x;
}

}  // namespace

extern const NormDesc kNoneDesc = {
    .name = "none",
    .gain = ParamShape::absent,
    .bias = ParamShape::absent,
    .gain_init = gain_one,
    .reduction = Reduction::nothing,
    .f32 = {identity<float>, identity<float>},
    .f64 = {identity<double>, identity<double>},
    .invariances = {
        .weight_rescale = {false, "without a norm the output is W x itself, scaled by delta"},
        .weight_recenter = {false, "without a norm the output shifts by g.x"},
        .weight_vector_rescale = {false, "without a norm unit 0's output scales by delta"},
        .data_rescale = {false, "without a norm the output scales by delta"},
        .data_recenter = {false, "without a norm the output shifts by W c"},
        .case_rescale = {false, "without a norm case 0's output scales by delta"},
    },
    .color = "#000000",
};

#define NT_NORM_DESC_DECLARE(id, desc) extern const NormDesc desc;
NT_NORM_TYPES(NT_NORM_DESC_DECLARE)
#undef NT_NORM_DESC_DECLARE

namespace {
// In NormType's order, from the same list.
#define NT_NORM_DESC_ADDRESS(id, desc) &desc,
constexpr auto kDescs = std::to_array<const NormDesc*>({NT_NORM_TYPES(NT_NORM_DESC_ADDRESS)});
#undef NT_NORM_DESC_ADDRESS
static_assert(kDescs.size() == std::size_t(kNormTypeCount));
constexpr auto kTypes = [] {
  std::array<NormType, kDescs.size()> t{};
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = NormType(i);
  return t;
}();
}  // namespace

const NormDesc& norm_desc(NormType k) { return *kDescs.at(std::size_t(k)); }
std::span<const NormType> all_norm_types() { return kTypes; }
const char* to_string(NormType k) { return norm_desc(k).name; }
std::ostream& operator<<(std::ostream& os, NormType k) { return os << to_string(k); }
NormType norm_type_named(std::string_view name) {
  for (NormType k : kTypes)
    if (name == to_string(k)) return k;
  throw std::invalid_argument("no norm type \"" + std::string(name) + "\"");
}

}  // namespace nt
