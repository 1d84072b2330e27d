// The event-driven server against clients that would hold a thread-per-connection server: a
// request's headers trickled a byte at a time are cut at the header deadline (libmicrohttpd's own
// timeout, which every byte resets, never would), while a normal request on the same port is
// answered at once.
#include "sinks/metrics/event_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace gpumeter::metrics {
namespace {

using Clock = std::chrono::steady_clock;

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

int PortOf(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// Sends `request`, reads until the server closes; what it answered.
std::string Exchange(int port, const std::string& request) {
  const int fd = Connect(port);
  EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    got.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return got;
}

TEST(EventServer, TrickledHeadersAreCutAtTheDeadlineWhileOthersAreServed) {
  EventServer server([](const HttpRequest& r) {
    return HttpAnswer{
        200, "path " + r.path + " ua " + r.header("User-Agent") + "\n", "text/plain", {}};
  });
  EventServerOptions o;
  o.listen = "127.0.0.1:0";
  o.idle_timeout_s = 5;
  o.header_deadline = std::chrono::milliseconds(600);
  ASSERT_TRUE(server.Start(o));
  const int port = PortOf(server.url());
  const int slow = Connect(port);
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  ASSERT_GT(::send(slow, head.data(), head.size(), MSG_NOSIGNAL), 0);
  const auto t0 = Clock::now();
  // Meanwhile a normal request is answered at once.
  const auto answer =
      Exchange(port, "GET /a HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nConnection: close\r\n\r\n");
  EXPECT_NE(answer.find("HTTP/1.1 200"), std::string::npos) << answer;
  EXPECT_NE(answer.find("path /a ua t"), std::string::npos) << answer;
  // A byte every 100 ms: no read ever idles for the 5 s timeout; the deadline ends it.
  bool closed = false;
  while (!closed && Clock::now() - t0 < std::chrono::seconds(4)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (::send(slow, "a", 1, MSG_NOSIGNAL) != 1) closed = true;
    pollfd p{slow, POLLIN, 0};
    char c;
    if (::poll(&p, 1, 0) == 1 && ::recv(slow, &c, 1, MSG_DONTWAIT) <= 0) closed = true;
  }
  const auto took = Clock::now() - t0;
  ::close(slow);
  EXPECT_TRUE(closed);
  EXPECT_GE(took, std::chrono::milliseconds(500));
  EXPECT_LT(took, std::chrono::milliseconds(2500));
  EXPECT_EQ(server.cut(), 1u);
}

TEST(EventServer, AnswersGetOnlyAndASecondServerCannotTakeThePort) {
  EventServer a([](const HttpRequest&) { return HttpAnswer{200, "ok\n", "text/plain", {}}; });
  EventServerOptions o;
  o.listen = "127.0.0.1:0";
  ASSERT_TRUE(a.Start(o));
  const int port = PortOf(a.url());
  const auto post = Exchange(
      port, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
  EXPECT_NE(post.find("HTTP/1.1 405"), std::string::npos) << post;
  EventServer b([](const HttpRequest&) { return HttpAnswer{}; });
  o.listen = "127.0.0.1:" + std::to_string(port);
  auto taken = b.Start(o);
  ASSERT_FALSE(taken);
  EXPECT_NE(taken.error().message.find("--listen 127.0.0.1:" + std::to_string(port)),
            std::string::npos);
  EXPECT_GE(RaiseOpenFileLimit(), 1024u);
}

// An agent restarted in place (same address) binds at once, although the connections its
// predecessor closed first sit in TIME_WAIT on that port for a minute (SO_REUSEADDR).
TEST(EventServer, ARestartBindsItsPortPastConnectionsInTimeWait) {
  const auto answer = [](const HttpRequest&) { return HttpAnswer{200, "ok\n", "text/plain", {}}; };
  EventServerOptions o;
  o.listen = "127.0.0.1:0";
  auto first = std::make_unique<EventServer>(answer);
  ASSERT_TRUE(first->Start(o));
  const int port = PortOf(first->url());
  // Connection: close: the server closes first, so its end of each goes to TIME_WAIT.
  for (int i = 0; i < 3; ++i)
    ASSERT_NE(Exchange(port, "GET /m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                  .find("HTTP/1.1 200"),
              std::string::npos);
  first.reset();
  EventServer second(answer);
  o.listen = "127.0.0.1:" + std::to_string(port);
  auto started = second.Start(o);
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_NE(Exchange(port, "GET /m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").find("ok"),
            std::string::npos);
}

}  // namespace
}  // namespace gpumeter::metrics
