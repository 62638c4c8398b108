// Scaled-dot-product attention, per head: causal or not, self or cross, with a key mask.
//
// For each head (b, h), with q, o as (Tq, hs) blocks, k, v as (Tk, hs) blocks, s = 1/sqrt(hs):
//   forward   S = s q k^T;  with a soft cap c > 0, S = c tanh(S / c) (Gemma 2's attention logit
//             soft-capping; t = tanh(S / c) kept);  S_ij = -inf where key j is masked (key_mask[b, j]
//             == 0) or, causal, j > i;  P = softmax_rows(S) (a row with every key masked: P = 0, o = 0);
//             o = P v
//   backward  dv += P^T do
//             dP  = do v^T
//             dS  = P * (dP - rowsum(dP * P))            (softmax backward; 0 where P is 0)
//             dS *= 1 - t^2                               (with a soft cap)
//             dq += s dS k,   dk += s dS^T q
// Forward keeps P (B*NH, Tq, Tk) for backward, plus a (B*NH, Tq, Tk) scratch for dP/dS. A masked
// key has P = 0 in every row, so the backward needs no mask of its own.
//
// Each += of backward is = where the node writes that gradient first (core/graph.h); every
// element of dq, dk, dv is written by one product, so either is exact.
//
// Causal work only (Tq = Tk = T): the rows are cut into blocks of kBlock; row block [r0, r1)
// attends to columns [0, r1), so each product of the forward, dP and dq skips the columns to the
// right of the block, and dv and dk, by column blocks [c0, c1), read rows [c0, T) only. At T = 64
// that is 3/4 of the full products, at T = 128 5/8. Entries above the diagonal of P and dS are 0.
// Non-causal: every row block reads all Tk columns, every column block all Tq rows.
//
// Small heads (hs at most four vectors, Tk at most four: the claims' models) skip those products:
// one_pass_attention below computes the same sums a head at a time, with the softmax in vectors.
//
// Layouts (Layout says where head (b, h)'s block starts and the stride between its rows; q, k
// and v each have their own base, k and v share a layout):
//   causal_attention       q, k, v (B*NH*T, hs), heads contiguous (after split_heads)
//   self_attention         qkv (B*T, 3 NH hs) as one product writes q, k and v side by side;
//                          the heads are read and written in place, no split/merge copies
//   cross_attention        q (B*Tq, NH hs) and kv (B*Tk, 2 NH hs), k and v side by side, in place
//   multi_head_attention   q (B*Tq, NH hs), k and v (B*Tk, NH hs) each its own tensor, in place (model.qk_norm)
// GCC 12 takes the _mm512_undefined_ps() that Eigen's pexp passes its masked AVX-512 intrinsics
// for an uninitialized read (one_pass_attention:: below calls pexp itself)
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "core/gemm.h"
#include "ops/ops.h"

namespace nt {

namespace {

constexpr int kBlock = 32;  // rows per causal block

// A head's (T, hs) block x (rows ld apart) as its (hs, T) transpose, in a buffer of the calling
// thread: the products q k^T and do v^T then read their right operand in place, row by row.
template <class T>
const T* transposed(const T* x, int T_, int hs, int ld, int ldt) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < std::size_t(ldt) * hs) buffer.resize(std::size_t(ldt) * hs);
  transpose(x, T_, hs, ld, buffer.data(), ldt);
  for (int c = 0; c < hs; ++c) std::fill(buffer.data() + int64_t(c) * ldt + T_, buffer.data() + int64_t(c + 1) * ldt, T(0));
  return buffer.data();
}

struct Layout {
  int B, NH, T, hs;
  int64_t b_stride, h_stride;  // offset of head (b, h)'s first row: b b_stride + h h_stride
  int ld;                      // stride between rows of a head
  int64_t at(int bh) const { return (bh / NH) * b_stride + (bh % NH) * h_stride; }
};

