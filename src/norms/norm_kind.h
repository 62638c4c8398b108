// The kinds a norm site can apply, as the config's model.norm.type spells them: the one list to
// extend when adding a norm (its description, norms/norms.h, sits in its own file; norms.cpp
// collects them). This header is all the config and the models need to name a kind; it stays
// small, and config/config.h only forward-declares the enum, so adding a kind recompiles what
// names kinds, not the whole tree.
#pragma once

namespace nt {

// In the config's order (its error messages list the names so); each kind's name is its
// description's (to_string below), and its file is norms/<name>.cpp (deepnorm: layernorm.cpp).
enum class NormType : unsigned char { none, batchnorm, layernorm, rmsnorm, deepnorm, prmsnorm, scalenorm };

const char* to_string(NormType k);  // "layernorm", from its description

}  // namespace nt
