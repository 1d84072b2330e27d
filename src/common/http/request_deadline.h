// An overall deadline for one HTTP request made with cpp-httplib. httplib's timeouts are per
// socket read, and the content receiver (where a caller can check the clock) sees only the body:
// a server that sends a header byte every second held a request for as long as it liked.
//
// RequestDeadline watches from a thread of its own. At the deadline it shuts the request's socket
// down (recorded through the client's socket-options hook when the socket is made), so that any
// blocked read, write or TLS handshake fails at once, then calls client.stop(), repeating every
// 50 ms until the request returns. Both are needed: httplib 0.11 connects and runs the TLS
// handshake under the mutex that stop() takes, so stop() alone waited out a server that trickled
// its handshake; and a shutdown alone misses a socket made after it.
//
// A socket's number can be closed and reused by another thread's socket just as the deadline
// passes: the watcher shuts a socket down only while its number still names the same socket
// (inode), so another connection is never cut.
//
// When no thread can be started (std::system_error: the process's thread limit), the request
// runs under httplib's per-read timeouts only; armed() says so, and nothing is thrown.
//
// Declare it after the client and keep it for the request: its destructor ends the thread and
// clears the hook before the client goes. It replaces the client's socket options (gpumeter sets
// none). `Client` is httplib::Client or any class with stop() and set_socket_options(fn(int)).
// fired() and armed() are thread-safe.
#pragma once

#include <sys/socket.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

#include "common/start_thread.h"

namespace gpumeter {

template <class Client>
class RequestDeadline {
 public:
  // `start` is replaced only in tests, to refuse the thread (common/start_thread.h).
  RequestDeadline(Client& client, std::chrono::steady_clock::time_point deadline,
                  const StartThread& start = nullptr)
      : client_(client) {
    client_.set_socket_options([this](int sock) { Record(sock); });
    try {
      thread_ = StartWith(start, [this, deadline] { Watch(deadline); });
    } catch (const std::system_error&) {
      // No watcher: httplib's per-read timeouts still end the request (header comment).
    }
  }
  ~RequestDeadline() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    client_.set_socket_options(nullptr);
  }
  RequestDeadline(const RequestDeadline&) = delete;
  RequestDeadline& operator=(const RequestDeadline&) = delete;

  // True once the client was stopped for running past the deadline. A request that returned a
  // complete reply is complete even so: check the result first.
  bool fired() const { return fired_.load(); }
  // False when no watcher thread could be started (no overall deadline for this request).
  bool armed() const { return thread_.joinable(); }

 private:
  // On the requesting thread, as httplib makes the socket (before it connects).
  void Record(int sock) {
    struct stat st {};
    if (::fstat(sock, &st) != 0) return;
    std::lock_guard lock(mu_);
    sock_ = sock;
    sock_ino_ = st.st_ino;
    sock_dev_ = st.st_dev;
  }

  // Under mu_: shuts the recorded socket down if its number still names it.
  void ShutdownRecordedLocked() {
    if (sock_ < 0) return;
    struct stat st {};
    if (::fstat(sock_, &st) == 0 && st.st_ino == sock_ino_ && st.st_dev == sock_dev_)
      ::shutdown(sock_, SHUT_RDWR);  // best effort: the request then fails on its next read
  }

  void Watch(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
    fired_ = true;
    do {
      ShutdownRecordedLocked();
      lock.unlock();  // stop() may wait for a connect; Record() must not wait behind it
      client_.stop();
      lock.lock();
    } while (!cv_.wait_for(lock, std::chrono::milliseconds(50), [this] { return done_; }));
  }

  Client& client_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  int sock_ = -1;  // the latest socket the client made for this request
  ino_t sock_ino_ = 0;
  dev_t sock_dev_ = 0;
  std::atomic<bool> fired_{false};
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace gpumeter