// The shape of one call: q's layout (Tq rows a head), k's and v's (Tk rows), o's (Tq rows).
struct Shape {
  Layout q, kv, o;
  bool causal;            // Tq == Tk, key j > query i excluded
  const float* key_mask;  // (B, Tk), 0 = padding key excluded; nullptr: every key counts
  double cap = 0;         // the scores' soft cap c; 0: none
  int ldp = 0;            // stride of P's and dS's rows: Tk, or Tk padded to whole vectors (small heads)
  int Tq() const { return q.T; }
  int Tk() const { return kv.T; }
  // columns row block [r0, r1) reads; rows column block [c0, ...) is read by, from row first_row(c0)
  int cols(int r1) const { return causal ? r1 : kv.T; }
  int first_row(int c0) const { return causal ? c0 : 0; }
  int row_len(int i) const { return causal ? i + 1 : kv.T; }
};

// Where the operands live: q, k, v have their own base pointers.
template <class T>
struct Operands {
  T *q, *k, *v;  // data, or gradients (nullptr: no gradient wanted)
};

// Row i of S (n entries, the rest of its Tk already 0 or ignored) -> P: softmax over the keys the
// mask keeps; a row with no key left is 0.
template <class T>
void softmax_row(T* row, int n, const float* mask) {
  if (mask)
    for (int j = 0; j < n; ++j)
      if (mask[j] == 0.0f) row[j] = -std::numeric_limits<T>::infinity();
  auto r = RowVecMap<T>(row, n).array();
  const T max = r.maxCoeff();
  if (max == -std::numeric_limits<T>::infinity()) {
    r.setZero();
    return;
  }
  r = (r - max).exp();
  r /= r.sum();
}

// Row i of S (n entries) -> c tanh(S / c), t = tanh(S / c) kept in `t` for backward.
template <class T>
void soft_cap_row(T* row, T* t, int n, T c) {
  auto r = RowVecMap<T>(row, n).array();
  auto th = RowVecMap<T>(t, n).array();
  th = (r / c).tanh();
  r = c * th;
}


