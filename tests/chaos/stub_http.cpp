// A hostile HTTP server for the chaos test: answers every GET and POST, on any path, with STATUS
// and the bytes of BODY_FILE. Prints "port N" once it listens; runs until killed.
// Usage: gpumeter_stub_http STATUS BODY_FILE
#include <fmt/format.h>
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: {} STATUS BODY_FILE\n", argv[0]);
    return 2;
  }
  const int status = std::atoi(argv[1]);
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    fmt::print(stderr, "{}: cannot read\n", argv[2]);
    return 2;
  }
  std::ostringstream body;
  body << in.rdbuf();
  const std::string reply = body.str();
  httplib::Server server;
  const auto answer = [&](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_content(reply, "application/json");
  };
  server.Get(".*", answer);
  server.Post(".*", answer);
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port < 0) return 1;
  fmt::print("port {}\n", port);
  std::fflush(stdout);
  return server.listen_after_bind() ? 0 : 1;
}
