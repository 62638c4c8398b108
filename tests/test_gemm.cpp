// The products (core/gemm.h) against a sum in double, over the shapes that exercise every path
// of normtool's kernel (core/gemm_kernel.h): row counts that leave 8-, 4- and 1-row blocks,
// widths that leave a one-vector panel and a masked tail, op(B) read in place or packed, both
// transposes, alpha, beta (C not read when 0: it holds NaN), a bias row, strides wider than the
// matrices, and rows split over two threads. And the math threads' subnormal flushing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/eigen.h"
#include "core/gemm.h"
#include "core/gemm_kernel.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/threads.h"

namespace nt {
namespace {

struct Case {
  bool ta, tb;
  int M, N, K;
  float alpha, beta;
  bool bias;
};

// Stored operands with 3 spare columns a row, so that a kernel that assumes lda == cols fails.
void check(const Case& c, int threads) {
  set_math_threads(threads);
  Rng rng(uint64_t(c.M * 1000003 + c.N * 1009 + c.K));
  const int a_rows = c.ta ? c.K : c.M, a_cols = c.ta ? c.M : c.K, b_rows = c.tb ? c.N : c.K, b_cols = c.tb ? c.K : c.N;
  const int lda = a_cols + 3, ldb = b_cols + 3, ldc = c.N + 3;
  std::vector<float> A(std::size_t(a_rows) * lda), B(std::size_t(b_rows) * ldb), bias(c.N);
  std::vector<float> C(std::size_t(c.M) * ldc);
  for (float& x : A) x = float(rng.normal());
  for (float& x : B) x = float(rng.normal());
  for (float& x : bias) x = float(rng.normal());
  for (float& x : C) x = c.beta == 0 ? std::numeric_limits<float>::quiet_NaN() : float(rng.normal());
  const std::vector<float> C0 = C;
  gemm(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc,
       c.bias ? bias.data() : nullptr);
  for (int i = 0; i < c.M; ++i) {
    for (int j = 0; j < c.N; ++j) {
      double sum = 0, magnitude = 0;
      for (int k = 0; k < c.K; ++k) {
        const double a = c.ta ? A[std::size_t(k) * lda + i] : A[std::size_t(i) * lda + k];
        const double b = c.tb ? B[std::size_t(j) * ldb + k] : B[std::size_t(k) * ldb + j];
        sum += a * b;
        magnitude += std::abs(a * b);
      }
      double want = c.alpha * sum + (c.bias ? bias[j] : 0.0);
      if (c.beta != 0) want += c.beta * double(C0[std::size_t(i) * ldc + j]);
      const double tol = 1e-6 * (std::abs(c.alpha) * magnitude + 4);
      ASSERT_NEAR(C[std::size_t(i) * ldc + j], want, tol)
          << "C(" << i << ", " << j << ") of ta " << c.ta << " tb " << c.tb << " M " << c.M << " N " << c.N << " K "
          << c.K << " beta " << c.beta << " bias " << c.bias << ", " << threads << " threads";
    }
    for (int j = c.N; j < ldc; ++j)  // the spare columns of C are not touched
      ASSERT_TRUE(std::isnan(C[std::size_t(i) * ldc + j])
                      ? std::isnan(C0[std::size_t(i) * ldc + j])
                      : C[std::size_t(i) * ldc + j] == C0[std::size_t(i) * ldc + j]);
  }
}

TEST(Gemm, MatchesASumInDoubleOnEveryPathOfTheKernel) {
  // M: 12-row blocks + 8 + 4 + 1 remainders (37 = 3*12 + 1; 32 = 2*12 + 8; 1028 = 85*12 + 8); at
  // two threads, an odd count of whole blocks and a remainder (128 = 10*12 + 8, 512 = 42*12 + 8);
  // N: two-vector panels, a one-vector panel, masked tails (10, 50, 19), in place (K N small, or N
  // at most 64: 32 x 2048) or packed (K N > 8192 and N over 64, or op(B) transposed); K from 1 to
  // 2048. Few rows (under four blocks a thread) with panels that split evenly go by panels at two
  // threads: 64, 50 and 90 rows, a masked tail in the last panel (120 columns).
  const std::vector<std::tuple<int, int, int>> shapes = {
      {1, 1, 1},      {37, 10, 5},   {32, 64, 16},    {32, 16, 64},   {13, 50, 19},  {64, 48, 32},  {1028, 64, 64},
      {96, 192, 128}, {24, 19, 700}, {256, 784, 128}, {64, 32, 2048}, {5, 256, 256}, {128, 64, 64}, {512, 64, 64},
      {128, 256, 64}, {64, 64, 128}, {64, 128, 400},  {50, 120, 64},  {90, 64, 96}};
  for (const auto& [M, N, K] : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check({ta, tb, M, N, K, 1.f, 0.f, false}, 1);
        check({ta, tb, M, N, K, 0.25f, 1.f, true}, 1);
        check({ta, tb, M, N, K, 1.f, 0.5f, false}, 1);
        check({ta, tb, M, N, K, 1.f, 0.f, true}, 2);
      }
}

TEST(Gemm, RowsAreTheSameForAnyThreadCount) {
  // the sum over k runs in order in every row block: one thread and two give the same bits,
  // whether the rows are cut between the threads (1028 rows) or the panels (a weight's gradient:
  // op(A) = X^T, 64 or 128 rows)
  for (const auto& [ta, M, N, K] :
       {std::tuple{false, 1028, 200, 300}, std::tuple{true, 64, 128, 400}, std::tuple{true, 128, 64, 400}}) {
    Rng rng(5);
    std::vector<float> A(std::size_t(M) * K), B(std::size_t(K) * N), bias(N);
    for (float& x : A) x = float(rng.normal());
    for (float& x : B) x = float(rng.normal());
    for (float& x : bias) x = float(rng.normal());
    std::vector<float> one(std::size_t(M) * N), two(std::size_t(M) * N);
    const int lda = ta ? M : K;
    set_math_threads(1);
    gemm(ta, false, M, N, K, 1.f, A.data(), lda, B.data(), N, 0.f, one.data(), N, bias.data());
    std::vector<float> other(B.size(), 3.f), scratch(one.size());  // the packing buffer now holds another B
    gemm(ta, false, M, N, K, 1.f, A.data(), lda, other.data(), N, 0.f, scratch.data(), N, bias.data());
    set_math_threads(2);
    gemm(ta, false, M, N, K, 1.f, A.data(), lda, B.data(), N, 0.f, two.data(), N, bias.data());
    set_math_threads(1);
    EXPECT_EQ(one, two) << M << " x " << N << " x " << K;
  }
}

TEST(Gemm, APreparedBGivesTheBitsOfPackingItAtEachCall) {
  // op(B) prepared once (core/gemm.h) and read by several products: the bits of gemm packing it
  // itself, where the kernel packs (transposed, or K N > 8192 with N over 64, or a masked tail) and
  // where it reads B in place (nothing to prepare), at one thread and at two (with AVX-512, 64 rows
  // and 4 panels go by panels, each thread its own), with and without beta and a bias. Once
  // prepared, B is overwritten with NaN: the products must read the panels alone.
  if (std::string_view(gemm_backend()).rfind("normtool", 0) != 0)
    GTEST_SKIP() << "preparing is the normtool kernel's (gemm_backend: " << gemm_backend() << ")";
  int prepared_shapes = 0;
  for (const auto& [M, N, K] : {std::tuple{32, 256, 128}, std::tuple{64, 128, 400}, std::tuple{7, 50, 19},
                                std::tuple{32, 64, 16}, std::tuple{1028, 200, 300}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int threads : {1, 2}) {
          set_math_threads(threads);
          Rng rng(uint64_t(M * 7919 + N * 31 + K));
          const int lda = ta ? M : K, ldb = tb ? K : N;
          std::vector<float> A(std::size_t(M) * K), B(std::size_t(K) * N), bias(N), C0(std::size_t(M) * N);
          for (auto* v : {&A, &B, &bias, &C0})
            for (float& x : *v) x = float(rng.normal());
          std::vector<float, Eigen::aligned_allocator<float>> prepared(
              std::max<std::size_t>(1, prepared_size<float>(tb, K, N)));
          const bool has = prepared_size<float>(tb, K, N) > 0;
          prepared_shapes += has;
          if (has) prepare_b(tb, K, N, B.data(), ldb, prepared.data());
          std::vector<float> nan_B(B.size(), std::numeric_limits<float>::quiet_NaN());
          for (const auto& [beta, with_bias] : {std::tuple{0.f, false}, std::tuple{0.5f, true}}) {
            std::vector<float> packed_here = C0, from_prepared = C0;
            const float* b = with_bias ? bias.data() : nullptr;
            gemm(ta, tb, M, N, K, 1.f, A.data(), lda, B.data(), ldb, beta, packed_here.data(), N, b);
            for (int call = 0; call < 2; ++call) {  // read twice: preparing is not consumed by a product
              from_prepared = C0;
              gemm(ta, tb, M, N, K, 1.f, A.data(), lda, has ? nan_B.data() : B.data(), ldb, beta,
                   from_prepared.data(), N, b, has ? prepared.data() : nullptr);
            }
            EXPECT_EQ(packed_here, from_prepared) << "ta " << ta << " tb " << tb << " M " << M << " N " << N << " K "
                                                  << K << " beta " << beta << ", " << threads << " threads";
          }
        }
  set_math_threads(1);
  EXPECT_GT(prepared_shapes, 0) << "nothing was prepared: the test shows nothing";
}

#ifdef __FMA__
TEST(Gemm, TheKernelSumsOverKInOrderToTheBitHoweverKIsCut) {
  // core/gemm_kernel.h: every entry of C is one chain of fused multiply-adds over k = 0..K-1,
  // whatever the row chunks and the passes over k (1024 at a time with AVX-512, 256 with AVX2) and
  // whether A is read in place or copied into strips (AVX-512: 8 panels or more, 4 with rows 4 KB
  // apart): K = 0, K on either side of a pass and across several, rows over several chunks, both
  // transposes, alpha, beta and a bias
  if (!gemm_kernel_available()) GTEST_SKIP() << "this build has no kernel of its own";
  set_math_threads(1);
  const std::vector<std::tuple<int, int, int>> shapes = {
      {5, 20, 0},     {7, 40, 1},     {37, 50, 255},  {64, 48, 256},   {13, 19, 257},
      {300, 64, 700}, {96, 33, 2048}, {1030, 64, 64}, {37, 300, 1025}, {30, 128, 1024}};
  for (const auto& [M, N, K] : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const auto& [alpha, beta, with_bias] : {std::tuple{1.f, 0.f, false}, std::tuple{0.25f, 0.5f, true}}) {
          Rng rng(uint64_t(M * 7919 + N * 31 + K));
          // (at least one entry: with K = 0 the kernel still forms its row pointers)
          std::vector<float> A(std::max(1, M * K)), B(std::max(1, K * N)), bias(N), C(std::size_t(M) * N);
          for (float& x : A) x = float(rng.normal());
          for (float& x : B) x = float(rng.normal());
          for (float& x : bias) x = float(rng.normal());
          for (float& x : C) x = float(rng.normal());
          const std::vector<float> C0 = C;
          const int lda = ta ? M : K, ldb = tb ? K : N;
          gemm_kernel(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), N,
                      with_bias ? bias.data() : nullptr);
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
              float sum = 0;
              for (int k = 0; k < K; ++k)
                sum = std::fma(ta ? A[std::size_t(k) * lda + i] : A[std::size_t(i) * lda + k],
                               tb ? B[std::size_t(j) * ldb + k] : B[std::size_t(k) * ldb + j], sum);
              float want = (alpha == 1.f ? sum : alpha * sum) + (with_bias ? bias[j] : 0.f);
              if (beta != 0.f) want = std::fma(beta, C0[std::size_t(i) * N + j], want);
              ASSERT_EQ(C[std::size_t(i) * N + j], want) << "C(" << i << ", " << j << ") of ta " << ta << " tb " << tb
                                                         << " M " << M << " N " << N << " K " << K;
            }
        }
}
#endif

TEST(MathThreads, SubnormalsAreFlushedOnEveryThread) {
  // core/threads.h: a subnormal operand reads as zero and a subnormal result is written as zero,
  // on the caller and on each thread of the pool (each chunk of parallel_chunks runs on its own)
  set_math_threads(2);
  std::vector<float> product(8192, -1.f), operand(8192, -1.f);
  std::vector<int> thread_of(8192, -1);
  volatile float tiny = 1e-30f, subnormal = std::numeric_limits<float>::denorm_min();
  parallel_chunks(8192, [&](int64_t begin, int64_t count) {
    for (int64_t i = begin; i < begin + count; ++i) {
      product[i] = tiny * 1e-10f;      // 1e-40: subnormal without FTZ
      operand[i] = subnormal * 1e30f;  // 1.4e-15 without DAZ
      thread_of[i] = omp_get_thread_num();
    }
  });
  EXPECT_EQ(std::set<int>(thread_of.begin(), thread_of.end()), (std::set<int>{0, 1}));
  for (std::size_t i = 0; i < product.size(); ++i) {
    ASSERT_EQ(product[i], 0.f) << i;
    ASSERT_EQ(operand[i], 0.f) << i;
  }
  EXPECT_EQ(tiny * 1e-10f, 0.f);
  set_math_threads(1);
}

TEST(MathThreads, TheWaitPolicySpinsABoundedTime) {
  // core/threads.h: OpenMP threads spin between a step's regions, but not for minutes
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spins = std::getenv("GOMP_SPINCOUNT");
  const std::string saved_policy = policy ? policy : "", saved_spins = spins ? spins : "";
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("GOMP_SPINCOUNT");
  tune_math_environment();
  EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "active");
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), "3M");
  setenv("OMP_WAIT_POLICY", "passive", 1);  // the user's choice is left as it is, spins included
  unsetenv("GOMP_SPINCOUNT");
  tune_math_environment();
  EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "passive");
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
  for (const auto& [name, value] :
       {std::pair{"OMP_WAIT_POLICY", saved_policy}, std::pair{"GOMP_SPINCOUNT", saved_spins}})
    value.empty() ? unsetenv(name) : setenv(name, value.c_str(), 1);
}

TEST(Gemm, TransposeMovesEveryEntryAndNothingElse) {
  // whole vector tiles, partial ones on either edge, one row, one column; strides wider than the rows
  for (const auto& [rows, cols] :
       std::vector<std::pair<int, int>>{{1, 1}, {1, 40}, {40, 1}, {16, 16}, {64, 32}, {33, 47}, {128, 16}, {7, 100}}) {
    const int lds = cols + 5, ldd = rows + 3;
    std::vector<float> src(std::size_t(rows) * lds), dst(std::size_t(cols) * ldd, -1.f);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = float(i);
    transpose(src.data(), rows, cols, lds, dst.data(), ldd);
    for (int c = 0; c < cols; ++c)
      for (int r = 0; r < ldd; ++r)
        ASSERT_EQ(dst[std::size_t(c) * ldd + r], r < rows ? src[std::size_t(r) * lds + c] : -1.f)
            << rows << " x " << cols << ": (" << c << ", " << r << ")";
  }
}

}  // namespace
}  // namespace nt
