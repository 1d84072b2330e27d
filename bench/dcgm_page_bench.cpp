// What a large dcgm-exporter page costs its readers in memory (bench/dcgm_page.sh; not in CI). A
// synthetic page of MIB MiB, this node's DCGM series (8 GPUs, activity, power, energy, memory, two
// pods each) in the middle of many other families' series, is served on loopback, written as it
// is sent (the server holds none of it), and read once through the real path:
//   source      the agent's DCGM source (DcgmSource::Refresh: the HTTP client, streamed parse)
//   audit       `gpumeter audit --dcgm-metrics URL` (RunAudit; its table goes to stdout)
//   audit-gzip  the same with --gzip (the server compresses, the client unpacks as it reads)
//   whole       the page read whole, then parsed whole (GetOk, ParsePromText): the old path
// Before the read, a small page goes through the same path (threads, arenas and buffers are
// those of a reader that has read before) and the peak is reset (/proc/self/clear_refs 5).
// Prints, on stderr, the peak RSS above idle: VmHWM after the read less VmRSS before it. One page
// per process, so no earlier read hides a peak.
// Usage: gpumeter_dcgm_page_bench MIB source|audit|audit-gzip|whole
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "app/diagnose/audit.h"
#include "common/http/client.h"
#include "common/prom/prom_text.h"
#include "sources/dcgm/dcgm_page.h"
#include "sources/dcgm/dcgm_source.h"
#include "support/loopback_server.h"

namespace {

using gpumeter::Expected;

constexpr int kGpus = 8;

// This node's exporter's series: every field the source and audit read, and others, per pod.
std::string NodeSeries() {
  static const char* const kFields[] = {
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
      "DCGM_FI_DEV_POWER_USAGE",       "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
      "DCGM_FI_DEV_FB_USED",           "DCGM_FI_DEV_GPU_UTIL",
      "DCGM_FI_DEV_GPU_TEMP",          "DCGM_FI_DEV_SM_CLOCK",
      "DCGM_FI_PROF_SM_ACTIVE",        "DCGM_FI_PROF_PCIE_TX_BYTES"};
  std::string out;
  for (const char* field : kFields) {
    out += fmt::format("# HELP {0} {0}.\n# TYPE {0} gauge\n", field);
    for (int g = 0; g < kGpus; ++g)
      for (int pod = 0; pod < 2; ++pod)
        out += fmt::format(
            "{}{{gpu=\"{}\",UUID=\"GPU-5fb5b3d2-11c7-4a9c-9d0e-2f3a4b5c6d{:02d}\",pci_bus_id="
            "\"00000000:{:02X}:00.0\",device=\"nvidia{}\",modelName=\"NVIDIA H100 80GB HBM3\","
            "Hostname=\"gpu-node-1\",DCGM_FI_DRIVER_VERSION=\"580.65.06\",container=\"main\","
            "namespace=\"ml\",pod=\"train-{}-{}\"}} {}\n",
            field, g, g, 0x18 + g, g, g, pod, 0.25 + 0.01 * g);
  }
  return out;
}

// Another family's line, the n-th: distinct labels, as a big exporter writes them.
std::string OtherLine(size_t n) {
  switch (n % 3) {
    case 0:
      return fmt::format(
          "kube_pod_container_status_restarts_total{{namespace=\"team-{}\",pod=\"svc-{}-"
          "7d9f8b6c5d-x2k4p\",container=\"app\",uid=\"{:08x}-1c2d-4e5f-8a9b-0c1d2e3f4a5b\"}} {}\n",
          n % 97, n, n * 2654435761u % 0xffffffffu, n % 5);
    case 1:
      return fmt::format(
          "node_network_receive_bytes_total{{device=\"veth{:08x}\",instance=\"10.0.{}.{}:9100\","
          "job=\"node-exporter\"}} {}\n",
          n, n / 250 % 250, n % 250, n * 1500);
    default:
      return fmt::format(
          "http_request_duration_seconds_bucket{{handler=\"/api/v{}/items\",method=\"GET\","
          "le=\"{}\",code=\"200\"}} {}\n",
          n, 0.005 * static_cast<double>(n % 13 + 1), n % 1000);
  }
}

// The page, written as it is sent: about `bytes` (whole lines), this node's series halfway.
class PageWriter {
 public:
  explicit PageWriter(size_t bytes) : bytes_(bytes), node_(NodeSeries()) {}
  // The next lines, up to 64 KiB; empty at the end.
  std::string Next() {
    std::string out;
    while (out.size() < (64u << 10)) {
      std::string line = !node_done_ && sent_ + out.size() >= bytes_ / 2 ? node_ : OtherLine(n_++);
      if (sent_ + out.size() + line.size() > bytes_) break;
      node_done_ = node_done_ || line == node_;
      out += line;
    }
    sent_ += out.size();
    return out;
  }

