// The DCGM source against an HTTP server on loopback: fresh and stale series, an exporter that is
// down (connection refused), one that never answers, and one whose page is too large.
#include "sources/dcgm/dcgm_source.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "support/loopback_server.h"
#include "support/trickle_server.h"

namespace gpumeter::dcgm {
namespace {

class FakeExporter {
 public:
  explicit FakeExporter(std::chrono::milliseconds delay = {}) : delay_(delay) {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      for (auto waited = std::chrono::milliseconds(0); waited < delay_ && !stopping_;
           waited += std::chrono::milliseconds(10))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::lock_guard lock(mu_);
      res.set_content(page_, "text/plain; version=0.0.4");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeExporter() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  void SetPage(std::string page) {
    std::lock_guard lock(mu_);
    page_ = std::move(page);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }

 private:
  httplib::Server server_;
  std::chrono::milliseconds delay_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::string page_;
  int port_ = 0;
  std::thread thread_;
};

std::string Page(double activity, double energy_mj) {
  return "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-a\",GPU_I_ID=\"1\",hostname=\"n\"} " +
         std::to_string(activity) +
         "\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"GPU-a\",hostname=\"n\"} " +
         std::to_string(energy_mj) + "\n";
}

DcgmSourceOptions Options(const std::string& url) {
  DcgmSourceOptions o;
  o.url = url;
  o.max_age_s = 90;
  o.deadline = std::chrono::milliseconds(500);
  o.connect_timeout = std::chrono::milliseconds(200);
  return o;
}

const DcgmKey kInstance{"GPU-a", 1};

TEST(DcgmSource, ANewCollectionIsSeenWhenTheGpusSeriesChange) {
  FakeExporter exporter;
  exporter.SetPage(Page(0.5, 1000));
  DcgmSource source(Options(exporter.url()));
  ASSERT_TRUE(source.Refresh(100));
  auto r = source.Current();
  ASSERT_EQ(r->series.count(kInstance), 1u);
  EXPECT_DOUBLE_EQ(r->series.at(kInstance).value, 0.5);
  EXPECT_DOUBLE_EQ(r->series.at(kInstance).seen_s, 100);
  EXPECT_TRUE(r->gpu_fields);
  ASSERT_TRUE(source.Refresh(110));  // same collection: first seen at 100
  EXPECT_DOUBLE_EQ(source.Current()->series.at(kInstance).seen_s, 100);
  exporter.SetPage(Page(0.5, 5000));  // the same activity, a new collection (energy grew)
  ASSERT_TRUE(source.Refresh(130));
  EXPECT_DOUBLE_EQ(source.Current()->series.at(kInstance).seen_s, 130);
  EXPECT_FALSE(source.Current()->series.at(kInstance).stale);
  const auto st = source.Status();
  EXPECT_TRUE(st.up);
  EXPECT_EQ(st.name, "dcgm");
  EXPECT_EQ(st.attempts, 3u);
}

TEST(DcgmSource, ASeriesUnchangedForLongerThanMaxAgeIsStale) {
  FakeExporter exporter;
  exporter.SetPage(Page(0.7, 1000));
  DcgmSource source(Options(exporter.url()));
  ASSERT_TRUE(source.Refresh(0));
  ASSERT_TRUE(source.Refresh(90));
  EXPECT_FALSE(source.Current()->series.at(kInstance).stale);
  ASSERT_TRUE(source.Refresh(90.5));  // the exporter stopped collecting 90.5 s ago
  EXPECT_TRUE(source.Current()->series.at(kInstance).stale);
  EXPECT_TRUE(source.Status().up);  // the exporter answers: up, but its data is old
  exporter.SetPage(Page(0.7, 2000));
  ASSERT_TRUE(source.Refresh(95));
  EXPECT_FALSE(source.Current()->series.at(kInstance).stale);
}

TEST(DcgmSource, AMissingSeriesIsAbsentNotZero) {
  FakeExporter exporter;
  exporter.SetPage("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"GPU-a\"} 1\n");
  DcgmSource source(Options(exporter.url()));
  ASSERT_TRUE(source.Refresh(0));
  EXPECT_TRUE(source.Current()->series.empty());
  EXPECT_EQ(source.Current()->gpus, std::set<std::string>{"GPU-a"});
}

TEST(DcgmSource, ConnectionRefusedIsDownAndForgetsTheLastValues) {
  std::string url;
  DcgmSourceOptions o;
  {
    FakeExporter exporter;
    exporter.SetPage(Page(0.5, 1000));
    o = Options(exporter.url());
  }  // the port is closed now
  FakeExporter live;
  live.SetPage(Page(0.5, 1000));
  DcgmSource good(Options(live.url()));
  ASSERT_TRUE(good.Refresh(0));
  DcgmSource source(o);
  const auto r = source.Refresh(0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(o.url), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("unreachable"), std::string::npos) << r.error().message;
  EXPECT_TRUE(source.Current()->series.empty());
  const auto st = source.Status();
  EXPECT_FALSE(st.up);
  EXPECT_EQ(st.failures, 1u);
  EXPECT_FALSE(st.last_error.empty());
}

TEST(DcgmSource, AServerThatNeverAnswersCostsAtMostTheDeadline) {
  FakeExporter exporter(std::chrono::milliseconds(5000));
  exporter.SetPage(Page(0.5, 1000));
  DcgmSource source(Options(exporter.url()));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = source.Refresh(0);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r);
  EXPECT_LT(took, std::chrono::milliseconds(1500));
  EXPECT_TRUE(source.Current()->series.empty());
  EXPECT_FALSE(source.Status().up);
}

TEST(DcgmSource, HeadersTrickledByteByByteCostAtMostTheDeadline) {
  testing::TrickleServer server;  // no read waits 100 ms: only the overall deadline ends it
  DcgmSource source(Options(server.url() + "/metrics"));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = source.Refresh(0);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no complete reply within 500 ms"), std::string::npos)
      << r.error().message;
  EXPECT_LT(took, std::chrono::seconds(3));
  EXPECT_FALSE(source.Status().up);
}

TEST(DcgmSource, APageLargerThanTheCapIsRefused) {
  FakeExporter exporter;
  exporter.SetPage(Page(0.5, 1000) + std::string(4096, '#') + "\n");
  auto o = Options(exporter.url());
  o.max_reply_bytes = 1024;
  DcgmSource source(o);
  const auto r = source.Refresh(0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("larger than 1024"), std::string::npos) << r.error().message;
}

TEST(DcgmSource, AMalformedPageIsAFailureNamingTheLine) {
  FakeExporter exporter;
  exporter.SetPage("DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-a\" 0.5\n");
  DcgmSource source(Options(exporter.url()));
  const auto r = source.Refresh(0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("line 1"), std::string::npos) << r.error().message;
}

TEST(DcgmSource, TheThreadReadsUntilStopped) {
  FakeExporter exporter;
  exporter.SetPage(Page(0.5, 1000));
  auto o = Options(exporter.url());
  o.poll_interval_s = 0.05;
  DcgmSource source(o);
  source.Start();
  for (int i = 0; i < 200 && source.Status().attempts < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  source.Stop();
  const auto attempts = source.Status().attempts;
  EXPECT_GE(attempts, 3u);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  EXPECT_EQ(source.Status().attempts, attempts);
}

// A server that sends `page` in HTTP chunks of `piece` bytes.
std::unique_ptr<testing::LoopbackServer> ChunkedExporter(const std::string& page, size_t piece) {
  return std::make_unique<testing::LoopbackServer>([page, piece](httplib::Server& s) {
    s.Get("/metrics", [page, piece](const httplib::Request&, httplib::Response& r) {
      r.set_chunked_content_provider("text/plain", [page, piece](size_t at, httplib::DataSink& k) {
        if (at >= page.size()) {
          k.done();
          return true;
        }
        return k.write(page.data() + at, std::min(piece, page.size() - at));
      });
    });
  });
}

// Read as it arrives, in pieces that cut lines, labels and numbers: the reading is the one of the
// same page handed over whole.
TEST(DcgmSource, APageInSmallPiecesReadsAsThePageWhole) {
  std::string page = Page(0.25, 1000);
  for (int i = 0; i < 50; ++i)
    page += "node_cpu_seconds_total{cpu=\"" + std::to_string(i) + "\"} " + std::to_string(i) + "\n";
  page += "DCGM_FI_PROF_DRAM_ACTIVE{UUID=\"GPU-a\",GPU_I_ID=\"1\",hostname=\"n\"} 0.5\n";
  const auto server = ChunkedExporter(page, 7);
  DcgmSource streamed(Options(server->url() + "/metrics"));
  ASSERT_TRUE(streamed.Refresh(100));
  DcgmSource whole(Options("http://127.0.0.1:1/metrics"));
  ASSERT_TRUE(whole.Ingest(page, 100));
  const auto a = streamed.Current();
  const auto b = whole.Current();
  ASSERT_EQ(a->series.size(), 2u);
  ASSERT_EQ(a->series.size(), b->series.size());
  for (const auto& [key, s] : b->series) {
    ASSERT_EQ(a->series.count(key), 1u);
    EXPECT_EQ(a->series.at(key).value, s.value);
    EXPECT_EQ(a->series.at(key).seen_s, s.seen_s);
  }
  EXPECT_EQ(a->hosts, b->hosts);
  EXPECT_EQ(a->gpus, b->gpus);
  EXPECT_TRUE(a->gpu_fields);
}

// A malformed page over the cap is the cap's error, as when a page was read whole first.
TEST(DcgmSource, ThePagesCapComesBeforeItsFirstBadLine) {
  const auto server = ChunkedExporter("broken{\n" + std::string(8192, '#') + "\n", 512);
  auto o = Options(server->url() + "/metrics");
  o.max_reply_bytes = 4096;
  DcgmSource source(o);
  const auto r = source.Refresh(0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("larger than 4096"), std::string::npos) << r.error().message;
}

// A page with no line end (a wrong URL serving a binary) is refused at the line cap, named.
TEST(DcgmSource, ALineOverTheLineCapIsRefusedNamingIt) {
  const auto server = ChunkedExporter(Page(0.5, 1) + std::string(200000, 'x'), 4096);
  DcgmSource source(Options(server->url() + "/metrics"));
  const auto r = source.Refresh(0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/metrics: line 3: longer than 65536 bytes (refused): xxx"),
            std::string::npos)
      << r.error().message;
  EXPECT_TRUE(source.Current()->series.empty());
}

}  // namespace
}  // namespace gpumeter::dcgm
