// The activations the config names (model.activation), apart from ops/ops.h so that config/
// can include them without the ops' templates.
#pragma once

namespace nt {

enum class Activation { relu, gelu, tanh, silu };
inline constexpr const char* kActivationNames[] = {"relu", "gelu", "tanh", "silu"};  // as the config spells them

}  // namespace nt
