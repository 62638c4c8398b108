// The product kernel normtool runs itself (core/gemm.h chooses it): C = alpha op(A) op(B) + beta C
// (+ a bias row) in float, for the models' shapes, where Eigen's and OpenBLAS's general kernels
// spend a fifth of their time packing: K is 16 to 512 and N 16 to 512, so every product is small.
//
// op(B) is copied once a call into panels of 2 vector widths (32 columns with AVX-512), each
// contiguous K x 32. C's rows go in blocks of 12 (6 with AVX2), and each block keeps 12 x 2
// vectors of sums in registers while k runs, A's 12 entries of column k broadcast against the
// panel's row k. Rows go in chunks that stay in L2 while the panels pass, and k in passes (1024
// with AVX-512, 256 with AVX2); between passes the sums wait, unrounded, in a buffer. With
// AVX-512 and enough panels, a pass first copies its chunk's rows of A into strips of 12 rows,
// k-major, so that a block broadcasts from one stream rather than from 12 rows lda apart. The sum
// over k runs in order, so a row of C is the same whichever rows the threads take and however K
// is cut. The last panel is padded with zeros and stored through a mask.
#pragma once

#include <cstddef>

namespace nt {

// Whether this build has the kernel (it needs AVX's masked loads and stores).
bool gemm_kernel_available();

// The product, rows of C split over the math threads unless called inside a parallel region.
// With beta = 0, C is not read; bias (N entries, or null) is added to every row of C. prepared:
// op(B)'s panels from gemm_kernel_pack (or null: packed here, when the kernel packs op(B)).
void gemm_kernel(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                 int ldb, float beta, float* C, int ldc, const float* bias, const float* prepared = nullptr);

// The floats of the panels the kernel packs op(B) (K, N) into, 0 when it reads op(B) in place; and
// the packing (into 64-byte aligned memory), for products that share op(B) (a recurrence's weight,
// step after step).
std::size_t gemm_kernel_panels(bool trans_b, int K, int N);
void gemm_kernel_pack(bool trans_b, int K, int N, const float* B, int ldb, float* panels);

// dst (cols, rows; rows ldd apart) = src (rows, cols; rows lds apart) transposed, in tiles of a
// vector width through the registers.
void transpose_floats(const float* src, int rows, int cols, int lds, float* dst, int ldd);

}  // namespace nt
