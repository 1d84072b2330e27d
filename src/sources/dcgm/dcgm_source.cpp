#include "sources/dcgm/dcgm_source.h"

#include <spdlog/spdlog.h>

#include "common/http/client.h"

namespace gpumeter::dcgm {
namespace {

double SystemSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Fields that change on every collection of a powered GPU (dcgm-exporter's default set has both):
// without one, a GPU at constant activity would look stale.
bool ChangesEveryCollection(const std::string& name) {
  return name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" || name == "DCGM_FI_DEV_POWER_USAGE";
}

}  // namespace

Expected<std::string> FetchDcgmPage(const DcgmSourceOptions& o) {
  http::Endpoint e;
  e.what = "--dcgm-metrics";
  e.url = o.url;
  e.default_path = "/metrics";
  auto client = http::Client::Open(std::move(e), {.connect_timeout = o.connect_timeout,
                                                  .read_timeout = {},
                                                  .deadline = o.deadline,
                                                  .max_bytes = o.max_reply_bytes});
  if (!client) return tl::unexpected(client.error());
  return client->GetOk("");
}

DcgmSource::DcgmSource(DcgmSourceOptions options)
    : options_(std::move(options)),
      latest_(std::make_shared<const DcgmReading>()),
      tracker_("dcgm", options_.url) {
  if (!options_.clock_s) options_.clock_s = SystemSeconds;
}

DcgmSource::~DcgmSource() { Stop(); }

Expected<void> DcgmSource::Refresh(double now_s) {
  const auto started = std::chrono::steady_clock::now();
  auto text = FetchDcgmPage(options_);
  if (!text) {
    std::lock_guard lock(mu_);
    tracker_.Attempt();
    return Fail(text.error().message);
  }
  auto read = Ingest(*text, now_s);
  std::lock_guard lock(mu_);
  tracker_.SetDuration(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return read;
}

Expected<void> DcgmSource::Fail(const std::string& why) {
  fresh_.clear();  // unknown from now on, not the last values
  latest_ = std::make_shared<const DcgmReading>();
  if (tracker_.Failed(why)) spdlog::warn("dcgm: {} (activity unknown until it is back)", why);
  return MakeError(ErrorCode::kUnavailable, why);
}

Expected<void> DcgmSource::Ingest(std::string_view text, double now_s) {
  auto page = prom::ParsePromText(text);
  if (!page) {
    std::lock_guard lock(mu_);
    tracker_.Attempt();
    return Fail("--dcgm-metrics " + options_.url + ": " + page.error().message);
  }
  const DcgmPage read = ReadDcgmPage(*page);
  auto reading = std::make_shared<DcgmReading>();
  reading->hosts = read.hosts;
  reading->skipped = read.skipped;
  reading->skipped_why = read.skipped_why;
  for (const auto& s : page->samples) reading->gpu_fields |= ChangesEveryCollection(s.name);
  for (const auto& [uuid, fp] : read.gpu_fingerprint) {
    reading->gpus.insert(uuid);
    auto [it, first] = fresh_.try_emplace(uuid, GpuFreshness{fp, now_s});
    if (!first && it->second.fingerprint != fp) it->second = {fp, now_s};
  }
  for (const auto& [key, value] : read.gr_active) {
    const auto& f = fresh_.at(key.gpu_uuid);
    reading->series.emplace(
        key, DcgmSeries{value, f.changed_s, now_s - f.changed_s > options_.max_age_s});
  }
  for (const auto& [key, value] : read.dram_active) {
    const auto& f = fresh_.at(key.gpu_uuid);
    reading->series.emplace(
        DcgmKey{key.gpu_uuid, key.gpu_instance_id, true},
        DcgmSeries{value, f.changed_s, now_s - f.changed_s > options_.max_age_s});
  }
  std::lock_guard lock(mu_);
  tracker_.Attempt();
  latest_ = std::move(reading);
  if (tracker_.Succeeded(std::chrono::steady_clock::now()))
    spdlog::info("dcgm: {} is back", options_.url);
  return {};
}

std::shared_ptr<const DcgmReading> DcgmSource::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

domain::SourceStatus DcgmSource::Status() const {
  std::lock_guard lock(mu_);
  return tracker_.status();
}

void DcgmSource::Start() {
  worker_.Start([this] {
    const auto period = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(options_.poll_interval_s));
    do (void)Refresh(options_.clock_s());  // failures are counted and logged by Refresh
    while (worker_.SleepFor(period));
  });
}

void DcgmSource::Stop() { worker_.Stop(); }

}  // namespace gpumeter::dcgm
