// normtool's benchmarks (Google Benchmark): the GEMM shapes of the configs, the norms'
// forward+backward, causal attention, softmax-cross-entropy and whole training steps.
// Figures are throughput (GFLOP/s for products, GB/s for the memory-bound norms) and, in
// the counters pct_peak / pct_bw, the fraction of this machine's own limits, measured at
// start-up (see machine_limits()): the best single-core SGEMM rate over 1024^3 products, in the
// kernel `linear` runs (normtool's own; NORMTOOL_GEMM=openblas with OPENBLAS_CORETYPE=SkylakeX
// times OpenBLAS's AVX-512 one instead), and the STREAM-style triad bandwidth a[i] = b[i] + s c[i]
// on 64 MiB arrays.
//
//   build/bench/normtool_bench                         everything
//   build/bench/normtool_bench --benchmark_filter=Norm  the norms only
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "config/config.h"
#include "core/aligned.h"
#include "core/gemm.h"
#include "core/graph.h"
#include "core/number_format.h"
#include "core/rng.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "io/paths.h"
#include "model/model.h"
#include "norms/norms.h"
#include "ops/ops.h"
#include "train/session.h"

namespace nt {
namespace {

struct Limits {
  double gflops = 0, gbs = 0;
};

double seconds_of(auto&& f, int reps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const Limits& machine_limits() {
  static const Limits limits = [] {
    set_math_threads(1);
    Limits l;
    const int n = 1024;
    AlignedVector<float> a(n * n, 1.0f), b(n * n, 0.5f);
    Graph<float> g(true, false);
    auto product = [&] {
      g.reset();
      linear(g, Tensor<float>{a.data(), nullptr, n, n}, Tensor<float>{b.data(), nullptr, n, n}, Tensor<float>{});
    };
    product();  // the arena's pages touched and the clock up before timing
    for (int rep = 0; rep < 5; ++rep) {
      const double s = seconds_of(product, 5);
      l.gflops = std::max(l.gflops, 5 * 2.0 * n * n * n / s / 1e9);
    }
    const std::size_t m = 16 << 20;  // floats: 64 MiB per array
    AlignedVector<float> x(m, 1.0f), y(m, 2.0f), z(m, 0.0f);
    for (int rep = 0; rep < 5; ++rep) {
      const double s = seconds_of(
          [&] {
            for (std::size_t i = 0; i < m; ++i) z[i] = x[i] + 0.5f * y[i];
          },
          3);
      l.gbs = std::max(l.gbs, 3 * 3.0 * sizeof(float) * m / s / 1e9);
      benchmark::DoNotOptimize(z.data());
    }
    return l;
  }();
  return limits;
}

AlignedVector<float> random_vector(std::size_t n, uint64_t seed, float scale = 1.0f) {
  Rng rng(seed);
  AlignedVector<float> v(n);
  for (auto& x : v) x = float(scale * rng.normal());
  return v;
}

struct Leaf {
  AlignedVector<float> data, grad;
  int rows, cols;
  Leaf(int r, int c, uint64_t seed) : data(random_vector(std::size_t(r) * c, seed)), grad(data.size()), rows(r), cols(c) {}
  Tensor<float> t() { return {data.data(), grad.data(), rows, cols}; }
};

// The upstream gradient of a benchmarked op: a fixed buffer copied in (as cheap as it gets).
void seed_grad(Graph<float>& g, Tensor<float> y) {
  static AlignedVector<float> dy;
  if (dy.size() < std::size_t(y.size())) dy = random_vector(y.size(), 9, 1e-3f);
  std::memcpy(g.seed(y), dy.data(), sizeof(float) * y.size());
}

// ---- products: y = x W^T forward and backward, the shapes of the configs ----
void BM_Linear(benchmark::State& s) {
  set_math_threads(int(s.range(3)));
  const int N = int(s.range(0)), in = int(s.range(1)), out = int(s.range(2));
  Leaf x(N, in, 1), w(out, in, 2), b(1, out, 3);
  Graph<float> g;
  for (auto _ : s) {
    g.reset();
    Tensor<float> y = linear(g, x.t(), w.t(), b.t());
    seed_grad(g, y);
    g.backward(Tensor<float>{});
  }
  const double flops = 3 * 2.0 * N * in * out;  // forward, dx, dW
  s.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  s.counters["pct_peak"] = benchmark::Counter(flops / 1e9 / machine_limits().gflops / s.range(3) * 100,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
// lm-tiny (N = 16*64): qkv/out 64->64, fc1 64->256, fc2 256->64, head 64->256;
// lm-small (N = 16*128): 128->128, 128->512, 512->128, 128->256; lm-deep18 (N = 16*64): 64->192, 64->64,
// 64->128, 128->64, 64->256; mlp-fmnist (N = 128): 784->256, 256->256, 256->10
BENCHMARK(BM_Linear)
    ->ArgNames({"N", "in", "out", "threads"})
    ->Args({1024, 64, 64, 1})->Args({1024, 64, 256, 1})->Args({1024, 256, 64, 1})
    ->Args({1024, 64, 192, 1})->Args({1024, 64, 128, 1})->Args({1024, 128, 64, 1})
    ->Args({2048, 128, 128, 1})->Args({2048, 128, 512, 1})->Args({2048, 512, 128, 1})->Args({2048, 128, 256, 1})
    ->Args({2048, 128, 512, 2})->Args({2048, 512, 128, 2})
    ->Args({128, 784, 256, 1})->Args({128, 256, 256, 1})->Args({128, 256, 10, 1})
    ->Unit(benchmark::kMicrosecond);

// ---- the AVX512-BF16 question (docs/performance.md): y = x W^T in fp32 (normtool's kernel) and with
// VDPBF16PS on the same operands rounded to bf16, conversions and packing included, one thread ----
void BM_ProductFp32(benchmark::State& s) {
  set_math_threads(1);
  const int N = int(s.range(0)), in = int(s.range(1)), out = int(s.range(2));
  Leaf x(N, in, 1), w(out, in, 2);
  AlignedVector<float> y(std::size_t(N) * out);
  for (auto _ : s) {
    gemm<float>(false, true, N, out, in, 1.0f, x.t().data, in, w.t().data, in, 0.0f, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  s.counters["GFLOP/s"] = benchmark::Counter(2.0 * N * in * out, benchmark::Counter::kIsIterationInvariantRate,
                                             benchmark::Counter::kIs1000);
}

#if defined(__AVX512BF16__)
// x (N, K) and W (out, K) to bf16 (VCVTNE2PS2BF16, round to nearest even); W^T packed in panels of 32
// columns, each (K/2) x 32 pairs (k, k+1); then 12 rows x 32 columns of fp32 sums in registers while k
// runs two at a time (VDPBF16PS: 2 products a lane). K even, out a multiple of 32, N of 12: the shapes below.
void bf16_product(int N, int K, int out, const float* x, const float* w, uint16_t* xb, uint32_t* wp, float* y) {
  auto to_bf16 = [](const float* src, uint16_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; i += 32) {
      const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + i + 16), _mm512_loadu_ps(src + i));
      _mm512_storeu_si512(dst + i, __m512i(v));
    }
  };
  to_bf16(x, xb, int64_t(N) * K);
  const int K2 = K / 2;
  static thread_local std::vector<uint16_t> wb;
  wb.resize(std::size_t(out) * K);
  to_bf16(w, wb.data(), int64_t(out) * K);
  const uint32_t* w32 = reinterpret_cast<const uint32_t*>(wb.data());
  for (int j0 = 0; j0 < out; j0 += 32)
    for (int k = 0; k < K2; ++k)
      for (int c = 0; c < 32; ++c) wp[int64_t(j0) * K2 + int64_t(k) * 32 + c] = w32[int64_t(j0 + c) * K2 + k];
  const uint32_t* x32 = reinterpret_cast<const uint32_t*>(xb);
  for (int j0 = 0; j0 < out; j0 += 32) {
    const uint32_t* panel = wp + int64_t(j0) * K2;
    for (int i0 = 0; i0 < N; i0 += 12) {
      __m512 acc[12][2];
      for (auto& r : acc) r[0] = r[1] = _mm512_setzero_ps();
      for (int k = 0; k < K2; ++k) {
        const __m512bh b0 = __m512bh(_mm512_loadu_si512(panel + int64_t(k) * 32));
        const __m512bh b1 = __m512bh(_mm512_loadu_si512(panel + int64_t(k) * 32 + 16));
        for (int r = 0; r < 12; ++r) {
          const __m512bh a = __m512bh(_mm512_set1_epi32(int(x32[int64_t(i0 + r) * K2 + k])));
          acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, b0);
          acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a, b1);
        }
      }
      for (int r = 0; r < 12; ++r) {
        _mm512_storeu_ps(y + int64_t(i0 + r) * out + j0, acc[r][0]);
        _mm512_storeu_ps(y + int64_t(i0 + r) * out + j0 + 16, acc[r][1]);
      }
    }
  }
}

void BM_ProductBf16(benchmark::State& s) {
  const int N = int(s.range(0)), in = int(s.range(1)), out = int(s.range(2));
  Leaf x(N, in, 1), w(out, in, 2);
  std::vector<uint16_t> xb(std::size_t(N) * in);
  std::vector<uint32_t> wp(std::size_t(out) * in / 2);
  AlignedVector<float> y(std::size_t(N) * out), ref(std::size_t(N) * out);
  for (auto _ : s) {
    bf16_product(N, in, out, x.t().data, w.t().data, xb.data(), wp.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  // the same product in fp32 on the operands rounded to bf16: how far VDPBF16PS's sums are from it
  std::vector<float> xr(x.t().data, x.t().data + x.t().size()), wr(w.t().data, w.t().data + w.t().size());
  round_in_place(Precision::bf16, xr.data(), xr.size());
  round_in_place(Precision::bf16, wr.data(), wr.size());
  gemm<float>(false, true, N, out, in, 1.0f, xr.data(), in, wr.data(), in, 0.0f, ref.data(), out);
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < y.size(); ++i) err = std::max(err, double(std::abs(y[i] - ref[i]))), norm = std::max(norm, double(std::abs(ref[i])));
  s.counters["GFLOP/s"] = benchmark::Counter(2.0 * N * in * out, benchmark::Counter::kIsIterationInvariantRate,
                                             benchmark::Counter::kIs1000);
  s.counters["max_rel_diff"] = err / norm;
}
#endif

// lm-tiny's products (N = 16*64): 64->64 (out; q, k, v one 64->192), fc1 64->256, fc2 256->64,
// head 64->256; lm-small's (N = 16*128): 128->128, 128->512, 512->128 (N rounded to 12's multiple)
#define NORMTOOL_PRODUCT_SHAPES                                                                      \
  ArgNames({"N", "in", "out"})->Args({1020, 64, 64})->Args({1020, 64, 192})->Args({1020, 64, 256})  \
      ->Args({1020, 256, 64})->Args({2040, 128, 128})->Args({2040, 128, 512})->Args({2040, 512, 128}) \
      ->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_ProductFp32)->NORMTOOL_PRODUCT_SHAPES;
#if defined(__AVX512BF16__)
BENCHMARK(BM_ProductBf16)->NORMTOOL_PRODUCT_SHAPES;
#endif

// ---- norms: forward + backward; bytes = what a fused op must at least move ----
template <int kind>  // 0 layernorm, 1 rmsnorm, 2 batchnorm
void BM_Norm(benchmark::State& s) {
  set_math_threads(1);
  const int N = int(s.range(0)), C = int(s.range(1));
  Leaf x(N, C, 1), gamma(1, C, 2), beta(1, C, 3);
  Graph<float> g;
  for (auto _ : s) {
    g.reset();
    Tensor<float> y = kind == 0   ? layernorm(g, x.t(), gamma.t(), beta.t(), 1e-5f)
                      : kind == 1 ? rmsnorm(g, x.t(), gamma.t(), 1e-5f)
                                  : batchnorm(g, x.t(), gamma.t(), beta.t(), 1, 1e-5f, BatchNormState<float>{});
    seed_grad(g, y);
    g.backward(Tensor<float>{});
  }
  // forward reads x, writes y; backward reads x, dy, writes dx (+=, so reads it too)
  const double bytes = 6.0 * sizeof(float) * N * C;
  s.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  s.counters["pct_bw"] = benchmark::Counter(bytes / 1e9 / machine_limits().gbs * 100, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Norm<0>)->Name("BM_Norm/layernorm")->ArgNames({"N", "C"})->Args({4096, 512})->Args({1024, 64})->Args({2048, 128})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Norm<1>)->Name("BM_Norm/rmsnorm")->ArgNames({"N", "C"})->Args({4096, 512})->Args({1024, 64})->Args({2048, 128})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Norm<2>)->Name("BM_Norm/batchnorm")->ArgNames({"N", "C"})->Args({4096, 512})->Args({1024, 64})->Args({128, 256})->Unit(benchmark::kMicrosecond);

// ---- causal attention, forward + backward: q, k, v (B*NH*T, hs) ----
void BM_Attention(benchmark::State& s) {
  set_math_threads(int(s.range(3)));
  const int BH = int(s.range(0)), T = int(s.range(1)), hs = int(s.range(2));
  Leaf q(BH * T, hs, 1), k(BH * T, hs, 2), v(BH * T, hs, 3);
  Graph<float> g;
  for (auto _ : s) {
    g.reset();
    Tensor<float> o = causal_attention(g, q.t(), k.t(), v.t(), BH, T);
    seed_grad(g, o);
    g.backward(Tensor<float>{});
  }
  const double flops = 6 * 2.0 * BH * T * T * hs;  // QK^T, PV forward; 4 products backward
  s.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Attention)->ArgNames({"BH", "T", "hs", "threads"})->Args({32, 64, 32, 1})->Args({64, 64, 16, 1})->Args({64, 128, 32, 1})->Args({64, 128, 32, 2})->Unit(benchmark::kMicrosecond);

// ---- softmax cross-entropy over 256 bytes ----
void BM_CrossEntropy(benchmark::State& s) {
  set_math_threads(1);
  const int N = int(s.range(0)), V = int(s.range(1));
  Leaf logits(N, V, 1);
  std::vector<int32_t> targets(N);
  for (int i = 0; i < N; ++i) targets[i] = (i * 7) % V;
  Graph<float> g;
  for (auto _ : s) {
    g.reset();
    g.backward(cross_entropy(g, logits.t(), targets.data(), Tensor<float>{}));
  }
  s.counters["GB/s"] = benchmark::Counter(3.0 * sizeof(float) * N * V, benchmark::Counter::kIsIterationInvariantRate,
                                          benchmark::Counter::kIs1000);
}
BENCHMARK(BM_CrossEntropy)->ArgNames({"N", "V"})->Args({1024, 256})->Args({2048, 256})->Unit(benchmark::kMicrosecond);

// ---- one whole training step of a config: forward, loss, backward, clipping, update ----
void BM_TrainStep(benchmark::State& s, const char* config, std::vector<std::string> overrides) {
  overrides.push_back("train.threads=" + std::to_string(s.range(0)));
  const RunConfig c = load_config_file(config_path(config), overrides);
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(c);
  } catch (const DataError& e) {
    s.SkipWithError(e.what());
    return;
  }
  session->next_batch();
  const Batch batch = session->batch();
  for (auto _ : s) session->step_on(batch);
  s.counters["threads"] = session->threads();
  s.counters["tokens/s"] = benchmark::Counter(double(c.train.batch_size) * (c.is_lm() ? c.data.seq_len : 1),
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_TrainStep, lm_tiny, "lm-tiny.json", {})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(0.5);
BENCHMARK_CAPTURE(BM_TrainStep, lm_tiny_bf16, "lm-tiny.json", {"train.precision=bf16"})->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(0.5);
BENCHMARK_CAPTURE(BM_TrainStep, lm_tiny_fp16, "lm-tiny.json", {"train.precision=fp16"})->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(0.5);
BENCHMARK_CAPTURE(BM_TrainStep, lm_tiny_rmsnorm, "lm-tiny.json", {"model.norm.type=rmsnorm"})->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(0.5);
// model.position rotary and model.ffn glu (SwiGLU: fc3 adds half the feed-forward's products)
BENCHMARK_CAPTURE(BM_TrainStep, lm_tiny_rotary, "lm-tiny.json", {"model.position=rotary"})->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(0.5);
BENCHMARK_CAPTURE(BM_TrainStep, lm_tiny_swiglu, "lm-tiny.json", {"model.ffn=glu", "model.activation=silu"})->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(0.5);
BENCHMARK_CAPTURE(BM_TrainStep, lm_small, "lm-small.json", {})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(1)->MinTime(3);
BENCHMARK_CAPTURE(BM_TrainStep, mlp_fmnist, "mlp-fmnist.json", {})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(0.5);
BENCHMARK_CAPTURE(BM_TrainStep, lm_deep18, "lm-deep18.json", {})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinWarmUpTime(1)->MinTime(2);

void BM_MachineLimits(benchmark::State& s) {
  for (auto _ : s) benchmark::DoNotOptimize(machine_limits());
  s.counters["sgemm_peak_GFLOP/s"] = machine_limits().gflops;
  s.counters["triad_GB/s"] = machine_limits().gbs;
}
BENCHMARK(BM_MachineLimits)->Iterations(1);

}  // namespace
}  // namespace nt

// The settings the math libraries read when they load (core/threads.h), as normtool sets them.
int main(int argc, char** argv) {
  if (nt::tune_math_environment()) execv("/proc/self/exe", argv);
  benchmark::AddCustomContext("gemm_kernels", nt::gemm_backend());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
