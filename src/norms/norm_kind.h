// The kinds a norm site can apply, as the config's model.norm.type spells them. NT_NORM_TYPES is
// the one list to extend when adding a norm: it generates the enum here and the list of
// descriptions in norms.cpp (each description, norms/norms.h, sits in its norm's file). This
// header is all the config and the models need to name a kind; it stays small, and
// config/config.h only forward-declares the enum, so adding a kind recompiles what names kinds,
// not the whole tree.
#pragma once

#include <iosfwd>

namespace nt {

// X(id, description): in the config's order (its error messages list the names so); each kind's
// name is its description's (to_string below), and its file is norms/<id>.cpp (deepnorm's is
// layernorm.cpp, none's norms.cpp).
#define NT_NORM_TYPES(X)     \
  X(none, kNoneDesc)         \
  X(batchnorm, kBatchNormDesc) \
  X(layernorm, kLayerNormDesc) \
  X(rmsnorm, kRMSNormDesc)   \
  X(deepnorm, kDeepNormDesc) \
  X(prmsnorm, kPRMSNormDesc) \
  X(scalenorm, kScaleNormDesc) \
  X(dyt, kDyTDesc)           \
  /* a new norm: one line above */

#define NT_NORM_TYPE_ID(id, desc) id,
enum class NormType : unsigned char { NT_NORM_TYPES(NT_NORM_TYPE_ID) };
#undef NT_NORM_TYPE_ID
#define NT_NORM_TYPE_ONE(id, desc) +1
inline constexpr int kNormTypeCount = 0 NT_NORM_TYPES(NT_NORM_TYPE_ONE);
#undef NT_NORM_TYPE_ONE

const char* to_string(NormType k);  // "layernorm", from its description
// Printed by name, in streams and in GoogleTest's messages. config/config.h declares it beside its
// declaration of the enum, so that every file that sees the enum prints it the same way.
std::ostream& operator<<(std::ostream& os, NormType k);

}  // namespace nt
