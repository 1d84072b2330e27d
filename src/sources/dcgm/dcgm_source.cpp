#include "sources/dcgm/dcgm_source.h"

#include <spdlog/spdlog.h>

#include "common/http/client.h"

namespace gpumeter::dcgm {
namespace {

double SystemSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Expected<DcgmPage> FetchDcgmPage(const DcgmSourceOptions& o, bool* page_error) {
  if (page_error) *page_error = false;
  http::Endpoint e;
  e.what = "--dcgm-metrics";
  e.url = o.url;
  e.default_path = "/metrics";
  auto client = http::Client::Open(std::move(e), {.connect_timeout = o.connect_timeout,
                                                  .read_timeout = {},
                                                  .deadline = o.deadline,
                                                  .max_bytes = o.max_reply_bytes});
  if (!client) return tl::unexpected(client.error());
  DcgmPageReader reader;
  // After a page error the reader drops the rest, and the reply goes on to its end: its cap or
  // deadline, if it has one, is the error a whole-page read would have given.
  auto got = client->GetOkChunked("", [&reader](std::string_view chunk) {
    (void)reader.Feed(chunk);  // the error comes again from Finish
  });
  if (!got) return tl::unexpected(got.error());
  auto page = reader.Finish();
  if (!page) {
    if (page_error) *page_error = true;
    return MakeError(ErrorCode::kInvalidInput,
                     "--dcgm-metrics " + o.url + ": " + page.error().message);
  }
  return page;
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
  bool page_error = false;
  auto page = FetchDcgmPage(options_, &page_error);
  const auto took = [&started] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  if (!page) {
    std::lock_guard lock(mu_);
    tracker_.Attempt();
    if (page_error) tracker_.SetDuration(took());  // it was read: how long that took counts
    return Fail(page.error().message);
  }
  Publish(*page, now_s);
  std::lock_guard lock(mu_);
  tracker_.SetDuration(took());
  return {};
}

Expected<void> DcgmSource::Fail(const std::string& why) {
  fresh_.clear();  // unknown from now on, not the last values
  latest_ = std::make_shared<const DcgmReading>();
  if (tracker_.Failed(why)) spdlog::warn("dcgm: {} (activity unknown until it is back)", why);
  return MakeError(ErrorCode::kUnavailable, why);
}

Expected<void> DcgmSource::Ingest(std::string_view text, double now_s) {
  auto page = ReadDcgmText(text);
  if (!page) {
    std::lock_guard lock(mu_);
    tracker_.Attempt();
    return Fail("--dcgm-metrics " + options_.url + ": " + page.error().message);
  }
  Publish(*page, now_s);
  return {};
}

void DcgmSource::Publish(const DcgmPage& read, double now_s) {
  auto reading = std::make_shared<DcgmReading>();
  reading->hosts = read.hosts;
  reading->skipped = read.skipped;
  reading->skipped_why = read.skipped_why;
  reading->gpu_fields = read.gpu_fields;
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
}

std::shared_ptr<const DcgmReading> DcgmSource::Current() const {
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
