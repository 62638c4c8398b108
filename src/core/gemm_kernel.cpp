#include "core/gemm_kernel.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/eigen.h"

namespace nt {

#ifdef __AVX__

namespace {

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int PS = Eigen::internal::packet_traits<float>::size;  // floats in a vector: 16 (AVX-512) or 8
using Mask = std::conditional_t<PS == 16, uint16_t, uint8_t>;
constexpr int MR = PS == 16 ? 12 : 6;  // 12 x 2 sums in 32 registers (AVX-512), 6 x 2 in 16 (AVX2)
constexpr int NR = 2 * PS;             // a panel's width

// k in passes of KC: a panel's KC x NR slice (16 KB with AVX2, 32 KB with AVX-512) stays in L1
// while a chunk's blocks run over it. A's rows in chunks of about kChunk bytes a pass, which stay
// in L2 while the panels go by. Without them a weight's gradient (K the batch's rows: lm-small's
// is 384 x 2048 times 2048 x 128) read all of A from L3 once a panel.
constexpr int KC = 256;
constexpr int64_t kChunk = 64 << 10;

struct Operands {
  const float* A;
  int64_t a_row, a_k;  // A's entry (i, k) at A[i a_row + k a_k]
  const float* B;      // op(B): in panels of NR columns, each K x NR row-major, or op(B) itself
  int64_t b_k, b_j;    // the panel at column j starts at B + j b_j, its row k at + k b_k
  int K, N;
  float* C;
  int64_t ldc;
  float alpha, beta;
  const float* bias;
};

// A pass over k0..k1 of a chunk of rows: the sums of the passes before it are in `sums`, C's
// entry (i, j) at sums[(i - i0) ld + j - j0], and go back there unless the pass is the last.
struct Pass {
  int k0, k1;
  float* sums;
  int64_t i0;
  int j0;
  int64_t ld;
};

// C[i..i+R, j..j+w) from the panel at j: NP vectors of sums per row (w <= NP * PS; the last
// vector stored through a mask when w is not a multiple of PS). The sums carry over from pass to
// pass unrounded, so each entry is the same chain of fused multiply-adds over k as in one pass.
template <int R, int NP>
inline void block(const Operands& o, int64_t i, int j, int w, const Pass& q) {
  using namespace Eigen::internal;
  Packet acc[R][NP];
  float* sums = q.sums ? q.sums + (i - q.i0) * q.ld + (j - q.j0) : nullptr;  // null: one pass
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < NP; ++p) acc[r][p] = q.k0 == 0 ? pset1<Packet>(0.f) : pload<Packet>(sums + r * q.ld + p * PS);
  if (q.k1 == o.K)  // C's lines on their way in while k runs (C's stores waited for them: 4 MB products 4% slower)
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < NP; ++p) __builtin_prefetch(o.C + (i + r) * o.ldc + j + p * PS, 1, 3);
  const float* a = o.A + i * o.a_row + q.k0 * o.a_k;
  const float* b = o.B + j * o.b_j + q.k0 * o.b_k;
  for (int k = q.k0; k < q.k1; ++k, a += o.a_k, b += o.b_k) {
    Packet bk[NP];
    for (int p = 0; p < NP; ++p) bk[p] = ploadu<Packet>(b + p * PS);
    for (int r = 0; r < R; ++r) {
      const Packet ar = pset1<Packet>(a[r * o.a_row]);
      for (int p = 0; p < NP; ++p) acc[r][p] = pmadd(ar, bk[p], acc[r][p]);
    }
  }
  if (q.k1 < o.K) {
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < NP; ++p) pstore(sums + r * q.ld + p * PS, acc[r][p]);
    return;
  }
  const Packet alpha = pset1<Packet>(o.alpha), beta = pset1<Packet>(o.beta);
