// How attention's heads lie in memory, shared by attention.cpp (the blocked products, any size)
// and attention_one_pass.cpp (small heads in one pass): a call's Shape, where its operands live,
// and a head's transpose.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/gemm.h"

namespace nt::heads {

// A head's (T, hs) block x (rows ld apart) as its (hs, T) transpose, in a buffer of the calling
// thread: the products q k^T and do v^T then read their right operand in place, row by row.
template <class T>
const T* transposed(const T* x, int T_, int hs, int ld, int ldt) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < std::size_t(ldt) * hs) buffer.resize(std::size_t(ldt) * hs);
  transpose(x, T_, hs, ld, buffer.data(), ldt);
  for (int c = 0; c < hs; ++c)
    std::fill(buffer.data() + int64_t(c) * ldt + T_, buffer.data() + int64_t(c + 1) * ldt, T(0));
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
  const float* query_mask = nullptr;  // (B, Tq), 0 = a padding query: its o and P rows 0; nullptr: none
  int Tq() const { return q.T; }
  int Tk() const { return kv.T; }
  // columns row block [r0, r1) reads; rows column block [c0, ...) is read by, from row first_row(c0)
  int cols(int r1) const { return causal ? r1 : kv.T; }
  int first_row(int c0) const { return causal ? c0 : 0; }
  int row_len(int i) const { return causal ? i + 1 : kv.T; }
  // Past the last real query (key) of batch row b: padding from there on (right-padded batches)
  int query_end(int b) const { return end_of(query_mask, b, q.T); }
  int key_end(int b) const { return end_of(key_mask, b, kv.T); }
  static int end_of(const float* mask, int b, int n) {
    const float* row = mask ? mask + int64_t(b) * n : nullptr;
    while (row && n > 0 && row[n - 1] == 0.0f) --n;
    return n;
  }
};

// Where the operands live: q, k, v have their own base pointers.
template <class T>
struct Operands {
  T *q, *k, *v;  // data, or gradients (nullptr: no gradient wanted)
};

// Small heads: hs whole vectors of T, at most four, over at most eight vectors of keys (four with
// AVX2), no soft cap.
template <class T>
bool one_pass_fits(int hs, int Tk, double cap);
template <class T>
bool one_pass_fits(const Shape& S) {
  return one_pass_fits<T>(S.q.hs, S.Tk(), S.cap);
}
// P's and dS's row stride for them: Tk padded to whole vectors
template <class T>
int one_pass_ldp(int Tk);

// A head's o and P (rows S.ldp apart), and its backward: the gradients (each = or += as assign
// says; nullptr: none). q, k, v, o, P at the head's first row; b its batch row (the masks' row).
template <class T>
void one_pass_forward(T* o, T* P, const T* q, const T* k, const T* v, int b, const Shape& S);
template <class T>
void one_pass_backward(Operands<T> d, const bool assign[3], const T* dO, const T* P, const T* q, const T* k,
                       const T* v, int b, const Shape& S);

}  // namespace nt::heads
