// The fetcher: Get() never waits for a fetch in flight; failures say since when, and a good
// fetch clears them while the last good frame is kept through them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "sinks/top/fetcher.h"

namespace gpumeter::top {
namespace {

using namespace std::chrono_literals;

// Waits (at most 5 s) until `done` holds.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(TopFetcher, GetDoesNotWaitForASlowFetchAndFailuresSaySinceWhen) {
  std::atomic<int> calls{0};
  std::atomic<bool> fail{false}, slow{false};
  Fetcher fetcher(
      [&](int64_t now) -> Expected<FrameData> {
        ++calls;
        if (slow) std::this_thread::sleep_for(1500ms);
        if (fail) return MakeError(ErrorCode::kUnavailable, "agent gone");
        FrameData f;
        f.at_unix_s = now;
        return f;
      },
      20ms);
  ASSERT_TRUE(Eventually([&] { return fetcher.Get().frame != nullptr; }));
  fail = true;
  ASSERT_TRUE(Eventually([&] { return fetcher.Get().failing_since_unix_s.has_value(); }));
  auto latest = fetcher.Get();
  EXPECT_EQ(latest.error, "agent gone");
  ASSERT_NE(latest.frame, nullptr) << "the last good frame is kept while fetches fail";
  const auto since = *latest.failing_since_unix_s;
  slow = true;  // the next fetches hang for 1.5 s each
  const int before = calls;
  ASSERT_TRUE(Eventually([&] { return calls > before; }));
  const auto start = std::chrono::steady_clock::now();
  latest = fetcher.Get();  // while a fetch hangs
  EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_EQ(*latest.failing_since_unix_s, since) << "since the first failure of the streak";
  slow = false, fail = false;
  ASSERT_TRUE(Eventually([&] { return !fetcher.Get().failing_since_unix_s.has_value(); }));
  EXPECT_TRUE(fetcher.Get().error.empty());
}

}  // namespace
}  // namespace gpumeter::top
