// The one palette of every picture: Okabe and Ito's eight colours, which stay apart under the
// common colour-vision deficiencies, and a fixed colour per norm (its description's, norms/norms.h),
// so that LayerNorm is the same blue in every plot.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace nt {

// The norm a curve's title names (a word of it that is a norm's name: "rmsnorm", "norm.type=rmsnorm
// seed=2"), "" when it names none or more than one.
std::string norm_named_in(std::string_view title);

// A colour ("#rrggbb") and a dash type (1 solid, 2 dashed, ...) per curve title, in order. A curve
// that names a norm no other curve names gets the norm's colour; a curve with an explicit colour
// keeps it; the rest take the palette's colours in order, skipping those the plot already uses,
// and dashes once the palette runs out.
struct Pen {
  std::string color;
  int dash = 1;
};
std::vector<Pen> pens_for(const std::vector<std::string>& titles, const std::vector<std::string>& colors = {});

}  // namespace nt