// Small heads in one pass: hs whole vectors and Tk at most kMaxVectors vectors (in floats with AVX-512: hs
// 16-64, up to 64 keys). A head is one pass, kRows query rows at a time: their scores stay in
// registers through the mask and the softmax (exp in vectors; a masked key's P exactly 0), then
// P v; the sums of the products above, without their calls and packing. P's and dS's rows are
// padded to whole vectors (Shape::ldp), the padding 0.
namespace one_pass_attention {

using namespace Eigen::internal;
template <class T>
using Packet = typename packet_traits<T>::type;
template <class T>
constexpr int kLanes = packet_traits<T>::size;
constexpr int kRows = 4;
constexpr int kMaxVectors = 4;

template <class T>
int padded(int n) {
  return (n + kLanes<T> - 1) / kLanes<T> * kLanes<T>;
}

template <class T>
bool fits(int hs, int Tk, double cap) {
  return cap == 0 && hs % kLanes<T> == 0 && hs <= kMaxVectors * kLanes<T> && Tk <= kMaxVectors * kLanes<T>;
}
template <class T>
bool fits(const Shape& S) {
  return fits<T>(S.q.hs, S.Tk(), S.cap);
}

// f(std::integral_constant<int, n>{}) for n in 1..kMaxVectors: the vector counts as template arguments
template <class F>
void with_vectors(int n, F&& f) {
  switch (n) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    default: f(std::integral_constant<int, 4>{}); break;
  }
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

// x[r][p] = sum_c a[r][c] bt[c][p-th vector], c over n, for kRows rows a[r]
template <class T, int NP>
EIGEN_ALWAYS_INLINE void rows_times(Packet<T> (&x)[kRows][NP], const T* const (&a)[kRows], const T* bt, int n, int ldb) {
  constexpr int L = kLanes<T>;
  for (int r = 0; r < kRows; ++r)
    for (int p = 0; p < NP; ++p) x[r][p] = pset1<Packet<T>>(T(0));
  for (int c = 0; c < n; ++c) {
    Packet<T> b[NP];
    for (int p = 0; p < NP; ++p) b[p] = ploadu<Packet<T>>(bt + int64_t(c) * ldb + p * L);
    for (int r = 0; r < kRows; ++r) {
      const Packet<T> ar = pset1<Packet<T>>(a[r][c]);
      for (int p = 0; p < NP; ++p) x[r][p] = pmadd(ar, b[p], x[r][p]);
    }
  }
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
    for (int h = 0; h < NV; ++h) bj[h] = ploadu<Packet<T>>(b + int64_t(j) * ldb + h * L);
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

template <class T, int NP, int NV>
void forward_head(T* out, T* P, const T* q, const T* k, const T* v, const float* mask, const Shape& S) {
  using Pk = Packet<T>;
  constexpr int L = kLanes<T>;
  const int Tq = S.Tq(), Tk = S.Tk(), hs = S.q.hs, ldp = S.ldp;
  const Pk scale = pset1<Pk>(T(1) / std::sqrt(T(hs))), zero = pset1<Pk>(T(0)),
           ninf = pset1<Pk>(-std::numeric_limits<T>::infinity());
  const T* kt = transposed(k, Tk, hs, S.kv.ld, ldp);
  const T* bias = key_bias<T>(mask, Tk, ldp);
  for (int i0 = 0; i0 < Tq; i0 += kRows) {
    const int rows = std::min(kRows, Tq - i0);
    const T* qr[kRows];
    T* pr[kRows];
    T* orow[kRows];
    block_rows(qr, q, i0, Tq, S.q.ld), block_rows(pr, P, i0, Tq, ldp), block_rows(orow, out, i0, Tq, S.o.ld);
    Pk x[kRows][NP];
    rows_times<T, NP>(x, qr, kt, hs, ldp);
    for (int r = 0; r < kRows; ++r) {  // S = scale q k^T, masked -inf; P = softmax
      if (r >= rows) break;
      Pk top = ninf;
      for (int p = 0; p < NP; ++p) {
        x[r][p] = padd(pmul(scale, x[r][p]), ploadu<Pk>(bias + p * L));
        if (S.causal) x[r][p] = pselect(pcmp_lt(pset1<Pk>(T(i0 + r)), plset<Pk>(T(p * L))), ninf, x[r][p]);
        top = pmax(top, x[r][p]);
      }
      const T m = predux_max(top);
      Pk sum = zero;
      for (int p = 0; p < NP; ++p) {
        const Pk masked = pcmp_eq(x[r][p], ninf);
        x[r][p] = m == -std::numeric_limits<T>::infinity() ? zero : pselect(masked, zero, pexp(psub(x[r][p], pset1<Pk>(m))));
        sum = padd(sum, x[r][p]);
      }
      const T total = predux(sum);
      for (int p = 0; p < NP; ++p) pstoreu(pr[r] + p * L, total > 0 ? pdiv(x[r][p], pset1<Pk>(total)) : zero);
    }
    weighted_rows<T, NV>(orow, rows, true, pr, 1, v, S.causal ? std::min(Tk, i0 + kRows) : Tk, S.kv.ld);
  }
}

template <class T, int NP, int NV>
void backward_head(Operands<T> d, const bool assign[3], T* dS, const T* dO, const T* P, const T* q, const T* k,
                   const T* v, const Shape& S) {
  using Pk = Packet<T>;
  constexpr int L = kLanes<T>;
  const int Tq = S.Tq(), Tk = S.Tk(), hs = S.q.hs, ldp = S.ldp;
  const Pk scale = pset1<Pk>(T(1) / std::sqrt(T(hs)));
  const T* vt = transposed(v, Tk, hs, S.kv.ld, ldp);
  for (int i0 = 0; i0 < Tq; i0 += kRows) {  // dP = do v^T; dS = scale P (dP - rowsum(dP P)); dq = dS k
    const int rows = std::min(kRows, Tq - i0);
    const T* dor[kRows];
    const T* pr[kRows];
    T* dsr[kRows];
    T* dqr[kRows];
    block_rows(dor, dO, i0, Tq, S.o.ld), block_rows(pr, P, i0, Tq, ldp), block_rows(dsr, dS, i0, Tq, ldp);
    Pk x[kRows][NP];
    rows_times<T, NP>(x, dor, vt, hs, ldp);
    for (int r = 0; r < kRows; ++r) {
      if (r >= rows) break;
      Pk dot = pset1<Pk>(T(0));
      for (int p = 0; p < NP; ++p) dot = pmadd(x[r][p], ploadu<Pk>(pr[r] + p * L), dot);
      const Pk total = pset1<Pk>(predux(dot));
      for (int p = 0; p < NP; ++p)
        pstoreu(dsr[r] + p * L, pmul(pmul(scale, ploadu<Pk>(pr[r] + p * L)), psub(x[r][p], total)));
    }
    if (d.q) {
      block_rows(dqr, d.q, i0, Tq, S.q.ld);
      weighted_rows<T, NV>(dqr, rows, assign[0], dsr, 1, k, S.causal ? std::min(Tk, i0 + kRows) : Tk, S.kv.ld);
    }
  }
  for (int j0 = 0; j0 < Tk; j0 += kRows) {  // dk = dS^T q, dv = P^T do, kRows keys at a time
    const int keys = std::min(kRows, Tk - j0), r0 = S.causal ? j0 : 0;
    const T* wds[kRows];
    const T* wp[kRows];
    T* out[kRows];
    for (int r = 0; r < kRows; ++r) wds[r] = dS + int64_t(r0) * ldp + j0 + r, wp[r] = P + int64_t(r0) * ldp + j0 + r;
    if (d.k) {
      block_rows(out, d.k, j0, Tk, S.kv.ld);
      weighted_rows<T, NV>(out, keys, assign[1], wds, ldp, q + int64_t(r0) * S.q.ld, Tq - r0, S.q.ld);
    }
    if (d.v) {
      block_rows(out, d.v, j0, Tk, S.kv.ld);
      weighted_rows<T, NV>(out, keys, assign[2], wp, ldp, dO + int64_t(r0) * S.o.ld, Tq - r0, S.o.ld);
    }
  }
}

template <class T>
void forward(T* out, T* P, const T* q, const T* k, const T* v, const float* mask, const Shape& S) {
  with_vectors(S.ldp / kLanes<T>, [&](auto NP) {
    with_vectors(S.q.hs / kLanes<T>, [&](auto NV) { forward_head<T, NP, NV>(out, P, q, k, v, mask, S); });
  });
}

template <class T>
void backward(Operands<T> d, const bool assign[3], T* dS, const T* dO, const T* P, const T* q, const T* k, const T* v,
              const Shape& S) {
  with_vectors(S.ldp / kLanes<T>, [&](auto NP) {
    with_vectors(S.q.hs / kLanes<T>,
                 [&](auto NV) { backward_head<T, NP, NV>(d, assign, dS, dO, P, q, k, v, S); });
  });
}

}  // namespace one_pass_attention

// th: (B*NH, Tq, Tk) for tanh(S / c) with a soft cap, else nullptr.
template <class T>
void attention_forward(T* o, T* P, T* th, Operands<const T> in, const Shape& S) {
  const Layout &Lq = S.q, &Lk = S.kv, &Lo = S.o;
  const T s = T(1) / std::sqrt(T(Lq.hs));
  const int Tq = S.Tq(), Tk = S.Tk(), hs = Lq.hs;
  const int64_t square = int64_t(Tq) * S.ldp;
  const bool one_pass = one_pass_attention::fits<T>(S);
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < Lq.B * Lq.NH; ++bh) {
    const T *q = in.q + Lq.at(bh), *k = in.k + Lk.at(bh), *v = in.v + Lk.at(bh);
    const float* mask = S.key_mask ? S.key_mask + int64_t(bh / Lq.NH) * Tk : nullptr;
    T* out = o + Lo.at(bh);
    T* Pb = P + bh * square;
    if (one_pass) {
      one_pass_attention::forward(out, Pb, q, k, v, mask, S);
      continue;
    }
    const T* kt = transposed(k, Tk, hs, Lk.ld, Tk);
    for (int r0 = 0; r0 < Tq; r0 += kBlock) {
      const int r1 = std::min(Tq, r0 + kBlock), rows = r1 - r0, cols = S.cols(r1);
      gemm(false, false, rows, cols, hs, s, q + int64_t(r0) * Lq.ld, Lq.ld, kt, Tk, T(0), Pb + int64_t(r0) * Tk, Tk);
      for (int i = r0; i < r1; ++i) {  // softmax over the row's first row_len(i) entries; the rest 0
        const int n = S.row_len(i);
        if (th) soft_cap_row(Pb + int64_t(i) * Tk, th + bh * square + int64_t(i) * Tk, n, T(S.cap));
        softmax_row(Pb + int64_t(i) * Tk, n, mask);
        std::fill(Pb + int64_t(i) * Tk + n, Pb + int64_t(i + 1) * Tk, T(0));
      }
      gemm(false, false, rows, hs, cols, T(1), Pb + int64_t(r0) * Tk, Tk, v, Lk.ld, T(0), out + int64_t(r0) * Lo.ld,
           Lo.ld);
    }
  }
}

