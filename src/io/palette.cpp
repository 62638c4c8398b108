#include "io/palette.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "norms/norms.h"

namespace nt {

namespace {

// Okabe & Ito (2008), in the order that keeps the first curves of a plot most apart
constexpr std::array<const char*, 8> kPalette = {"#0072B2", "#D55E00", "#009E73", "#E69F00",
                                                 "#CC79A7", "#56B4E9", "#000000", "#999999"};

std::string norm_color(std::string_view norm) {
  for (NormType k : all_norm_types())
    if (norm_desc(k).name == norm && norm_desc(k).color) return norm_desc(k).color;
  return "";
}

}  // namespace

std::string norm_named_in(std::string_view title) {
  std::string found;
  std::size_t i = 0;
  while (i < title.size()) {
    std::size_t j = i;
    while (j < title.size() && std::isalnum(static_cast<unsigned char>(title[j]))) ++j;
    const std::string_view word = title.substr(i, j - i);
    if (!word.empty() && !norm_color(word).empty()) {
      if (!found.empty() && found != word) return "";
      found = word;
    }
    i = j + 1;
  }
  return found;
}

std::vector<Pen> pens_for(const std::vector<std::string>& titles, const std::vector<std::string>& colors) {
  std::map<std::string, int> curves_of;  // norm -> how many curves name it
  std::vector<std::string> norms;
  for (const std::string& t : titles) ++curves_of[norms.emplace_back(norm_named_in(t))];
  std::vector<Pen> pens(titles.size());
  std::map<std::string, int> uses;  // colour -> curves drawn in it
  for (std::size_t i = 0; i < titles.size(); ++i) {
    if (i < colors.size() && !colors[i].empty())
      pens[i].color = colors[i];
    else if (!norms[i].empty() && curves_of[norms[i]] == 1)
      pens[i].color = norm_color(norms[i]);
    if (!pens[i].color.empty()) ++uses[pens[i].color];
  }
  for (Pen& p : pens) {
    if (!p.color.empty()) continue;
    const char* least = kPalette[0];  // the first of the palette's least used colours
    for (const char* c : kPalette)
      if (uses[c] < uses[least]) least = c;
    p.color = least, p.dash = 1 + uses[least]++;
  }
  return pens;
}

}  // namespace nt
