// The decaying histogram: bucket geometry, percentiles at bucket ends, decay toward recent
// samples, renormalisation over long gaps, and its saved form.
#include "core/rightsize/histogram.h"

#include <gtest/gtest.h>

namespace gpumeter::rightsize {
namespace {

TEST(DecayingHistogram, BucketsGrowByTheRatioAndCoverTheRange) {
  DecayingHistogram h({1.0, 1.05, 1000, 3600});
  EXPECT_DOUBLE_EQ(h.BucketEnd(0), 1.0);
  EXPECT_NEAR(h.BucketEnd(1) - h.BucketEnd(0), 1.05, 1e-12);
  EXPECT_NEAR(h.BucketEnd(2) - h.BucketEnd(1), 1.05 * 1.05, 1e-12);
  EXPECT_GE(h.BucketEnd(h.buckets() - 1), 1000);
  EXPECT_LT(h.BucketEnd(h.buckets() - 2), 1000);
}

TEST(DecayingHistogram, APercentileIsTheUpperEndOfItsBucket) {
  DecayingHistogram h({1.0, 1.05, 1000, 3600});
  EXPECT_FALSE(h.Percentile(0.5)) << "empty: unknown, not 0";
  for (int v = 1; v <= 100; ++v) h.Add(v, 1, 0);
  const auto p90 = *h.Percentile(0.9);
  EXPECT_GE(p90, 90);
  EXPECT_LT(p90, 90 * 1.06) << "within one bucket of the true value";
  EXPECT_GE(*h.Percentile(1.0), 100);
  EXPECT_DOUBLE_EQ(*h.Percentile(0.0), 1.0);
  // Below the first bucket and above the last are clamped into them.
  DecayingHistogram edge({1.0, 1.05, 1000, 3600});
  edge.Add(0, 1, 0);
  edge.Add(5000, 1, 0);
  EXPECT_DOUBLE_EQ(*edge.Percentile(0.5), 1.0);
  EXPECT_GE(*edge.Percentile(1.0), 1000);
}

TEST(DecayingHistogram, NewerSamplesWeighMoreByTheHalfLife) {
  // 100 samples of 10 at t=0, then 100 of 50 two half-lives later: weights 1 and 4.
  DecayingHistogram h({1.0, 1.05, 1000, 3600});
  for (int i = 0; i < 100; ++i) h.Add(10, 1, 0);
  for (int i = 0; i < 100; ++i) h.Add(50, 1, 7200);
  EXPECT_GE(*h.Percentile(0.3), 50) << "the old samples are 1/5 of the weight";
  EXPECT_LT(*h.Percentile(0.15), 12) << "the bucket of 10 (1.5 wide there)";
}

TEST(DecayingHistogram, LongGapsRenormaliseWithoutChangingPercentiles) {
  DecayingHistogram h({1.0, 1.05, 1000, 1});
  h.Add(10, 1, 0);
  h.Add(20, 1, 0);
  h.Add(30, 1, 150);  // 2^150: renormalised; the two old samples now weigh nothing
  EXPECT_GE(*h.Percentile(0.01), 30);
  EXPECT_LT(*h.Percentile(1.0), 31.6);
}

TEST(DecayingHistogram, SavedAndLoaded) {
  DecayingHistogram h(MemoryHistogramOptions());
  h.Add(3e9, 1, 1000);
  h.Add(5e9, 2, 90000);
  auto back = DecayingHistogram::Load(MemoryHistogramOptions(), h.Save());
  ASSERT_TRUE(back) << back.error().message;
  for (const double p : {0.1, 0.5, 0.9, 1.0}) EXPECT_EQ(back->Percentile(p), h.Percentile(p)) << p;
  EXPECT_FALSE(DecayingHistogram::Load(ComputeHistogramOptions(), h.Save()))
      << "saved with other buckets";
  const auto bad = DecayingHistogram::Load(MemoryHistogramOptions(), "v1 12 0 1 x");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("histogram:"), std::string::npos);
  EXPECT_FALSE(DecayingHistogram::Load(MemoryHistogramOptions(), "v2"));
}

}  // namespace
}  // namespace gpumeter::rightsize
