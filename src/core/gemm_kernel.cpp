#include "core/gemm_kernel.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"

namespace nt {

#ifdef __AVX__

namespace {

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int PS = Eigen::internal::packet_traits<float>::size;  // floats in a vector: 16 (AVX-512) or 8
using Mask = std::conditional_t<PS == 16, uint16_t, uint8_t>;
constexpr int MR = PS == 16 ? 12 : 6;  // 12 x 2 sums in 32 registers (AVX-512), 6 x 2 in 16 (AVX2)
constexpr int NR = 2 * PS;             // a panel's width

// k in passes of KC, A's rows in chunks of about kChunk bytes a pass, which stay in L2 while the
// panels go by. Without them a weight's gradient (K the batch's rows: lm-small's is 384 x 2048
// times 2048 x 128) read all of A from L3 once a panel. With AVX2 a panel's 256 x NR slice (16 KB)
// stays in L1 while a chunk's blocks run over it. With AVX-512 the slice would fill Zen 4's 32 KB
// L1 at 256 already, and comes from L2 at any KC; long passes cost less there (a block loads and
// stores its sums and starts its k loop once a pass): 1024^3 at 105 GFLOP/s with 256, 110 with 1024.
constexpr int KC = PS == 16 ? 1024 : 256;
constexpr int64_t kChunk = 64 << 10;
// A pass copies the chunk's rows of A into strips (pack_rows) when the copy serves at least
// kCopyPanels panels (it costs about what 2 to 4 panels' blocks gain from it), or kCopyAliased when
// A's rows are a multiple of 4 KB apart: a block's 12 rows then fall in one set of L1 (8 ways), and
// every broadcast misses (1024 x 128 x 1024 products 25% slower without the copy). AVX2's blocks of
// 6 rows fit in a set, and were as fast read in place (Zen 4 at -mno-avx512f): no copy.
constexpr int kCopyPanels = PS == 16 ? 8 : INT_MAX, kCopyAliased = PS == 16 ? 4 : INT_MAX;

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

// A's rows of a block from row i and column k0 of a pass on: (i + r, k0 + k) at a[r a_row + k a_k],
// in A itself or in a strip of the pass's copy.
struct Rows {
  const float* a;
  int64_t a_row, a_k;
};

// A PS x PS tile through the vector registers: dst's row i (ldd apart) = src's column i, of src's
// first h rows (lds apart; rows past h read row h - 1 again)
EIGEN_ALWAYS_INLINE void transpose_tile(const float* src, int h, int64_t lds, float* dst, int64_t ldd) {
  using namespace Eigen::internal;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // Packet's alignment attribute, as a template argument
  PacketBlock<Packet, PS> tile;
#pragma GCC diagnostic pop
  for (int i = 0; i < PS; ++i) tile.packet[i] = ploadu<Packet>(src + std::min(i, h - 1) * lds);
  ptranspose(tile);
  for (int i = 0; i < PS; ++i) pstoreu(dst + i * ldd, tile.packet[i]);
}

// dst (cols, PS; k-major) = src's h <= PS rows (lds apart) of cols entries, transposed PS columns
// at a time (dst's entries past h unused).
inline void transpose_rows(const float* src, int h, int cols, int64_t lds, float* dst) {
  int c = 0;
  for (; c + PS <= cols; c += PS) transpose_tile(src + c, h, lds, dst + c * PS, PS);
  for (; c < cols; ++c)
    for (int i = 0; i < h; ++i) dst[c * PS + i] = src[i * lds + c];
}

// C[i..i+R, j..j+w) from the panel at j: NP vectors of sums per row (w <= NP * PS; the last
// vector stored through a mask when w is not a multiple of PS). The sums carry over from pass to
// pass unrounded, so each entry is the same chain of fused multiply-adds over k as in one pass.
template <int R, int NP>
inline void block(const Operands& o, int64_t i, int j, int w, const Pass& q, const Rows& a_rows) {
  using namespace Eigen::internal;
  Packet acc[R][NP];
  float* sums = q.sums ? q.sums + (i - q.i0) * q.ld + (j - q.j0) : nullptr;  // null: one pass
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < NP; ++p) acc[r][p] = q.k0 == 0 ? pset1<Packet>(0.f) : pload<Packet>(sums + r * q.ld + p * PS);
  if (q.k1 == o.K)  // C's lines on their way in while k runs (C's stores waited for them: 4 MB products 4% slower)
    for (int r = 0; r < R; ++r)
      for (int p = 0; p < NP; ++p) __builtin_prefetch(o.C + (i + r) * o.ldc + j + p * PS, 1, 3);
  const float* a = a_rows.a;
  const float* b = o.B + j * o.b_j + q.k0 * o.b_k;
  for (int k = q.k0; k < q.k1; ++k, a += a_rows.a_k, b += o.b_k) {
    Packet bk[NP];
    for (int p = 0; p < NP; ++p) bk[p] = ploadu<Packet>(b + p * PS);
    for (int r = 0; r < R; ++r) {
      const Packet ar = pset1<Packet>(a[r * a_rows.a_row]);
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
    const Packet bias = !o.bias      ? pset1<Packet>(0.f)
                        : cols == PS ? ploadu<Packet>(o.bias + j + p * PS)
                                     : ploadu<Packet>(o.bias + j + p * PS, mask);
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

// Rows i0..i1 of C (in A at `at(i)`) against the panel at j over a pass: blocks of MR rows, then
// of 8, 4 and 1 (of 2 MR, MR, 4 and 1 for a panel of one vector).
template <class At>
void row_blocks(const Operands& o, int64_t i0, int64_t i1, int j, const Pass& q, At at) {
  const int w = std::min(NR, o.N - j);
  int64_t i = i0;
  if (w > PS) {
    for (; i + MR <= i1; i += MR) block<MR, 2>(o, i, j, w, q, at(i));
    for (; i + 8 <= i1; i += 8) block<8, 2>(o, i, j, w, q, at(i));
    for (; i + 4 <= i1; i += 4) block<4, 2>(o, i, j, w, q, at(i));
    for (; i < i1; ++i) block<1, 2>(o, i, j, w, q, at(i));
  } else {
    for (; i + 2 * MR <= i1; i += 2 * MR) block<2 * MR, 1>(o, i, j, w, q, at(i));
    for (; i + MR <= i1; i += MR) block<MR, 1>(o, i, j, w, q, at(i));
    for (; i + 4 <= i1; i += 4) block<4, 1>(o, i, j, w, q, at(i));
    for (; i < i1; ++i) block<1, 1>(o, i, j, w, q, at(i));
  }
}

// A's rows c0..c1, columns k0..k1 into strips of MR rows (the last one shorter), each strip k-major
// with a vector's width a column: a block's entries of column k are one aligned vector, the strip one
// stream. Whole vectors are stored, the entries past the strip's rows unused.
void pack_rows(const Operands& o, int64_t c0, int64_t c1, int k0, int k1, float* strips) {
  using namespace Eigen::internal;
  const int kc = k1 - k0;
  for (int64_t s = c0; s < c1; s += MR) {
    const int h = int(std::min<int64_t>(MR, c1 - s));
    float* d = strips + (s - c0) / MR * kc * PS;
    const float* a = o.A + s * o.a_row + int64_t(k0) * o.a_k;
    if (o.a_row == 1) {  // op(A) = A^T: the strip's column k is h contiguous entries of A's row k
      const Mask mask = Mask((1u << h) - 1);
      for (int k = 0; k < kc; ++k) pstore(d + k * PS, ploadu<Packet>(a + k * o.a_k, mask));
    } else {
      transpose_rows(a, h, kc, o.a_row, d);
    }
  }
}

// Rows i0..i1 of C, columns j0..j1 (j0 at a panel): chunk after chunk of rows, pass after pass
// over k, and in each pass panel after panel, the chunk's row blocks inside. Each entry's sum runs
// over k in order in every block, so how the rows, panels and passes are cut does not change C.
// The blocks read A's rows in place (MR rows lda apart, MR streams) or, when the pass has copied
// them, from the chunk's strips, strip by strip.
void product_rows(const Operands& o, int64_t i0, int64_t i1, int j0, int j1) {
  const int64_t ld = (j1 - j0 + NR - 1) / NR * NR;
  const int64_t chunk = std::max<int64_t>(2 * MR, kChunk / 4 / std::clamp(o.K, 1, KC) / (2 * MR) * (2 * MR));
  const bool rows_in_one_set = o.a_k == 1 && o.a_row % 1024 == 0;
  const bool copy_a = o.K > 0 && ld / NR >= (rows_in_one_set ? kCopyAliased : kCopyPanels);
  thread_local std::vector<float, Eigen::aligned_allocator<float>> sums, strips;  // grown once
  if (o.K > KC && sums.size() < std::size_t(chunk * ld)) sums.resize(chunk * ld);
  const std::size_t strip_floats = std::size_t(std::min(o.K, KC)) * PS;
  if (copy_a && strips.size() < (chunk + MR - 1) / MR * strip_floats)
    strips.resize((chunk + MR - 1) / MR * strip_floats);
  for (int64_t c0 = i0; c0 < i1; c0 += chunk) {
    const int64_t c1 = std::min(i1, c0 + chunk);
    for (int k0 = 0; k0 == 0 || k0 < o.K; k0 += KC) {  // K = 0: one pass, that writes C
      const Pass q{k0, std::min(o.K, k0 + KC), o.K > KC ? sums.data() : nullptr, c0, j0, ld};
      if (copy_a) pack_rows(o, c0, c1, q.k0, q.k1, strips.data());
      for (int j = j0; j < j1; j += NR) {
        if (!copy_a)
          row_blocks(o, c0, c1, j, q, [&](int64_t i) {
            return Rows{o.A + i * o.a_row + q.k0 * o.a_k, o.a_row, o.a_k};
          });
        else
          for (int64_t s = c0; s < c1; s += MR) {
            const float* strip = strips.data() + (s - c0) / MR * (q.k1 - q.k0) * PS;
            row_blocks(o, s, std::min(c1, s + MR), j, q, [&](int64_t i) { return Rows{strip + (i - s), 1, PS}; });
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
  int r = 0;
  for (; r + PS <= rows; r += PS) {
    int c = 0;
    for (; c + PS <= cols; c += PS)
      transpose_tile(src + int64_t(r) * lds + c, PS, lds, dst + int64_t(c) * ldd + r, ldd);
    for (; c < cols; ++c)
      for (int i = 0; i < PS; ++i) dst[int64_t(c) * ldd + r + i] = src[int64_t(r + i) * lds + c];
  }
  for (; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[int64_t(c) * ldd + r] = src[int64_t(r) * lds + c];
}

// op(B) is read in place when its rows are contiguous, whole vectors, and small enough to stay in
// L1 (attention's products) or at most two panels wide (a d-64 layer's input in its weight's
// gradient, K the batch's rows: the copy cost more than the strided reads save); else packed.
// Either way each entry is the same sum.
bool packs(bool tb, int K, int N) { return tb || N % PS != 0 || (int64_t(K) * N > 8192 && N > 64); }

std::size_t gemm_kernel_panels(bool tb, int K, int N) {
  return packs(tb, K, N) ? std::size_t(K) * ((N + NR - 1) / NR * NR) : 0;
}

void gemm_kernel_pack(bool tb, int K, int N, const float* B, int ldb, float* panels) {
  NT_CHECK(reinterpret_cast<std::uintptr_t>(panels) % sizeof(Packet) == 0, "gemm_kernel_pack: unaligned panels");
  if (packs(tb, K, N)) pack(panels, tb, K, N, B, ldb, 0, N);
}

void gemm_kernel(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                 float beta, float* C, int ldc, const float* bias, const float* prepared) {
  Operands o{A, ta ? 1 : lda, ta ? lda : 1, B, ldb, 1, K, N, C, ldc, alpha, beta, bias};
  const bool packed = packs(tb, K, N), pack_here = packed && !prepared;
  if (packed && prepared) {
    o.B = prepared;
    o.b_k = NR;
    o.b_j = K;
  } else if (packed) {
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
      if (pack_here) pack(panels, tb, K, N, B, ldb, t * per, std::min(N, (t + 1) * per));
      product_rows(o, 0, M, t * per, std::min(N, (t + 1) * per));
    }
    return;
  }
  if (pack_here) pack(panels, tb, K, N, B, ldb, 0, N);
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
std::size_t gemm_kernel_panels(bool, int, int) { return 0; }
void gemm_kernel_pack(bool, int, int, const float*, int, float*) {}
void transpose_floats(const float* src, int rows, int cols, int lds, float* dst, int ldd) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[int64_t(c) * ldd + r] = src[int64_t(r) * lds + c];
}
void gemm_kernel(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int,
                 const float*, const float*) {}

#endif

}  // namespace nt