#pragma GCC unroll 4
  for (int p = 0; p < NP; ++p) {
    const int cols = std::min(PS, w - p * PS);
    const Mask mask = Mask((1u << cols) - 1);
    const Packet bias = !o.bias ? pset1<Packet>(0.f)
                        : cols == PS ? ploadu<Packet>(o.bias + j + p * PS) : ploadu<Packet>(o.bias + j + p * PS, mask);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      float* c = o.C + (i + r) * o.ldc + j + p * PS;
      Packet v = padd(o.alpha == 1.f ? acc[r][p] : pmul(alpha, acc[r][p]), bias);
      if (cols == PS) {
        if (o.beta != 0.f) v = pmadd(beta, ploadu<Packet>(c), v);
        pstoreu(c, v);
      } else {
        if (o.beta != 0.f) v = pmadd(beta, ploadu<Packet>(c, mask), v);
        pstoreu(c, v, mask);
      }
    }
  }
}

// Rows i0..i1 of C, columns j0..j1 (j0 at a panel): chunk after chunk of rows, pass after pass
// over k, and in each pass panel after panel, the chunk's row blocks inside. Each entry's sum runs
// over k in order in every block, so how the rows, panels and passes are cut does not change C.
void product_rows(const Operands& o, int64_t i0, int64_t i1, int j0, int j1) {
  const int64_t ld = (j1 - j0 + NR - 1) / NR * NR;
  const int64_t chunk = std::max<int64_t>(2 * MR, kChunk / 4 / std::clamp(o.K, 1, KC) / (2 * MR) * (2 * MR));
  thread_local std::vector<float, Eigen::aligned_allocator<float>> sums;  // grown once, as the panels' buffer
  if (o.K > KC && sums.size() < std::size_t(chunk * ld)) sums.resize(chunk * ld);
  for (int64_t c0 = i0; c0 < i1; c0 += chunk) {
    const int64_t c1 = std::min(i1, c0 + chunk);
    for (int k0 = 0; k0 == 0 || k0 < o.K; k0 += KC) {  // K = 0: one pass, that writes C
      const Pass q{k0, std::min(o.K, k0 + KC), o.K > KC ? sums.data() : nullptr, c0, j0, ld};
      for (int j = j0; j < j1; j += NR) {
        const int w = std::min(NR, o.N - j);
        int64_t i = c0;
        if (w > PS) {
          for (; i + MR <= c1; i += MR) block<MR, 2>(o, i, j, w, q);
          for (; i + 8 <= c1; i += 8) block<8, 2>(o, i, j, w, q);
          for (; i + 4 <= c1; i += 4) block<4, 2>(o, i, j, w, q);
          for (; i < c1; ++i) block<1, 2>(o, i, j, w, q);
        } else {
          for (; i + 2 * MR <= c1; i += 2 * MR) block<2 * MR, 1>(o, i, j, w, q);
          for (; i + 4 <= c1; i += 4) block<4, 1>(o, i, j, w, q);
          for (; i < c1; ++i) block<1, 1>(o, i, j, w, q);
        }
      }
    }
  }
}

// op(B) (K, N)'s columns j0..j1 (j0 at a panel) into panels of NR columns, each K x NR row-major,
// zeros past column N (never stored, but they keep whatever the buffer held out of the sums).
void pack(float* panels, bool tb, int K, int N, const float* B, int ldb, int j0, int j1) {
  using namespace Eigen::internal;
  for (int j = j0; j < j1; j += NR) {
    const int w = std::min(NR, N - j);
    float* p = panels + int64_t(j) * K;
    if (tb)  // B's rows j.. become the panel's columns
      transpose_floats(B + int64_t(j) * ldb, w, K, ldb, p, NR);
    else if (w == NR)
      for (int k = 0; k < K; ++k)
        for (int v = 0; v < NR; v += PS) pstore(p + k * NR + v, ploadu<Packet>(B + int64_t(k) * ldb + j + v));
    else
      for (int k = 0; k < K; ++k) std::copy_n(B + int64_t(k) * ldb + j, w, p + k * NR);
    if (w < NR)
      for (int k = 0; k < K; ++k) std::fill(p + k * NR + w, p + (k + 1) * NR, 0.f);
  }
}

}  // namespace

