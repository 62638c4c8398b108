#include "model/blocks/residual.h"
#include "norms/norms.h"

namespace nt {

Wiring wiring_of(const NormConfig& norm) {
  if (norm_desc(norm.type).scaled_residual) return Wiring::deepnorm;
  return norm.placement == Placement::post ? Wiring::post : Wiring::pre;
}

}  // namespace nt
