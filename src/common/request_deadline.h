// An overall deadline for one HTTP request made with cpp-httplib. httplib's timeouts are per
// socket read, and the content receiver (where a caller can check the clock) sees only the body:
// a server that sends a header byte every second held a request for as long as it liked.
// RequestDeadline stops the client from a thread of its own once the deadline passes, as httplib
// allows from another thread (ClientImpl::stop shuts the socket down under its mutex, and the
// request fails with a read or write error), and repeats every 50 ms until the request returns:
// a stop that lands between connecting and sending finds no socket yet.
// Declare it after the client and keep it for the request: its destructor ends the thread before
// the client goes. `Client` is httplib::Client (a template, so common/ needs no httplib).
// fired() is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpumeter {

template <class Client>
class RequestDeadline {
 public:
  RequestDeadline(Client& client, std::chrono::steady_clock::time_point deadline)
      : thread_([this, &client, deadline] { Watch(client, deadline); }) {}
  ~RequestDeadline() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  RequestDeadline(const RequestDeadline&) = delete;
  RequestDeadline& operator=(const RequestDeadline&) = delete;

  // True once the client was stopped for running past the deadline.
  bool fired() const { return fired_.load(); }

 private:
  void Watch(Client& client, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
    fired_ = true;
    do client.stop();
    while (!cv_.wait_for(lock, std::chrono::milliseconds(50), [this] { return done_; }));
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace gpumeter
