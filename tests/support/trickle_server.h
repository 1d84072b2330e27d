// A hostile HTTP server on a free loopback port: it accepts a connection, reads nothing, sends
// "HTTP/1.1 200 OK\r\n" and then one byte of a header line that never ends every 100 ms, so that
// no single read of a client ever times out and the headers are never complete. Serves one
// connection at a time on a thread of its own; stops (and joins) on destruction.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace gpumeter::testing {

class TrickleServer {
 public:
  TrickleServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, 8) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("TrickleServer: cannot listen on loopback");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TrickleServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  TrickleServer(const TrickleServer&) = delete;
  TrickleServer& operator=(const TrickleServer&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      const std::string start = "HTTP/1.1 200 OK\r\nX-Slow: ";
      bool open = ::send(c, start.data(), start.size(), MSG_NOSIGNAL) > 0;
      while (open && !stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        open = ::send(c, "x", 1, MSG_NOSIGNAL) == 1;
      }
      ::close(c);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gpumeter::testing
