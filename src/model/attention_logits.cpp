// layers.jsonl's attn_logit_max (Wortsman et al. 2023 track its growth): the largest |q.k| / sqrt(hs)
// of a statistics step's training forward, from the q and k the attention kept by reference
// (model.h's AttentionLogits), computed after the step, outside its timed part. Per (b, h) the
// scores S = q k^T / sqrt(hs) (Tq, Tk) are one product; the maximum reads the pairs the softmax
// sees: j <= i when causal, key_mask[b, j] != 0, and the queries query_mask[b, i] != 0.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/gemm.h"
#include "model/model.h"

namespace nt {

double attention_logit_max(const AttentionLogits& a) {
  const float s = 1.0f / std::sqrt(float(a.hs));
  std::vector<float> S(std::size_t(a.Tq) * a.Tk);
  float max = 0.0f;
  for (int b = 0; b < a.B; ++b)
    for (int h = 0; h < a.NH; ++h) {
      const float* q = a.q + int64_t(b) * a.Tq * a.ldq + h * a.hs;
      const float* k = a.k + int64_t(b) * a.Tk * a.ldk + h * a.hs;
      gemm(false, true, a.Tq, a.Tk, a.hs, s, q, a.ldq, k, a.ldk, 0.0f, S.data(), a.Tk);
      for (int i = 0; i < a.Tq; ++i) {
        if (a.query_mask && a.query_mask[int64_t(b) * a.Tq + i] == 0.0f) continue;
        const int keys = a.causal ? i + 1 : a.Tk;
        for (int j = 0; j < keys; ++j)
          if (!a.key_mask || a.key_mask[int64_t(b) * a.Tk + j] != 0.0f)
            max = std::max(max, std::abs(S[std::size_t(i) * a.Tk + j]));
      }
    }
  return max;
}

}  // namespace nt
