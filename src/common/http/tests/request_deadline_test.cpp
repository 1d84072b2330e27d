// RequestDeadline against a stand-in client: at the deadline the socket the client recorded is
// shut down (so a read blocked in a TLS handshake ends) and stop() is called; a socket number
// reused by another connection is left alone; with no thread to be had it does nothing.
#include "common/http/request_deadline.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>

namespace gpumeter {
namespace {

using namespace std::chrono_literals;

// What RequestDeadline needs of httplib::Client.
struct StandInClient {
  std::function<void(int)> socket_options;
  std::atomic<int> stops{0};
  int clears = 0;
  void stop() { ++stops; }
  void set_socket_options(std::function<void(int)> fn) {
    if (!fn) ++clears;
    socket_options = std::move(fn);
  }
};

// A connected pair of sockets, closed on destruction.
struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd), 0); }
  ~Pair() { Close(); }
  void Close() {
    for (int& f : fd)
      if (f >= 0) ::close(f), f = -1;
  }
  // 0: the end was shut down (reads see end of file at once); -1 with EAGAIN: still open.
  ssize_t Peek() const {
    char c;
    return ::recv(fd[0], &c, 1, MSG_DONTWAIT);
  }
};

TEST(RequestDeadline, AtTheDeadlineTheRecordedSocketIsShutDownAndTheClientStopped) {
  StandInClient client;
  Pair p;
  {
    const RequestDeadline deadline(client, std::chrono::steady_clock::now() + 100ms);
    ASSERT_TRUE(client.socket_options) << "the hook is installed for the request";
    client.socket_options(p.fd[0]);  // httplib makes the request's socket
    EXPECT_TRUE(deadline.armed());
    EXPECT_FALSE(deadline.fired());
    EXPECT_EQ(p.Peek(), -1) << "open before the deadline";
    for (int i = 0; i < 200 && client.stops == 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(deadline.fired());
    EXPECT_GE(client.stops.load(), 1);
    EXPECT_EQ(p.Peek(), 0) << "a read blocked on the socket (a trickled handshake) ends";
  }
  EXPECT_FALSE(client.socket_options) << "the hook is cleared with the deadline";
}

TEST(RequestDeadline, ARequestDoneBeforeTheDeadlineIsLeftAlone) {
  StandInClient client;
  Pair p;
  {
    const RequestDeadline deadline(client, std::chrono::steady_clock::now() + 10s);
    client.socket_options(p.fd[0]);
  }  // the request returned: the watcher ends at once, not at the deadline
  EXPECT_EQ(client.stops.load(), 0);
  EXPECT_EQ(p.Peek(), -1);
}

TEST(RequestDeadline, ASocketNumberReusedByAnotherConnectionIsNotShutDown) {
  StandInClient client;
  const RequestDeadline deadline(client, std::chrono::steady_clock::now() + 100ms);
  auto mine = std::make_unique<Pair>();
  const int number = mine->fd[0];
  client.socket_options(number);
  mine.reset();  // the request's socket closed; the next socket may take its number
  Pair other;
  ASSERT_EQ(other.fd[0], number) << "the lowest free descriptor is reused";
  for (int i = 0; i < 200 && client.stops == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(deadline.fired());
  EXPECT_EQ(other.Peek(), -1) << "another connection's socket is never cut";
}

TEST(RequestDeadline, NoThreadToBeHadLeavesTheRequestToItsReadTimeouts) {
  StandInClient client;
  Pair p;
  {
    const RequestDeadline deadline(
        client, std::chrono::steady_clock::now() + 10ms, [](std::function<void()>) -> std::thread {
          throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
        });
    client.socket_options(p.fd[0]);
    EXPECT_FALSE(deadline.armed());
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(deadline.fired());
  }
  EXPECT_EQ(client.stops.load(), 0);
  EXPECT_EQ(p.Peek(), -1);
  EXPECT_FALSE(client.socket_options);
}

}  // namespace
}  // namespace gpumeter
