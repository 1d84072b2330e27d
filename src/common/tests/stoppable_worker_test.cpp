// The background thread every self-reading source runs on: Stop must return promptly whether the
// body sleeps or is blocked in a call, including a call that registered its cut before it began.
#include "common/stoppable_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace gpumeter {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A blocking call that only its cut ends, as an HTTP request the server never answers. A cut
// while nothing waits is lost (a socket not yet opened has nothing to shut), so only a cut
// repeated after Run began ends it; a Run not cut within 10 s gives up and says so.
class BlockingCall {
 public:
  void Run() {
    std::unique_lock lock(mu_);
    ++calls_;
    waiting_ = true;
    if (!cv_.wait_for(lock, std::chrono::seconds(10), [this] { return cut_; })) timed_out_ = true;
    waiting_ = cut_ = false;
  }
  void Cut() {
    std::lock_guard lock(mu_);
    if (!waiting_) return;
    cut_ = true;
    cv_.notify_all();
  }
  bool timed_out() {
    std::lock_guard lock(mu_);
    return timed_out_;
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool cut_ = false, waiting_ = false, timed_out_ = false;
  int calls_ = 0;
};

double SecondsSince(steady_clock::time_point t) {
  return std::chrono::duration<double>(steady_clock::now() - t).count();
}

TEST(StoppableWorker, StopWakesALongSleep) {
  StoppableWorker w;
  std::atomic<int> rounds{0};
  w.Start([&] {
    do ++rounds;
    while (w.SleepFor(std::chrono::hours(1)));
  });
  while (rounds.load() == 0) std::this_thread::sleep_for(milliseconds(1));
  const auto t = steady_clock::now();
  w.Stop();
  EXPECT_LT(SecondsSince(t), 5.0);  // not the hour: a hang would fail by the test's timeout
  EXPECT_EQ(rounds.load(), 1);
  EXPECT_TRUE(w.stopping());
}

TEST(StoppableWorker, StopCutsTheCallInFlightAndNoNewCallStarts) {
  StoppableWorker w;
  BlockingCall call;
  std::atomic<int> after_stop{0};
  w.Start([&] {
    while (w.BeginCall([&] { call.Cut(); })) {
      call.Run();
      if (!w.EndCall()) break;
    }
    // Stopping: a call that registers now is refused.
    if (!w.BeginCall([] {})) ++after_stop;
  });
  while (call.calls() == 0) std::this_thread::sleep_for(milliseconds(1));
  w.Stop();
  EXPECT_EQ(call.calls(), 1);
  EXPECT_FALSE(call.timed_out());
  EXPECT_EQ(after_stop.load(), 1);
}

TEST(StoppableWorker, ACutThatCameBeforeTheCallBlockedIsRepeated) {
  // The body registers, then waits before blocking (a request opening its socket): the first cut
  // finds nothing to cut, and only a later one ends the call.
  StoppableWorker w;
  BlockingCall call;
  std::atomic<bool> registered{false};
  w.Start([&] {
    if (!w.BeginCall([&] { call.Cut(); })) return;
    registered = true;
    std::this_thread::sleep_for(milliseconds(100));
    call.Run();  // would block for ever if Stop cut only once, before this
    w.EndCall();
  });
  while (!registered.load()) std::this_thread::sleep_for(milliseconds(1));
  w.Stop();
  EXPECT_EQ(call.calls(), 1);
  EXPECT_FALSE(call.timed_out()) << "the first cut, before the call blocked, was not repeated";
}

TEST(StoppableWorker, StartsAgainAfterStopAndStartIsIdempotent) {
  StoppableWorker w;
  std::atomic<int> runs{0};
  auto body = [&] {
    ++runs;
    while (w.SleepFor(std::chrono::hours(1))) {
    }
  };
  w.Start(body);
  w.Start(body);  // running: nothing
  while (runs.load() == 0) std::this_thread::sleep_for(milliseconds(1));
  w.Stop();
  EXPECT_EQ(runs.load(), 1);
  w.Start(body);
  EXPECT_FALSE(w.stopping());
  w.Stop();
  EXPECT_EQ(runs.load(), 2);
}

}  // namespace
}  // namespace gpumeter
