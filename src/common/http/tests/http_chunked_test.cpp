// GetOkChunked against servers on loopback: the body handed over in pieces and never kept, with
// GetOk's cap, status and deadline errors; a gzip body unpacked as it streams, whatever the
// pieces the compressed bytes arrive in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/http/client.h"
#include "support/loopback_server.h"
#include "support/trickle_server.h"

namespace gpumeter::http {
namespace {

using ::testing::HasSubstr;

Client Open(const std::string& url, size_t max_bytes = 16u << 20, bool gzip = false,
            std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
  Endpoint e;
  e.what = "--dcgm-metrics";
  e.url = url;
  e.accept_gzip = gzip;
  e.cap_hint = "--max-reply-mb";
  auto c = Client::Open(e, {.connect_timeout = std::chrono::milliseconds(500),
                            .read_timeout = {},
                            .deadline = deadline,
                            .max_bytes = max_bytes});
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message);
  return std::move(*c);
}

std::string Page(size_t lines) {
  std::string page;
  for (size_t i = 0; i < lines; ++i)
    page += "DCGM_FI_DEV_POWER_USAGE{gpu=\"" + std::to_string(i % 8) + "\",pod=\"p" +
            std::to_string(i) + "\"} " + std::to_string(i * 7) + "\n";
  return page;
}

TEST(HttpChunked, TheBodyIsHandedOverInPieces) {
  const std::string body = Page(20000);  // ~1 MB
  testing::LoopbackServer server([&](httplib::Server& s) {
    s.Get("/metrics", [&](const httplib::Request&, httplib::Response& r) {
      r.set_content(body, "text/plain");
    });
  });
  std::string got;
  size_t pieces = 0;
  auto r = Open(server.url()).GetOkChunked("/metrics", [&](std::string_view chunk) {
    got += chunk;
    ++pieces;
  });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(got, body);
  EXPECT_GT(pieces, 1u);
}

// The cap counts what is handed over and its error is Get's; a status other than 200 is GetOk's
// error, byte for byte, and its body is not handed over.
TEST(HttpChunked, TheCapAndARefusalAreGetOksErrors) {
  const std::string refusal = "overloaded\n\x1b[31m" + std::string(1000, 'z');
  testing::LoopbackServer server([&](httplib::Server& s) {
    s.Get("/big", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(std::string(4096, 'x'), "text/plain");
    });
    s.Get("/down", [&](const httplib::Request&, httplib::Response& r) {
      r.status = 503;
      r.set_content(refusal, "text/plain");
    });
  });
  auto c = Open(server.url(), 1024);
  size_t handed = 0;
  const auto count = [&handed](std::string_view chunk) { handed += chunk.size(); };
  auto big = c.GetOkChunked("/big", count);
  ASSERT_FALSE(big);
  EXPECT_THAT(big.error().message, HasSubstr("/big: reply larger than 1024 bytes (refused; "
                                             "raise it with --max-reply-mb)"));
  EXPECT_LE(handed, 1024u);
  auto wide = Open(server.url());
  handed = 0;
  auto down = wide.GetOkChunked("/down", count);
  ASSERT_FALSE(down);
  const auto whole = wide.GetOk("/down");
  ASSERT_FALSE(whole);
  EXPECT_EQ(down.error().message, whole.error().message);
  EXPECT_THAT(down.error().message, HasSubstr("HTTP 503: overloaded\\x0a\\x1b[31mzzz"));
  EXPECT_THAT(down.error().message, HasSubstr("(1016 bytes)"));
  EXPECT_EQ(handed, 0u);
}

TEST(HttpChunked, TheDeadlineEndsATrickledReply) {
  testing::TrickleServer server;
  auto r = Open(server.url(), 1024, false, std::chrono::milliseconds(500))
               .GetOkChunked("/metrics", [](std::string_view) {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("no complete reply within 500 ms"));
}

// A gzip body sent in two HTTP chunks, cut at every byte of the compressed stream (inside its
// header, a deflate block, its trailer): unpacked as it arrives, the page is whole every time.
// And a small compressed body that unpacks past the cap is refused.
TEST(HttpChunked, GzipUnpacksAsItStreamsWhereverTheCompressedBytesAreCut) {
  const std::string page = Page(60);
  std::string gz;
  httplib::detail::gzip_compressor zip;
  ASSERT_TRUE(zip.compress(page.data(), page.size(), true, [&gz](const char* d, size_t n) {
    gz.append(d, n);
    return true;
  }));
  testing::LoopbackServer server([&](httplib::Server& s) {
    s.Get("/gz", [&](const httplib::Request& q, httplib::Response& r) {
      const size_t cut = std::stoul(q.get_param_value("cut"));
      r.set_header("Content-Encoding", "gzip");
      // Not a text type: httplib would compress it again.
      r.set_chunked_content_provider("application/octet-stream",
                                     [&gz, cut](size_t offset, httplib::DataSink& sink) {
                                       if (offset >= gz.size()) {
                                         sink.done();
                                         return true;
                                       }
                                       const size_t end = offset < cut ? cut : gz.size();
                                       return sink.write(gz.data() + offset, end - offset);
                                     });
    });
  });
  auto c = Open(server.url(), 1u << 20, true);
  for (size_t cut = 1; cut < gz.size(); ++cut) {
    std::string got;
    auto r = c.GetOkChunked("/gz", [&got](std::string_view chunk) { got += chunk; },
                            {{"cut", std::to_string(cut)}});
    ASSERT_TRUE(r) << cut << ": " << r.error().message;
    ASSERT_EQ(got, page) << "cut at " << cut << " of " << gz.size();
  }
  auto capped = Open(server.url(), page.size() - 1, true);
  auto over = capped.GetOkChunked("/gz", [](std::string_view) {}, {{"cut", "10"}});
  ASSERT_FALSE(over);
  EXPECT_THAT(over.error().message, HasSubstr("reply larger than"));
}

}  // namespace
}  // namespace gpumeter::http
