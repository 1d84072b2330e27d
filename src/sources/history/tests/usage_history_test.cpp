// Histories read through UsageHistorySource (the store implements it): here a source in memory,
// which rightsizing reads an hour at a time (a read's memory is its minutes'), with the workload
// named from the pods' labels.
#include "core/usage/usage_reader.h"

#include <gtest/gtest.h>

namespace gpumeter::rightsize {
namespace {

using domain::Owner;
using domain::OwnerKind;
using usage::BuildHistories;
using usage::kHistoryReadS;
using usage::UsageHistorySource;

class MemorySource : public UsageHistorySource {
 public:
  std::map<int64_t, std::vector<attribution::UnitRecord>> minutes;
  PodLabelMap labels;
  std::optional<Error> error;
  mutable std::vector<std::pair<int64_t, int64_t>> reads;

  std::string HistoryName() const override { return "memory"; }
  Expected<std::optional<std::pair<int64_t, int64_t>>> HistorySpan() const override {
    if (minutes.empty()) return std::optional<std::pair<int64_t, int64_t>>();
    return std::optional(std::pair(minutes.begin()->first, minutes.rbegin()->first + 60));
  }
  Expected<PodLabelMap> HistoryPodLabels() const override { return labels; }
  Expected<std::map<int64_t, std::vector<attribution::UnitRecord>>> HistoryMinutes(
      int64_t from, int64_t to) const override {
    reads.emplace_back(from, to);
    if (error) return tl::unexpected(*error);
    return std::map<int64_t, std::vector<attribution::UnitRecord>>(minutes.lower_bound(from),
                                                                   minutes.lower_bound(to));
  }
};

attribution::UnitRecord Busy(const std::string& pod, double compute) {
  attribution::UnitRecord u;
  u.unit = {
      "node-a", "GPU-a", "GPU-a", "NVIDIA H100 80GB HBM3", "", domain::SharingMode::kExclusive, 1};
  u.seconds = 60;
  u.memory_capacity_byte_seconds = 80e9 * 60;
  u.owners.push_back({Owner{OwnerKind::kContainer, "ns", pod, "c"}, 8e9 * 60, compute * 60, 0, 60});
  return u;
}

TEST(History, ReadsTheSourceAnHourAtATimeOnWholeHours) {
  MemorySource source;
  const int64_t t0 = 1796083200;  // a midnight, UTC
  for (int m = 0; m < 2 * 1440; m += 30) source.minutes[t0 + 60 * m] = {Busy("chat-0", 0.25)};
  source.labels[{"ns", "chat-0"}] = {{"statefulset.kubernetes.io/pod-name", "chat-0"}};
  const int64_t from = t0 - 1800, to = t0 + 2 * 86400 + 600;  // both mid-hour
  const auto h = BuildHistories(source, from, to);
  ASSERT_TRUE(h) << h.error().message;
  // Contiguous reads over [from, to), none longer than an hour, every inner edge on an hour.
  ASSERT_EQ(source.reads.size(), 50u);
  EXPECT_EQ(source.reads.front(), std::pair(from, t0));
  EXPECT_EQ(source.reads.back(), std::pair(t0 + 2 * 86400, to));
  for (size_t i = 0; i < source.reads.size(); ++i) {
    const auto [a, b] = source.reads[i];
    EXPECT_LE(b - a, kHistoryReadS);
    if (i > 0) {
      EXPECT_EQ(a, source.reads[i - 1].second);
    }
    if (i + 1 < source.reads.size()) {
      EXPECT_EQ(b % 3600, 0);
    }
  }
  ASSERT_EQ(h->size(), 1u);
  const auto& chat = h->begin()->second;
  EXPECT_EQ(chat.key.Name(), "ns/StatefulSet/chat/c");
  EXPECT_EQ(chat.samples, 96u);
  EXPECT_DOUBLE_EQ(chat.peak_compute, 0.25);
  EXPECT_DOUBLE_EQ(chat.peak_memory_bytes, 8e9);
}

TEST(History, ASourceErrorIsTheHistoriesError) {
  MemorySource source;
  source.error = Error{ErrorCode::kUnavailable, "store x: locked"};
  const auto h = BuildHistories(source, 0, 86400);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().message, "store x: locked");
}

}  // namespace
}  // namespace gpumeter::rightsize