template <class T>
void attention_backward(Operands<T> d, const bool assign[3], T* scratch, const T* dout, const T* P, const T* th,
                        Operands<const T> in, const Shape& S) {
  const Layout &Lq = S.q, &Lk = S.kv, &Lo = S.o;
  const T s = T(1) / std::sqrt(T(Lq.hs));
  const int Tq = S.Tq(), Tk = S.Tk(), hs = Lq.hs;
  const int64_t square = int64_t(Tq) * S.ldp;
  const bool one_pass = one_pass_attention::fits<T>(S);
  auto beta = [&](int i) { return assign[i] ? T(0) : T(1); };
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < Lq.B * Lq.NH; ++bh) {
    const T *q = in.q + Lq.at(bh), *k = in.k + Lk.at(bh), *v = in.v + Lk.at(bh), *dO = dout + Lo.at(bh);
    const T* Pb = P + bh * square;
    T* dS = scratch + bh * square;
    if (one_pass) {
      const Operands<T> dh{d.q ? d.q + Lq.at(bh) : nullptr, d.k ? d.k + Lk.at(bh) : nullptr,
                           d.v ? d.v + Lk.at(bh) : nullptr};
      one_pass_attention::backward(dh, assign, dS, dO, Pb, q, k, v, S);
      continue;
    }
    const T* vt = transposed(v, Tk, hs, Lk.ld, Tk);
    for (int r0 = 0; r0 < Tq; r0 += kBlock) {  // dP = do v^T, then dS, by row blocks
      const int r1 = std::min(Tq, r0 + kBlock), rows = r1 - r0, cols = S.cols(r1);
      gemm(false, false, rows, cols, hs, T(1), dO + int64_t(r0) * Lo.ld, Lo.ld, vt, Tk, T(0), dS + int64_t(r0) * Tk,
           Tk);
      for (int i = r0; i < r1; ++i) {
        const int n = S.row_len(i);
        auto di = RowVecMap<T>(dS + int64_t(i) * Tk, n).array();
        const auto p = CRowVecMap<T>(Pb + int64_t(i) * Tk, n).array();
        const T dot = (di * p).sum();
        di = s * p * (di - dot);
        if (th) di *= T(1) - CRowVecMap<T>(th + bh * square + int64_t(i) * Tk, n).array().square();
        std::fill(dS + int64_t(i) * Tk + n, dS + int64_t(i) * Tk + cols, T(0));
      }
      if (d.q)
        gemm(false, false, rows, hs, cols, T(1), dS + int64_t(r0) * Tk, Tk, k, Lk.ld, beta(0),
             d.q + Lq.at(bh) + int64_t(r0) * Lq.ld, Lq.ld);
    }
    for (int c0 = 0; c0 < Tk; c0 += kBlock) {  // dv, dk by column blocks: rows [first_row(c0), Tq) reach [c0, c1)
      const int cols = std::min(Tk, c0 + kBlock) - c0, r0 = S.first_row(c0), rows = Tq - r0;
      if (d.v)
        gemm(true, false, cols, hs, rows, T(1), Pb + int64_t(r0) * Tk + c0, Tk, dO + int64_t(r0) * Lo.ld, Lo.ld,
             beta(2), d.v + Lk.at(bh) + int64_t(c0) * Lk.ld, Lk.ld);
      if (d.k)
        gemm(true, false, cols, hs, rows, T(1), dS + int64_t(r0) * Tk + c0, Tk, q + int64_t(r0) * Lq.ld, Lq.ld,
             beta(1), d.k + Lk.at(bh) + int64_t(c0) * Lk.ld, Lk.ld);
    }
  }
}