bool gemm_kernel_available() { return true; }

void transpose_floats(const float* src, int rows, int cols, int lds, float* dst, int ldd) {
  using namespace Eigen::internal;
  int r = 0;
  for (; r + PS <= rows; r += PS) {  // PS x PS tiles through the vector registers
    int c = 0;
    for (; c + PS <= cols; c += PS) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // Packet's alignment attribute, as a template argument
      PacketBlock<Packet, PS> tile;
#pragma GCC diagnostic pop
      for (int i = 0; i < PS; ++i) tile.packet[i] = ploadu<Packet>(src + int64_t(r + i) * lds + c);
      ptranspose(tile);
      for (int i = 0; i < PS; ++i) pstoreu(dst + int64_t(c + i) * ldd + r, tile.packet[i]);
    }
    for (; c < cols; ++c)
      for (int i = 0; i < PS; ++i) dst[int64_t(c) * ldd + r + i] = src[int64_t(r + i) * lds + c];
  }
  for (; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[int64_t(c) * ldd + r] = src[int64_t(r) * lds + c];
}

void gemm_kernel(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                 float beta, float* C, int ldc, const float* bias) {
  Operands o{A, ta ? 1 : lda, ta ? lda : 1, B, ldb, 1, K, N, C, ldc, alpha, beta, bias};
  // op(B) is read in place when its rows are contiguous, whole vectors and small enough to stay in
  // L1 (attention's products); else packed
  const bool packed = tb || N % PS != 0 || int64_t(K) * N > 8192;
  if (packed) {
    // one buffer a calling thread, grown to the largest op(B) it has packed (no allocation once warm)
    thread_local std::vector<float, Eigen::aligned_allocator<float>> buffer;
    const std::size_t need = std::size_t(K) * ((N + NR - 1) / NR * NR);
    if (buffer.size() < need) buffer.resize(need);
    o.B = buffer.data();
    o.b_k = NR;
    o.b_j = K;
  }
  float* panels = const_cast<float*>(o.B);
  const int threads = omp_in_parallel() || double(M) * N * K < double(1 << 18) ? 1 : omp_get_max_threads();
  const int n_panels = (N + NR - 1) / NR;
  if (threads > 1 && n_panels % threads == 0 && M < 4 * MR * threads) {
    // few rows (a weight's gradient has as many as the layer is wide: 64 rows are 5 1/3 blocks of
    // 12, cut 36 / 28) and panels that split evenly: each thread packs and computes its own
    const int per = n_panels / threads * NR;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int t = 0; t < threads; ++t) {
      if (packed) pack(panels, tb, K, N, B, ldb, t * per, std::min(N, (t + 1) * per));
      product_rows(o, 0, M, t * per, std::min(N, (t + 1) * per));
    }
    return;
  }
  if (packed) pack(panels, tb, K, N, B, ldb, 0, N);
  const int row_threads = std::min(threads, M / (2 * MR));
  if (row_threads <= 1) {
    product_rows(o, 0, M, 0, N);
    return;
  }
  // whole blocks of rows a thread, the last partial block counted (else its rows go unwritten)
  const int64_t per = ((M + MR - 1) / MR + row_threads - 1) / row_threads * MR;
#pragma omp parallel for schedule(static) num_threads(row_threads)
  for (int t = 0; t < row_threads; ++t)
    product_rows(o, std::min<int64_t>(M, t * per), std::min<int64_t>(M, (t + 1) * per), 0, N);
}

#else

bool gemm_kernel_available() { return false; }
void transpose_floats(const float* src, int rows, int cols, int lds, float* dst, int ldd) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[int64_t(c) * ldd + r] = src[int64_t(r) * lds + c];
}
void gemm_kernel(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int,
                 const float*) {}

#endif

}  // namespace nt
