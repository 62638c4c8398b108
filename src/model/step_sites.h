// The norm sites of a recurrence, seen step by step: each step hands its rows entering and leaving
// a site's norm (all B, or those of the sequences still running), and sites() gathers them by
// position into batch-major (B*T, C) rows b*T + t, 0 where no step wrote, the layout stats.csv
// reads (model.arch rnn, rnnsearch's decoder).
#pragma once
#include <vector>

#include "model/model.h"

namespace nt {

class StepSites {
 public:
  // A site of `layer` named `place`; its index is the order of declaration.
  void declare(int layer, const char* place) { sites_.push_back({layer, place, {}, {}, {}, {}, {}}); }
  // Before a forward: forgets the steps, keeps the memory.
  void clear();
  // Step t's rows of site k before and after its norm (the same tensor for norm none); row i is
  // batch row batch_rows[i] (i when null).
  void record(std::size_t k, Tensor<float> in, Tensor<float> out, const int* batch_rows = nullptr) {
    sites_[k].in.push_back(in), sites_[k].out.push_back(out), sites_[k].rows.push_back(batch_rows);
  }
  // Every site with steps, gathered over B rows and T positions; mask: the real positions (or nullptr).
  const std::vector<SiteCapture>& gather(int B, int T, const float* mask) const;

 private:
  struct Site {
    int layer;
    const char* place;
    std::vector<Tensor<float>> in, out;
    std::vector<const int*> rows;
    std::vector<float> in_seq, out_seq;
  };
  mutable std::vector<Site> sites_;
  mutable std::vector<SiteCapture> gathered_;
  mutable bool fresh_ = false;
};

}  // namespace nt