template <class T>
struct AttentionContext {
  Operands<const T> in;
  Operands<T> d;
  int slot[3];  // index of q's, k's and v's gradient among the ones the node lists
  Tensor<T> o;
  const T* P;
  const T* th;  // tanh(S / c) with a soft cap, else nullptr
  T* scratch;
  Shape shape;
};

template <class T>
void attention_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const AttentionContext<T>*>(p);
  const bool assign[3] = {writes_first(first, c.slot[0]), writes_first(first, c.slot[1]),
                          writes_first(first, c.slot[2])};
  attention_backward(c.d, assign, c.scratch, c.o.grad, c.P, c.th, c.in, c.shape);
}

// grads: the distinct gradient buffers, in the order slot indexes them
template <class T>
Tensor<T> attention(Graph<T>& g, Operands<const T> in, Operands<T> d, const int (&slot)[3],
                    std::initializer_list<T*> grads, bool grad, Shape S, int rows, int cols) {
  Tensor<T> o = g.tensor(rows, cols, grad);
  S.ldp = one_pass_attention::fits<T>(S) ? one_pass_attention::padded<T>(S.Tk()) : S.Tk();
  const std::size_t squares = std::size_t(S.q.B) * S.q.NH * S.Tq() * S.ldp;
  T* P = g.buffer(squares);
  T* th = S.cap > 0 ? g.buffer(squares) : nullptr;
  attention_forward(o.data, P, th, in, S);
  if (o.grad)
    g.record(attention_backward_node<T>,
             AttentionContext<T>{in, d, {slot[0], slot[1], slot[2]}, o, P, th, g.buffer(squares), S}, grads);
  return o;
}

}  // namespace