 private:
  size_t bytes_, sent_ = 0, n_ = 0;
  std::string node_;
  bool node_done_ = false;
};

void Serve(httplib::Server& s) {
  // By path: the source's URL may have no query.
  s.Get("/(small|mib/([0-9]+))", [](const httplib::Request& q, httplib::Response& r) {
    const size_t bytes = q.matches[1] == "small"
                             ? size_t{256} << 10
                             : std::strtoull(q.matches[2].str().c_str(), nullptr, 10) << 20;
    auto page = std::make_shared<PageWriter>(bytes);
    r.set_chunked_content_provider("text/plain", [page](size_t, httplib::DataSink& sink) {
      const std::string more = page->Next();
      if (more.empty()) {
        sink.done();
        return true;
      }
      return sink.write(more.data(), more.size());
    });
  });
}

long StatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  const std::string k = key;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(k, 0) == 0) return std::strtol(line.c_str() + k.size(), nullptr, 10);
  return -1;
}

// Sets VmHWM to the current RSS; false where the kernel refuses.
bool ResetPeak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.close();
  return f.good();
}

// The page at `url` through the path `mode` names.
Expected<void> Read(const std::string& mode, const std::string& url) {
  namespace dcgm = gpumeter::dcgm;
  if (mode == "source") {
    dcgm::DcgmSourceOptions o;
    o.url = url;
    o.deadline = std::chrono::seconds(120);  // memory is measured here, not speed
    dcgm::DcgmSource source(o);
    return source.Refresh(0);
  }
  if (mode == "audit" || mode == "audit-gzip") {
    gpumeter::app::AuditOptions o;
    o.dcgm_metrics = url;
    o.timeout = std::chrono::seconds(120);
    o.gzip = mode == "audit-gzip";
    if (const int rc = gpumeter::app::RunAudit(o); rc != 0)
      return gpumeter::MakeError(gpumeter::ErrorCode::kInternal, fmt::format("audit: exit {}", rc));
    return {};
  }
  gpumeter::http::Endpoint e;
  e.what = "--dcgm-metrics";
  e.url = url;
  auto client = gpumeter::http::Client::Open(
      e, {.deadline = std::chrono::seconds(120), .max_bytes = 64u << 20});
  if (!client) return tl::unexpected(client.error());
  auto text = client->GetOk("");
  if (!text) return tl::unexpected(text.error());
  auto page = gpumeter::prom::ParsePromText(*text);
  if (!page) return tl::unexpected(page.error());
  auto read = dcgm::ReadDcgmPage(*page);
  if (!read) return tl::unexpected(read.error());
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[2] : "";
  if (mode != "source" && mode != "audit" && mode != "audit-gzip" && mode != "whole") {
    std::fprintf(stderr, "usage: %s MIB source|audit|audit-gzip|whole\n", argv[0]);
    return 2;
  }
  const std::string mib = argv[1];
  const gpumeter::testing::LoopbackServer server(Serve);
  if (auto warm = Read(mode, server.url() + "/small"); !warm) {
    std::fprintf(stderr, "warm-up: %s\n", warm.error().message.c_str());
    return 1;
  }
  const bool reset = ResetPeak();
  const long idle = reset ? StatusKb("VmRSS:") : StatusKb("VmHWM:");
  const auto t0 = std::chrono::steady_clock::now();
  const auto read = Read(mode, server.url() + "/mib/" + mib);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long peak = StatusKb("VmHWM:");
  if (!read) {
    std::fprintf(stderr, "%s MiB page, %s: %s\n", mib.c_str(), mode.c_str(),
                 read.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr,
               "%4s MiB page, %-10s peak RSS above idle %7.1f MiB (idle %.1f MiB%s, peak %.1f "
               "MiB), %.2f s\n",
               mib.c_str(), mode.c_str(), static_cast<double>(peak - idle) / 1024.0,
               static_cast<double>(idle) / 1024.0, reset ? "" : ": the peak so far, no reset",
               static_cast<double>(peak) / 1024.0, took);
  return 0;
}
