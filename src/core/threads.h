// The number of math threads: OpenMP (normtool's own loops, Eigen) and OpenBLAS, whose
// pthread pool ignores OpenMP's setting. 0 = all cores.
#pragma once

namespace nt {

// Sets every pool and returns the count in effect.
int set_math_threads(int threads);

}  // namespace nt
