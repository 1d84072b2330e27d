// Reads run together: results in the reads' order, never more at once than asked, and all of them
// done even when no thread can be had.
#include "common/all_at_once.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace gpumeter {
namespace {

// Reads that each wait (up to 2 s) until `together` of them have run at once, and count the most
// that did: a pool of that size reaches it at once, a smaller one times out.
std::vector<std::function<int()>> Reads(int n, int together, std::atomic<int>& running,
                                        std::atomic<int>& most) {
  std::vector<std::function<int()>> reads;
  for (int i = 0; i < n; ++i)
    reads.emplace_back([i, together, &running, &most] {
      const int now = ++running;
      for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
      }
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (most < together && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      --running;
      return i * i;
    });
  return reads;
}

TEST(AllAtOnce, ResultsInOrderAndAtMostAsManyAtOnceAsAsked) {
  for (const size_t at_once : {size_t{1}, size_t{2}, size_t{3}}) {
    std::atomic<int> running{0}, most{0};
    // 6 reads: a multiple of every pool size, so no read waits for a partner that never comes.
    const auto out = AllAtOnce(Reads(6, static_cast<int>(at_once), running, most), at_once);
    ASSERT_EQ(out.size(), 6u);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], i * i);
    EXPECT_EQ(most, static_cast<int>(at_once));
  }
}

TEST(AllAtOnce, WithNoThreadToBeHadTheCallerDoesThemAll) {
  std::atomic<int> running{0}, most{0};
  const StartThread refuse = [](std::function<void()>) -> std::thread {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
  };
  const auto out = AllAtOnce(Reads(4, 1, running, most), 3, refuse);
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], i * i);
  EXPECT_EQ(most, 1);
}

TEST(AllAtOnce, NoReadsIsNoResults) {
  EXPECT_TRUE(AllAtOnce(std::vector<std::function<int()>>{}, 2).empty());
}

}  // namespace
}  // namespace gpumeter