template <class T>
Tensor<T> causal_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int BH, int T_) {
  NT_CHECK(q.rows == BH * T_, "causal_attention: rows != BH*T");
  NT_CHECK(k.rows == q.rows && v.rows == q.rows && k.cols == q.cols && v.cols == q.cols,
           "causal_attention: q, k, v shapes differ");
  const int hs = q.cols;
  const Layout L{BH, 1, T_, hs, int64_t(T_) * hs, 0, hs};
  return attention(g, Operands<const T>{q.data, k.data, v.data}, Operands<T>{q.grad, k.grad, v.grad}, {0, 1, 2},
                   {q.grad, k.grad, v.grad}, q.requires_grad() || k.requires_grad() || v.requires_grad(),
                   Shape{L, L, L, true, nullptr}, q.rows, hs);
}

template <class T>
Tensor<T> self_attention(Graph<T>& g, Tensor<T> qkv, int B, int T_, int NH, bool causal, const float* key_mask,
                         double cap) {
  NT_CHECK(qkv.rows == B * T_ && qkv.cols % (3 * NH) == 0, "self_attention: qkv must be (B*T, 3*NH*hs)");
  const int C = qkv.cols / 3, hs = C / NH;
  const Layout L{B, NH, T_, hs, int64_t(T_) * qkv.cols, hs, qkv.cols}, Lo{B, NH, T_, hs, int64_t(T_) * C, hs, C};
  T* dqkv = qkv.grad;
  return attention(g, Operands<const T>{qkv.data, qkv.data + C, qkv.data + 2 * C},
                   Operands<T>{dqkv, dqkv ? dqkv + C : nullptr, dqkv ? dqkv + 2 * C : nullptr}, {0, 0, 0}, {dqkv},
                   qkv.requires_grad(), Shape{L, L, Lo, causal, key_mask, cap}, qkv.rows, C);
}

