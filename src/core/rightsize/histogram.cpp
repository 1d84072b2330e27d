#include "core/rightsize/histogram.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gpumeter::rightsize {
namespace {

// Weights past 2^kMaxExponent relative to the reference are renormalised (VPA uses 100).
constexpr double kMaxExponent = 100;

}  // namespace

HistogramOptions MemoryHistogramOptions() { return {1e7, 1.05, 2e12, 24 * 3600}; }
HistogramOptions ComputeHistogramOptions() { return {0.001, 1.05, 16, 24 * 3600}; }

DecayingHistogram::DecayingHistogram(HistogramOptions options) : o_(options) {
  // Bucket i ends at first × (ratio^(i+1) − 1) / (ratio − 1): the first is `first` wide and each
  // is `ratio` times wider than the one before, as in VPA's exponential histogram.
  const double n =
      std::ceil(std::log(o_.max_value * (o_.ratio - 1) / o_.first_bucket + 1) / std::log(o_.ratio));
  weights_.assign(static_cast<size_t>(std::max(1.0, n)), 0.0);
}

double DecayingHistogram::BucketEnd(size_t i) const {
  return o_.first_bucket * (std::pow(o_.ratio, static_cast<double>(i + 1)) - 1) / (o_.ratio - 1);
}

size_t DecayingHistogram::BucketOf(double value) const {
  if (!(value > o_.first_bucket)) return 0;
  // The first i with BucketEnd(i) >= value.
  const double i =
      std::ceil(std::log(value * (o_.ratio - 1) / o_.first_bucket + 1) / std::log(o_.ratio)) - 1;
  size_t b = static_cast<size_t>(std::clamp(i, 0.0, static_cast<double>(weights_.size() - 1)));
  // Guard against rounding at bucket edges.
  while (b > 0 && BucketEnd(b - 1) >= value) --b;
  while (b + 1 < weights_.size() && BucketEnd(b) < value) ++b;
  return b;
}

void DecayingHistogram::Add(double value, double weight, double t_s) {
  if (!(weight > 0) || !std::isfinite(value)) return;
  if (!has_reference_) reference_s_ = t_s, has_reference_ = true;
  double exponent = (t_s - reference_s_) / o_.half_life_s;
  if (exponent > kMaxExponent) {
    // Move the reference to t_s: every weight shrinks by the same factor, percentiles unchanged.
    const double scale = std::exp2(-exponent);
    for (auto& w : weights_) w *= scale;
    total_ *= scale;
    reference_s_ = t_s;
    exponent = 0;
  }
  const double w = weight * std::exp2(exponent);
  weights_[BucketOf(value)] += w;
  total_ += w;
}

std::optional<double> DecayingHistogram::Percentile(double p) const {
  if (total_ <= 0) return std::nullopt;
  const double want = std::clamp(p, 0.0, 1.0) * total_;
  double acc = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    acc += weights_[i];
    if (acc >= want && weights_[i] > 0) return BucketEnd(i);
  }
  for (size_t i = weights_.size(); i-- > 0;)
    if (weights_[i] > 0) return BucketEnd(i);
  return std::nullopt;
}

std::string DecayingHistogram::Save() const {
  size_t last = weights_.size();
  while (last > 0 && weights_[last - 1] == 0) --last;
  std::ostringstream out;
  out.precision(17);
  out << "v1 " << weights_.size() << ' ' << (has_reference_ ? reference_s_ : 0) << ' '
      << (has_reference_ ? 1 : 0);
  for (size_t i = 0; i < last; ++i) out << ' ' << weights_[i];
  return out.str();
}

Expected<DecayingHistogram> DecayingHistogram::Load(HistogramOptions options,
                                                    const std::string& text) {
  DecayingHistogram h(options);
  std::istringstream in(text);
  std::string version;
  size_t n = 0;
  int has_ref = 0;
  if (!(in >> version >> n >> h.reference_s_ >> has_ref) || version != "v1")
    return MakeError(ErrorCode::kInvalidInput,
                     "histogram: expected 'v1 <buckets> <reference> <0|1> <weights…>'");
  if (n != h.weights_.size())
    return MakeError(ErrorCode::kInvalidInput, "histogram: saved with " + std::to_string(n) +
                                                   " buckets, these options have " +
                                                   std::to_string(h.weights_.size()));
  h.has_reference_ = has_ref != 0;
  double w = 0;
  size_t i = 0;
  while (in >> w) {
    if (i >= n || !(w >= 0) || !std::isfinite(w))
      return MakeError(ErrorCode::kInvalidInput,
                       "histogram: bad weight at bucket " + std::to_string(i));
    h.weights_[i++] = w;
    h.total_ += w;
  }
  if (!in.eof())
    return MakeError(ErrorCode::kInvalidInput,
                     "histogram: bad weight at bucket " + std::to_string(i));
  return h;
}

}  // namespace gpumeter::rightsize
