// OnDemandPool: at most max_threads tasks at once, the rest in order; threads start with work and
// end after lingering idle; shutdown runs what is queued and joins; with no thread to be had, a
// task still runs (on a live thread, or on the caller's when none is alive).
#include "sinks/metrics/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <system_error>
#include <vector>

namespace gpumeter::metrics {
namespace {

// Opens a gate on destruction (declared after the pool, it goes first): a failed ASSERT must not
// leave the pool's destructor waiting for tasks blocked on the gate.
struct Release {
  std::promise<void>& gate;
  bool done = false;
  void operator()() {
    if (!done) gate.set_value(), done = true;
  }
  ~Release() { (*this)(); }
};

template <typename F>
bool Eventually(F f) {
  for (int i = 0; i < 500 && !f(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return f();
}

TEST(OnDemandPool, AtMostMaxThreadsAtOnceTheFirstQueuedFirst) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> running{0}, peak{0};
  std::mutex mu;
  std::vector<int> order;
  OnDemandPool pool(2, std::chrono::seconds(10));
  Release open{release};
  for (int i = 0; i < 5; ++i)
    pool.enqueue([&, i] {
      const int now = ++running;
      for (int p = peak; now > p && !peak.compare_exchange_weak(p, now);) {
      }
      {
        std::lock_guard lock(mu);
        order.push_back(i);  // as it starts
      }
      gate.wait();
      --running;
    });
  ASSERT_TRUE(Eventually([&] { return running == 2; }));
  EXPECT_EQ(pool.threads(), 2u);
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(order.size(), 2u);
    EXPECT_EQ(std::min(order[0], order[1]), 0);
    EXPECT_EQ(std::max(order[0], order[1]), 1) << "the first two queued run first";
  }
  open();
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return order.size() == 5 && running == 0;
  }));
  EXPECT_EQ(peak, 2);
}

TEST(OnDemandPool, IdleThreadsEndAndNewWorkStartsOneAgain) {
  OnDemandPool pool(4, std::chrono::milliseconds(50));
  std::atomic<int> done{0};
  for (int i = 0; i < 3; ++i) pool.enqueue([&] { ++done; });
  ASSERT_TRUE(Eventually([&] { return done == 3; }));
  ASSERT_TRUE(Eventually([&] { return pool.threads() == 0; })) << "no thread outlives its linger";
  pool.enqueue([&] { ++done; });
  ASSERT_TRUE(Eventually([&] { return done == 4; }));
  EXPECT_LE(pool.threads(), 1u);
}

TEST(OnDemandPool, ShutdownRunsWhatIsQueuedInOrderThenJoins) {
  std::atomic<int> done{0};
  std::vector<int> order;  // written by the pool's one thread, read after the join
  {
    OnDemandPool pool(1, std::chrono::seconds(10));
    for (int i = 0; i < 4; ++i)
      pool.enqueue([&, i] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        order.push_back(i);
        ++done;
      });
    pool.shutdown();
    EXPECT_EQ(done, 4);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(pool.threads(), 0u);
    pool.enqueue([&] { ++done; });  // after shutdown: dropped
  }
  EXPECT_EQ(done, 4);
}

// Refuses every thread after the first `allowed`, as pthread_create does at the thread limit.
StartThread Refusing(int allowed, std::atomic<int>& refused) {
  return [allowed, &refused,
          started = std::make_shared<std::atomic<int>>(0)](std::function<void()> fn) {
    if (++*started > allowed) {
      ++refused;
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    }
    return std::thread(std::move(fn));
  };
}

TEST(OnDemandPool, NoThreadToBeHadAndNoneAliveRunsTheTaskOnTheCaller) {
  std::atomic<int> refused{0};
  OnDemandPool pool(4, std::chrono::seconds(10), Refusing(0, refused));
  const auto caller = std::this_thread::get_id();
  std::thread::id ran_on;
  pool.enqueue([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(ran_on, caller) << "run at once, before enqueue returns";
  EXPECT_EQ(pool.threads(), 0u);
}

TEST(OnDemandPool, NoThreadToBeHadQueuesTheTaskForALiveThread) {
  std::atomic<int> refused{0};
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> first_running{false};
  std::mutex mu;
  std::vector<std::thread::id> ran_on;
  OnDemandPool pool(4, std::chrono::seconds(10), Refusing(1, refused));
  Release open{release};
  pool.enqueue([&] {
    first_running = true;
    gate.wait();
    std::lock_guard lock(mu);
    ran_on.push_back(std::this_thread::get_id());
  });
  ASSERT_TRUE(Eventually([&] { return first_running.load(); }));
  pool.enqueue([&] {
    std::lock_guard lock(mu);
    ran_on.push_back(std::this_thread::get_id());
  });
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(pool.threads(), 1u);
  {
    std::lock_guard lock(mu);
    EXPECT_TRUE(ran_on.empty()) << "the second task waits for the busy thread, not the caller";
  }
  open();
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return ran_on.size() == 2;
  }));
  std::lock_guard lock(mu);
  EXPECT_EQ(ran_on[0], ran_on[1]) << "both on the one thread the pool could start";
  EXPECT_NE(ran_on[1], std::this_thread::get_id());
}

}  // namespace
}  // namespace gpumeter::metrics
