// A hostile HTTP server for the chaos test: answers every GET and POST, on any path, with STATUS
// and the bytes of BODY_FILE. MODE changes how the body is sent:
//   whole    (default) the body at once
//   endless  the body, then it again, and again, as fast as the client reads (chunked, no end)
//   trickle  the body one byte every 500 ms (chunked)
//   big:N    the body repeated until N MiB have been sent (Content-Length given)
// Prints "port N" once it listens; runs until killed.
// Usage: gpumeter_stub_http STATUS BODY_FILE [MODE]
#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

void Answer(const std::string& mode, const std::string& body, httplib::Response& res) {
  if (mode == "endless") {
    res.set_chunked_content_provider("text/plain", [body](size_t, httplib::DataSink& sink) {
      return sink.write(body.data(), body.size());
    });
  } else if (mode == "trickle") {
    res.set_chunked_content_provider("text/plain", [body](size_t offset, httplib::DataSink& sink) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (offset >= body.size()) {
        sink.done();
        return true;
      }
      return sink.write(body.data() + offset, 1);
    });
  } else if (mode.rfind("big:", 0) == 0) {
    const size_t total = std::strtoull(mode.c_str() + 4, nullptr, 10) << 20;
    res.set_content_provider(total, "text/plain",
                             [body, total](size_t offset, size_t, httplib::DataSink& sink) {
                               const size_t at = offset % body.size();
                               const size_t n = std::min(body.size() - at, total - offset);
                               return sink.write(body.data() + at, n);
                             });
  } else {
    res.set_content(body, "application/json");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fmt::print(stderr, "usage: {} STATUS BODY_FILE [whole|endless|trickle|big:MIB]\n", argv[0]);
    return 2;
  }
  const int status = std::atoi(argv[1]);
  const std::string mode = argc == 4 ? argv[3] : "whole";
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    fmt::print(stderr, "{}: cannot read\n", argv[2]);
    return 2;
  }
  std::ostringstream body;
  body << in.rdbuf();
  const std::string reply = body.str();
  if (reply.empty() && mode != "whole") {
    fmt::print(stderr, "{}: a {} body cannot be empty\n", argv[2], mode);
    return 2;
  }
  httplib::Server server;
  const auto answer = [&](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    Answer(mode, reply, res);
  };
  server.Get(".*", answer);
  server.Post(".*", answer);
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port < 0) return 1;
  fmt::print("port {}\n", port);
  std::fflush(stdout);
  return server.listen_after_bind() ? 0 : 1;
}
