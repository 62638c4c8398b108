// The S-shape of a norm's input-output map (Zhu et al. 2025, "Transformers without Normalization"
// §3, Fig. 2): least-squares fits to points (x, y) of y = a tanh(b x) and of the line y = a x + b,
// each with its R^2 = 1 - SSE / sum (y - mean y)^2.
#pragma once
#include <vector>

namespace nt {

struct CurveFit {
  double a = 0, b = 0;  // tanh: y = a tanh(b x), b > 0; line: y = a x + b
  double r2 = 0;
};

CurveFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// For each b the best a is closed-form, a = sum y t / sum t^2 with t = tanh(b x); b is searched on a
// log grid from 1e-3 to 1e3 over the RMS of x (b -> 0 is the line through the origin), then refined
// by golden section between the best grid point's neighbours.
CurveFit fit_tanh(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace nt
