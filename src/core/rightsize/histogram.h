// A decaying histogram in the manner of the Kubernetes VPA recommender (cost-and-pricing.md §4):
// exponential buckets (each 5 % wider than the last by default) and sample weights that double
// every half-life, so recent behaviour counts more. A percentile returns the upper end of the
// bucket it falls in — the conservative choice. Weights are kept relative to a reference time
// that moves forward (renormalising) when they would grow too large. Values below the first
// bucket go in it; above the last, in the last. Not thread-safe; a plain value.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace gpumeter::rightsize {

struct HistogramOptions {
  double first_bucket = 0;  // upper end of bucket 0 (> 0)
  double ratio = 1.05;      // each bucket is this much wider than the one before (> 1)
  double max_value = 0;     // values above land in the last bucket
  double half_life_s = 24 * 3600;
};

class DecayingHistogram {
 public:
  explicit DecayingHistogram(HistogramOptions options);

  // Adds `value` with `weight` (> 0) at Unix time `t_s`.
  void Add(double value, double weight, double t_s);
  // The smallest bucket upper end below which at least `p` (0..1] of the weight lies; nullopt when
  // empty.
  std::optional<double> Percentile(double p) const;
  bool empty() const { return total_ <= 0; }
  size_t buckets() const { return weights_.size(); }
  // Upper end of bucket i.
  double BucketEnd(size_t i) const;

  // A compact text form ("v1 <buckets> <reference> <0|1: has a reference> w0 w1 …", trailing
  // empty buckets dropped) and back; the options must match those it was saved with (checked:
  // the bucket count).
  std::string Save() const;
  static Expected<DecayingHistogram> Load(HistogramOptions options, const std::string& text);

 private:
  size_t BucketOf(double value) const;
  HistogramOptions o_;
  std::vector<double> weights_;
  double total_ = 0;
  double reference_s_ = 0;
  bool has_reference_ = false;
};

// The histograms of the project: memory in bytes (10 MB .. 2 TB) and compute as a fraction of a
// whole GPU (0.001 .. 16 GPUs).
HistogramOptions MemoryHistogramOptions();
HistogramOptions ComputeHistogramOptions();

}  // namespace gpumeter::rightsize
