// A resolved config in one phrase, as the claims' setup paragraphs state their settings:
// "transformer, 4 layers, d 64, FFN 256, 4 heads, Pre-LN layernorm, init normal; fortunes, seq 64,
// batch 16; adam lr 0.001 (0.9, 0.999), constant, 600 steps". Only what the family reads.
#pragma once
#include <string>

namespace nt {

struct RunConfig;
std::string describe(const RunConfig& c);

}  // namespace nt
