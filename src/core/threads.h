// The math runtime: OpenMP (normtool's own loops, Eigen) and OpenBLAS.
//
// tune_math_environment(), first thing in main(): the settings both libraries read once, when
// they load, so a changed setting needs the process to start again (main() re-executes itself):
//   OMP_WAIT_POLICY=active    a step is hundreds of short parallel regions; threads asleep
//                             between them wake too late (two threads 1.3-1.8x one, spinning 1.8x)
//   GOMP_SPINCOUNT=3M         ...but bounded: active alone spins 30 billion times (minutes) before
//                             sleeping, and a `reproduce` whose in-process claims had used two
//                             threads spun on through the sweeps it started, taking a core from
//                             their runs (C8's quick runs 56 ms a step against 30). 3M spins are a
//                             fraction of a second; a 2-thread lm-tiny step is as fast (8.2-8.5 ms)
//   OPENBLAS_CORETYPE=SkylakeX  when the CPU has AVX-512 (F, BW, DQ, VL): Debian's 0.3.21 takes a
//                             Zen 5 for Haswell and this Xeon for Prescott, and runs narrower
//                             kernels (118 GFLOP/s on one core against 239 with its AVX-512 ones).
//                             Set without asking OpenBLAS, which is loaded only when a product
//                             needs it (core/openblas.h)
// None is touched when the user has set it (nor GOMP_SPINCOUNT when OMP_WAIT_POLICY is the
// user's). If OpenBLAS still runs AVX2 kernels on an AVX-512 CPU (OPENBLAS_CORETYPE set so), the
// products run in Eigen's AVX-512 kernels instead (core/gemm.h).
#pragma once

namespace nt {

// Sets what is missing; true when something changed and the process should re-execute itself.
bool tune_math_environment();

// OpenBLAS's kernel family ("SkylakeX", "Haswell", ...; "none" when it is not loaded,
// core/openblas.h), which loads it.
const char* openblas_core();
bool openblas_runs_avx512();

// Sets every pool (Eigen's to one: core/gemm.cpp splits Eigen's products over the OpenMP threads
// itself) and returns the count in effect: 0 = all cores; more than max_math_threads()
// (4 per core: beyond that threads only wait for each other, and a thousand OpenBLAS threads
// under a memory limit hung the process) is capped there. It also flushes subnormal floats to zero
// on the calling thread and every OpenMP thread (below).
int set_math_threads(int threads);
// The count set_math_threads(threads) puts in effect, without setting it.
int math_threads_for(int threads);

// Subnormal floats (|x| < 2^-126) read and written as zero, MXCSR's FTZ and DAZ bits, as
// torch.set_flush_denormal(True): an operation on a subnormal costs ~100 cycles on Intel cores.
// SGD's momentum of a weight whose input is almost always zero (fashion-mnist's border pixels)
// decays through the subnormal range between the rare batches that touch it: a batch-2 MLP's
// step went from 1 ms to 6 ms over 15000 steps on a Xeon. Values this small never matter to
// training, and bf16's subnormals are rounded by integer arithmetic (core/number_format.h). A
// no-op off x86-64.
void flush_subnormals();
int max_math_threads();

}  // namespace nt
