#include "model/blocks/residual.h"
#include "core/check.h"
#include "norms/norms.h"

namespace nt {

Wiring wiring_of(const NormConfig& norm) {
  if (norm_desc(norm.type).scaled_residual) return Wiring::deepnorm;
  switch (norm.placement) {
    case Placement::post: return Wiring::post;
    case Placement::peri: return Wiring::peri;
    case Placement::reordered: return Wiring::reordered;
    case Placement::pre: break;
  }
  return Wiring::pre;
}

bool has_final_norm(const ModelConfig& m) {
  const Wiring w = wiring_of(m.norm);
  return (w == Wiring::pre || w == Wiring::peri || w == Wiring::reordered) && m.final_norm;
}

Residual::Residual(ParamStore<float>& params, const NormConfig& norm, float alpha, Precision precision, int layer,
                   const std::string& name, const char* place, int C, int positions, const std::string& out_name,
                   const char* out_place)
    : wiring_(wiring_of(norm)), alpha_(alpha), precision_(precision),
      norm_(params, norm, layer, name, place, C, positions, depth_factor(norm, layer)) {
  if (wiring_ != Wiring::peri) return;
  NT_CHECK(out_place != nullptr, "a peri residual needs its output norm's site");
  out_norm_.emplace(params, norm, layer, out_name, out_place, C, positions);
}

void Residual::init(ParamStore<float>& params) {
  norm_.init(params);
  if (out_norm_) out_norm_->init(params);
}

void Residual::add_buffers(std::vector<std::vector<float>*>& out) {
  norm_.add_buffers(out);
  if (out_norm_) out_norm_->add_buffers(out);
}

}  // namespace nt
