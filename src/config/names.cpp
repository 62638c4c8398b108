// The names the config spells for each enum (config.h), and the norm kinds' from their descriptions.
#include <span>
#include <string>
#include <vector>

#include "config/arch.h"
#include "config/config.h"
#include "norms/norms.h"

namespace nt {

NormType default_norm_type() { return NormType::layernorm; }
Arch default_arch() { return Arch::transformer; }

std::span<const char* const> norm_type_names() {
  static const auto names = [] {
    std::vector<const char*> v;
    for (NormType k : all_norm_types()) v.push_back(to_string(k));
    return v;
  }();
  return names;
}

std::string join_names(std::span<const char* const> names) {
  std::string all;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) all += '|';
    all += names[i];
  }
  return all;
}

const char* to_string(DatasetKind v) { return kDatasetNames[int(v)]; }
const char* to_string(Placement v) { return kPlacementNames[int(v)]; }
const char* to_string(BnAxes v) { return kBnAxesNames[int(v)]; }
const char* to_string(Arch v) { return kArchNames[int(v)]; }
const char* to_string(Optimizer v) { return kOptimizerNames[int(v)]; }
const char* to_string(Schedule v) { return kScheduleNames[int(v)]; }
const char* to_string(Parallel v) { return kParallelNames[int(v)]; }
const char* to_string(Activation v) { return kActivationNames[int(v)]; }
const char* to_string(Layout v) { return kLayoutNames[int(v)]; }
const char* to_string(Init v) { return kInitNames[int(v)]; }
const char* to_string(Position v) { return kPositionNames[int(v)]; }
const char* to_string(QkNormScope v) { return kQkNormScopeNames[int(v)]; }
const char* to_string(Ffn v) { return kFfnNames[int(v)]; }
const char* to_string(RnnCell v) { return kCellNames[int(v)]; }
const char* to_string(NormImpl v) { return kNormImplNames[int(v)]; }
const char* to_string(Precision v) { return kPrecisionNames[int(v)]; }

}  // namespace nt
