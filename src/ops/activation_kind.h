// The activations the config names (model.activation), apart from ops/ops.h so that config/
// can include them without the ops' templates.
#pragma once

namespace nt {

enum class Activation { relu, gelu, tanh };
inline constexpr const char* kActivationNames[] = {"relu", "gelu", "tanh"};  // as the config spells them

}  // namespace nt