template <class T>
Tensor<T> causal_self_attention(Graph<T>& g, Tensor<T> qkv, int B, int T_, int NH) {
  return self_attention(g, qkv, B, T_, NH, true, nullptr);
}

template <class T>
Tensor<T> cross_attention(Graph<T>& g, Tensor<T> q, Tensor<T> kv, int B, int Tq, int Tk, int NH,
                          const float* key_mask, double cap) {
  NT_CHECK(q.rows == B * Tq && q.cols % NH == 0, "cross_attention: q must be (B*Tq, NH*hs)");
  NT_CHECK(kv.rows == B * Tk && kv.cols == 2 * q.cols, "cross_attention: kv must be (B*Tk, 2*NH*hs)");
  const int C = q.cols, hs = C / NH;
  const Layout Lq{B, NH, Tq, hs, int64_t(Tq) * C, hs, C}, Lk{B, NH, Tk, hs, int64_t(Tk) * kv.cols, hs, kv.cols};
  T* dkv = kv.grad;
  return attention(g, Operands<const T>{q.data, kv.data, kv.data + C},
                   Operands<T>{q.grad, dkv, dkv ? dkv + C : nullptr}, {0, 1, 1}, {q.grad, dkv},
                   q.requires_grad() || kv.requires_grad(), Shape{Lq, Lk, Lq, false, key_mask, cap}, q.rows, C);
}

template <class T>
Tensor<T> multi_head_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int B, int Tq, int Tk, int NH,
                               bool causal, const float* key_mask, double cap) {
  NT_CHECK(q.rows == B * Tq && q.cols % NH == 0, "multi_head_attention: q must be (B*Tq, NH*hs)");
  NT_CHECK(k.rows == B * Tk && v.rows == k.rows && k.cols == q.cols && v.cols == q.cols,
           "multi_head_attention: k and v must be (B*Tk, NH*hs)");
  NT_CHECK(!causal || Tq == Tk, "multi_head_attention: causal needs Tq == Tk");
  const int C = q.cols, hs = C / NH;
  const Layout Lq{B, NH, Tq, hs, int64_t(Tq) * C, hs, C}, Lk{B, NH, Tk, hs, int64_t(Tk) * C, hs, C};
  return attention(g, Operands<const T>{q.data, k.data, v.data}, Operands<T>{q.grad, k.grad, v.grad}, {0, 1, 2},
                   {q.grad, k.grad, v.grad}, q.requires_grad() || k.requires_grad() || v.requires_grad(),
                   Shape{Lq, Lk, Lq, causal, key_mask, cap}, q.rows, C);
}

template <class T>
bool attention_in_one_pass(int hs, int Tk, double cap) {
  return one_pass_attention::fits<T>(hs, Tk, cap);
}

#define NT_INSTANTIATE(T)                                                                                  \
  template bool attention_in_one_pass<T>(int, int, double);                                               \
  template Tensor<T> causal_attention(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, int);               \
  template Tensor<T> self_attention(Graph<T>&, Tensor<T>, int, int, int, bool, const float*, double);      \
  template Tensor<T> causal_self_attention(Graph<T>&, Tensor<T>, int, int, int);                           \
  template Tensor<T> cross_attention(Graph<T>&, Tensor<T>, Tensor<T>, int, int, int, int, const float*, double); \
  template Tensor<T> multi_head_attention(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, int, int, int, bool,  \
                                          const float*, double);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
