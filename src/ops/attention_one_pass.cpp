// Attention over small heads in one pass (attention_heads.h): hs at most kMaxHeadVectors whole
// vectors and Tk at most kMaxKeyVectors (in floats with AVX-512: hs 16-64, up to 128 keys; with
// AVX2 up to 32). A head is one pass, kRows query rows at a time: their scores stay in registers
// (past four vectors, their second chunk mostly spilled to the stack) through the mask and the
// softmax (exp in vectors; a masked key's P exactly 0), then P v; the sums of attention.cpp's products,
// without their calls and packing. Causal rows skip the vectors of keys past their diagonal, whose
// P and dS are 0 (stored, not computed): at T 64 in floats the scores' work falls to 5/8, the same
// bits. P's and dS's rows are padded to whole vectors (Shape::ldp), the padding 0. The formulas
// are attention.cpp's.

// GCC 12 takes the _mm512_undefined_ps() that Eigen's pexp passes its masked AVX-512 intrinsics
// for an uninitialized read
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/attention_heads.h"

namespace nt::heads {

namespace {

using namespace Eigen::internal;
template <class T>
using Packet = typename packet_traits<T>::type;
template <class T>
constexpr int kLanes = packet_traits<T>::size;
constexpr int kRows = 4;
constexpr int kMaxHeadVectors = 4;  // a row's sums while P v runs, kRows x hs
constexpr int kChunk = 4;           // vectors of keys a pass of rows_times holds: kRows x kChunk sums
#ifdef __AVX512F__
constexpr int kMaxKeyVectors = 8;  // 32 registers: two chunks' scores, the second's spill is a few stores
#else
constexpr int kMaxKeyVectors = 4;
#endif

// f(std::integral_constant<int, n>{}) for n in 1..most: the vector counts as template arguments
template <class F, int... n>
void with_vectors_of(int v, F&& f, std::integer_sequence<int, n...>) {
  ((v == n + 1 ? (f(std::integral_constant<int, n + 1>{}), 0) : 0), ...);
}
template <int most, class F>
void with_vectors(int n, F&& f) {
  with_vectors_of(std::clamp(n, 1, most), f, std::make_integer_sequence<int, most>{});
}

// per key, 0 where it counts and -inf where it is masked, and in the padding: ldp entries
template <class T>
const T* key_bias(const float* mask, int Tk, int ldp) {
  thread_local std::vector<T> bias;
  bias.assign(std::size_t(ldp), -std::numeric_limits<T>::infinity());
  for (int j = 0; j < Tk; ++j)
    if (!mask || mask[j] != 0.0f) bias[j] = T(0);
  return bias.data();
}

// A vector loaded once into a register: GCC would otherwise fold the load into each of the kRows
// multiply-adds that use it, and the loop then waits on kRows times the loads. With AVX-512's 32
// registers only: AVX2's 16 cannot hold the sums and the loaded vectors, and it would spill more.
template <class P>
EIGEN_ALWAYS_INLINE P in_register(P x) {
#ifdef __AVX512F__
  __asm__("" : "+v"(x));
#endif
  return x;
}

// x[r][p] = sum_c a[r][c] bt[c][p-th vector], c over n, for kRows rows a[r]: kChunk vectors a pass
// over c, so that the pass's sums and loaded vectors stay in registers (each sum the same chain)
template <class T, int NP, int P0 = 0>
EIGEN_ALWAYS_INLINE void rows_times(Packet<T> (&x)[kRows][NP], const T* const (&a)[kRows], const T* bt, int n,
                                    int ldb) {
  constexpr int L = kLanes<T>, C = std::min(NP - P0, kChunk);
  Packet<T> sums[kRows][C];
  for (int r = 0; r < kRows; ++r)
    for (int p = 0; p < C; ++p) sums[r][p] = pset1<Packet<T>>(T(0));
  for (int c = 0; c < n; ++c) {
    Packet<T> b[C];
    for (int p = 0; p < C; ++p) b[p] = in_register(ploadu<Packet<T>>(bt + int64_t(c) * ldb + (P0 + p) * L));
    for (int r = 0; r < kRows; ++r) {
      const Packet<T> ar = pset1<Packet<T>>(a[r][c]);
      for (int p = 0; p < C; ++p) sums[r][p] = pmadd(ar, b[p], sums[r][p]);
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int p = 0; p < C; ++p) x[r][P0 + p] = sums[r][p];
  if constexpr (P0 + C < NP) rows_times<T, NP, P0 + C>(x, a, bt, n, ldb);
}

// out[r] (= or +=) sum_j w[r][j ws] b_j, j over n (b's rows ldb apart, NV vectors each); the
// first `rows` of the kRows stored. With one vector a row, even and odd j sum apart (eight chains
// of sums in flight instead of four), then together.
template <class T, int NV, class W>
EIGEN_ALWAYS_INLINE void weighted_rows(T* const (&out)[kRows], int rows, bool assign, W* const (&w)[kRows], int ws,
                                       const T* b, int n, int ldb) {
  constexpr int L = kLanes<T>, U = NV == 1 ? 2 : 1;
  Packet<T> acc[U][kRows][NV];
  for (int u = 0; u < U; ++u)
    for (int r = 0; r < kRows; ++r)
      for (int h = 0; h < NV; ++h) acc[u][r][h] = pset1<Packet<T>>(T(0));
  auto add = [&](Packet<T>(&sums)[kRows][NV], int j) {
    Packet<T> bj[NV];
    for (int h = 0; h < NV; ++h) bj[h] = in_register(ploadu<Packet<T>>(b + int64_t(j) * ldb + h * L));
    for (int r = 0; r < kRows; ++r) {
      const Packet<T> wr = pset1<Packet<T>>(w[r][int64_t(j) * ws]);
      for (int h = 0; h < NV; ++h) sums[r][h] = pmadd(wr, bj[h], sums[r][h]);
    }
  };
  int j = 0;
  for (; j + U <= n; j += U)
    for (int u = 0; u < U; ++u) add(acc[u], j + u);
  for (; j < n; ++j) add(acc[0], j);
  for (int r = 0; r < kRows; ++r)  // (a loop of constant length: the sums stay in registers)
    for (int h = 0; h < NV && r < rows; ++h) {
      const Packet<T> sum = U == 2 ? padd(acc[0][r][h], acc[U - 1][r][h]) : acc[0][r][h];
      T* o = out[r] + h * L;
      pstoreu(o, assign ? sum : padd(ploadu<Packet<T>>(o), sum));
    }
}

// rows i0.. of a (T, ld) block, kRows of them: past the last row, the last again (never stored)
template <class T, class U>
void block_rows(U* (&at)[kRows], T* base, int i0, int rows, int64_t ld) {
  for (int r = 0; r < kRows; ++r) at[r] = base + std::min(i0 + r, rows - 1) * ld;
}

// The vectors of keys rows i0.. attend to: causal, up to the last row's diagonal, and up to the
// vector of the last real key (the vectors past either are masked whole: their P and dS are 0,
// stored, not computed)
template <int NP>
int live_vectors(const Shape& S, int i0, int rows, int lanes, int key_end) {
  const int keys = std::max(1, (key_end + lanes - 1) / lanes);
  return std::min(keys, S.causal ? std::min(NP, (i0 + rows - 1) / lanes + 1) : NP);
}

// The padding queries' rows of o and P: 0 (a padding query reads nothing)
template <class T>
void zero_padding_queries(T* out, T* P, int b, const Shape& S) {
  const float* real = S.query_mask ? S.query_mask + int64_t(b) * S.Tq() : nullptr;
  for (int i = 0; real && i < S.Tq(); ++i)
    if (real[i] == 0.0f) {
      std::fill_n(out + int64_t(i) * S.o.ld, S.q.hs, T(0));
      std::fill_n(P + int64_t(i) * S.ldp, S.ldp, T(0));
    }
}

// P's rows i0.. (N of their NP vectors live, the rest 0) and o's: softmax of scale q k^T, masked, then P v
template <class T, int NP, int NV, int N>
void forward_rows(T* const (&orow)[kRows], T* const (&pr)[kRows], const T* const (&qr)[kRows], int i0, int rows,
                  const T* kt, const T* bias, const T* v, const Shape& S) {
  using Pk = Packet<T>;
  constexpr int L = kLanes<T>;
  const int Tk = S.Tk();
  const Pk scale = pset1<Pk>(T(1) / std::sqrt(T(S.q.hs))), zero = pset1<Pk>(T(0)),
           ninf = pset1<Pk>(-std::numeric_limits<T>::infinity());
  Pk x[kRows][N];
  rows_times<T, N>(x, qr, kt, S.q.hs, S.ldp);
  for (int r = 0; r < kRows; ++r) {  // S = scale q k^T, masked -inf; P = softmax
    if (r >= rows) break;
    Pk top = ninf;
    for (int p = 0; p < N; ++p) {
      x[r][p] = padd(pmul(scale, x[r][p]), ploadu<Pk>(bias + p * L));
      if (S.causal) x[r][p] = pselect(pcmp_lt(pset1<Pk>(T(i0 + r)), plset<Pk>(T(p * L))), ninf, x[r][p]);
      top = pmax(top, x[r][p]);
    }
    const T m = predux_max(top);
    Pk sum = zero;
    for (int p = 0; p < N; ++p) {
      const Pk masked = pcmp_eq(x[r][p], ninf);
      x[r][p] =
          m == -std::numeric_limits<T>::infinity() ? zero : pselect(masked, zero, pexp(psub(x[r][p], pset1<Pk>(m))));
      sum = padd(sum, x[r][p]);
    }
    const T total = predux(sum);
    for (int p = 0; p < N; ++p) pstoreu(pr[r] + p * L, total > 0 ? pdiv(x[r][p], pset1<Pk>(total)) : zero);
    for (int p = N; p < NP; ++p) pstoreu(pr[r] + p * L, zero);
  }
  weighted_rows<T, NV>(orow, rows, true, pr, 1, v, std::min({Tk, S.causal ? i0 + kRows : Tk, N * L}), S.kv.ld);
}

// Rows past the last real query and vectors past the last real key are not computed: each sum
// loses terms that were 0 only, the same bits (with one vector a row, weighted_rows sums even and
// odd keys apart by their index, wherever the keys stop).
template <class T, int NP, int NV>
void forward_head(T* out, T* P, const T* q, const T* k, const T* v, int b, const Shape& S) {
  const int Tq = S.Tq(), Tk = S.Tk(), ldp = S.ldp, q_end = S.query_end(b), key_end = S.key_end(b);
  const T* kt = transposed(k, Tk, S.q.hs, S.kv.ld, ldp);
  const T* bias = key_bias<T>(S.key_mask ? S.key_mask + int64_t(b) * Tk : nullptr, Tk, ldp);
  for (int i0 = 0; i0 < q_end; i0 += kRows) {
    const int rows = std::min(kRows, q_end - i0);
    const T* qr[kRows];
    T* pr[kRows];
    T* orow[kRows];
    block_rows(qr, q, i0, Tq, S.q.ld), block_rows(pr, P, i0, Tq, ldp), block_rows(orow, out, i0, Tq, S.o.ld);
    with_vectors<kMaxKeyVectors>(live_vectors<NP>(S, i0, rows, kLanes<T>, key_end), [&](auto N) {
      if constexpr (N <= NP)
        forward_rows<T, NP, NV, N>(orow, pr, qr, i0, rows, kt, bias, v, S);
      else
        NT_CHECK(false, "one-pass attention: more live vectors than the row has");
    });
  }
  zero_padding_queries(out, P, b, S);
}

// dS's rows i0.. (N of their NP vectors live, the rest 0): dP = do v^T; dS = scale P (dP - rowsum(dP P))
template <class T, int NP, int N>
void score_gradient_rows(T* const (&dsr)[kRows], const T* const (&pr)[kRows], const T* const (&dor)[kRows], int rows,
                         const T* vt, const Shape& S) {
  using Pk = Packet<T>;
  constexpr int L = kLanes<T>;
  const Pk scale = pset1<Pk>(T(1) / std::sqrt(T(S.q.hs)));
  Pk x[kRows][N];
  rows_times<T, N>(x, dor, vt, S.q.hs, S.ldp);
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    Pk dot = pset1<Pk>(T(0));
    for (int p = 0; p < N; ++p) dot = pmadd(x[r][p], ploadu<Pk>(pr[r] + p * L), dot);
    const Pk total = pset1<Pk>(predux(dot));
    for (int p = 0; p < N; ++p)
      pstoreu(dsr[r] + p * L, pmul(pmul(scale, ploadu<Pk>(pr[r] + p * L)), psub(x[r][p], total)));
    for (int p = N; p < NP; ++p) pstoreu(dsr[r] + p * L, pset1<Pk>(T(0)));
  }
}

template <class T, int NP, int NV>
void backward_head(Operands<T> d, const bool assign[3], const T* dO, const T* P, const T* q, const T* k, const T* v,
                   int b, const Shape& S) {
  constexpr int L = kLanes<T>;
  const int Tq = S.Tq(), Tk = S.Tk(), ldp = S.ldp, q_end = S.query_end(b), key_end = S.key_end(b);
  const int k_live = std::min(Tk, std::max(1, (key_end + L - 1) / L) * L);  // past it, P and dS are 0
  const T* vt = transposed(v, Tk, S.q.hs, S.kv.ld, ldp);
  thread_local std::vector<T> scratch;  // the head's dS (Tq, ldp): at most 128 x 128 floats, in the caches
  if (scratch.size() < std::size_t(Tq) * ldp) scratch.resize(std::size_t(Tq) * ldp);
  T* dS = scratch.data();
  for (int i0 = 0; i0 < q_end; i0 += kRows) {  // dS, then dq = dS k
    const int rows = std::min(kRows, q_end - i0);
    const T* dor[kRows];
    const T* pr[kRows];
    T* dsr[kRows];
    T* dqr[kRows];
    block_rows(dor, dO, i0, Tq, S.o.ld), block_rows(pr, P, i0, Tq, ldp), block_rows(dsr, dS, i0, Tq, ldp);
    with_vectors<kMaxKeyVectors>(live_vectors<NP>(S, i0, rows, L, key_end), [&](auto N) {
      if constexpr (N <= NP)
        score_gradient_rows<T, NP, N>(dsr, pr, dor, rows, vt, S);
      else
        NT_CHECK(false, "one-pass attention: more live vectors than the row has");
    });
    if (d.q) {
      block_rows(dqr, d.q, i0, Tq, S.q.ld);
      weighted_rows<T, NV>(dqr, rows, assign[0], dsr, 1, k, std::min(S.causal ? std::min(Tk, i0 + kRows) : Tk, k_live),
                           S.kv.ld);
    }
  }
  auto no_gradient = [&](T* g, bool put, int i0, int i1, int ld) {  // rows i0..i1 of a gradient: 0
    for (int i = i0; g && put && i < i1; ++i) std::fill_n(g + int64_t(i) * ld, S.q.hs, T(0));
  };
  no_gradient(d.q, assign[0], q_end, Tq, S.q.ld);  // the padding queries'
  for (int j0 = 0; j0 < Tk; j0 += kRows) {  // dk = dS^T q, dv = P^T do, kRows keys at a time, over the real queries
    const int keys = std::min(kRows, Tk - j0), r0 = S.causal ? j0 : 0, n = std::max(0, q_end - r0);
    if (j0 >= k_live) {  // padding keys (P's columns 0)
      no_gradient(d.k, assign[1], j0, j0 + keys, S.kv.ld), no_gradient(d.v, assign[2], j0, j0 + keys, S.kv.ld);
      continue;
    }
    const T* wds[kRows];
    const T* wp[kRows];
    T* out[kRows];
    for (int r = 0; r < kRows; ++r) wds[r] = dS + int64_t(r0) * ldp + j0 + r, wp[r] = P + int64_t(r0) * ldp + j0 + r;
    if (d.k) {
      block_rows(out, d.k, j0, Tk, S.kv.ld);
      weighted_rows<T, NV>(out, keys, assign[1], wds, ldp, q + int64_t(r0) * S.q.ld, n, S.q.ld);
    }
    if (d.v) {
      block_rows(out, d.v, j0, Tk, S.kv.ld);
      weighted_rows<T, NV>(out, keys, assign[2], wp, ldp, dO + int64_t(r0) * S.o.ld, n, S.o.ld);
    }
  }
}

}  // namespace

template <class T>
bool one_pass_fits(int hs, int Tk, double cap) {
  return cap == 0 && hs % kLanes<T> == 0 && hs <= kMaxHeadVectors * kLanes<T> && Tk <= kMaxKeyVectors * kLanes<T>;
}

template <class T>
int one_pass_ldp(int Tk) {
  return (Tk + kLanes<T> - 1) / kLanes<T> * kLanes<T>;
}

template <class T>
void one_pass_forward(T* out, T* P, const T* q, const T* k, const T* v, int b, const Shape& S) {
  with_vectors<kMaxKeyVectors>(S.ldp / kLanes<T>, [&](auto NP) {
    with_vectors<kMaxHeadVectors>(S.q.hs / kLanes<T>, [&](auto NV) { forward_head<T, NP, NV>(out, P, q, k, v, b, S); });
  });
}

template <class T>
void one_pass_backward(Operands<T> d, const bool assign[3], const T* dO, const T* P, const T* q, const T* k, const T* v,
                       int b, const Shape& S) {
  with_vectors<kMaxKeyVectors>(S.ldp / kLanes<T>, [&](auto NP) {
    with_vectors<kMaxHeadVectors>(S.q.hs / kLanes<T>,
                                  [&](auto NV) { backward_head<T, NP, NV>(d, assign, dO, P, q, k, v, b, S); });
  });
}

#define NT_INSTANTIATE(T)                                                                                       \
  template bool one_pass_fits<T>(int, int, double);                                                             \
  template int one_pass_ldp<T>(int);                                                                            \
  template void one_pass_forward(T*, T*, const T*, const T*, const T*, int, const Shape&);                     \
  template void one_pass_backward(Operands<T>, const bool[3], const T*, const T*, const T*, const T*, const T*, \
                                  int, const Shape&);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt::heads
