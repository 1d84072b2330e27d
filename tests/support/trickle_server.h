// A hostile server on a free loopback port: it accepts a connection, reads nothing, sends a
// preamble and then one more byte every 100 ms, so that no single read of a client ever times out
// and what it waits for never completes. By default the preamble is "HTTP/1.1 200 OK" and a
// header line that never ends; TlsHandshake() starts a TLS record of 16 KiB (as a ServerHello
// would), so an https client waits in its handshake. Serves one connection at a time on a thread
// of its own; stops (and joins) on destruction.
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
#include <utility>

namespace gpumeter::testing {

class TrickleServer {
 public:
  static constexpr const char* kHttpHeaders = "HTTP/1.1 200 OK\r\nX-Slow: ";
  // A TLS handshake record (type 22, TLS 1.2) announcing 0x4000 bytes.
  static std::string TlsHandshake() { return std::string("\x16\x03\x03\x40\x00", 5); }

  explicit TrickleServer(std::string preamble = kHttpHeaders) : preamble_(std::move(preamble)) {
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
  std::string url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      bool open = ::send(c, preamble_.data(), preamble_.size(), MSG_NOSIGNAL) > 0;
      while (open && !stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        open = ::send(c, "x", 1, MSG_NOSIGNAL) == 1;
      }
      ::close(c);
    }
  }

  const std::string preamble_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gpumeter::testing
