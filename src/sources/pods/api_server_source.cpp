#include "sources/pods/api_server_source.h"

#include <spdlog/spdlog.h>

#include "sources/kube_api/api_client.h"

namespace gpumeter::kube_api {

ApiServerPodSource::ApiServerPodSource(ApiServerOptions options)
    : options_(std::move(options)),
      tracker_("pods", "API server " + options_.config.server + " via " + options_.config.source) {}

ApiServerPodSource::~ApiServerPodSource() { Stop(); }

void ApiServerPodSource::Start() {
  worker_.Start([this] { Run(); });
}

void ApiServerPodSource::Stop() { worker_.Stop(); }

std::shared_ptr<const k8s::PodStore> ApiServerPodSource::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

domain::SourceStatus ApiServerPodSource::Status() const {
  std::lock_guard lock(mu_);
  return tracker_.status();
}

void ApiServerPodSource::Publish(const k8s::PodStore& store) {
  auto copy = std::make_shared<const k8s::PodStore>(store);
  std::lock_guard lock(mu_);
  current_ = std::move(copy);
}

void ApiServerPodSource::Attempt() {
  std::lock_guard lock(mu_);
  tracker_.Attempt();
}

void ApiServerPodSource::Succeeded() {
  std::lock_guard lock(mu_);
  if (tracker_.Succeeded(std::chrono::steady_clock::now()))
    spdlog::info("API server {}: pods flowing again", options_.config.server);
}

void ApiServerPodSource::Failed(const std::string& why) {
  std::lock_guard lock(mu_);
  if (tracker_.Failed(why))
    spdlog::warn("API server {}: {} (keeping the last good pods; retrying with backoff)",
                 options_.config.server, why);
}

Expected<http::Client> ApiServerPodSource::Connect(bool watch) {
  // A watch is quiet between events; the server closes it after timeoutSeconds. One not ended a
  // list's deadline after that is cut: its headers or an event trickled, or a proxy held it open
  // (read timeouts are per read).
  const auto& l = options_.list_limits;
  if (watch)
    return MakeApiClient(options_.config, "watch pods",
                         {.connect_timeout = options_.connect_timeout,
                          .read_timeout = options_.watch_timeout + std::chrono::seconds(30),
                          .deadline = options_.watch_timeout + l.deadline,
                          .max_bytes = l.max_bytes});
  return MakeApiClient(options_.config, "list pods",
                       {.connect_timeout = options_.connect_timeout,
                        .read_timeout = std::chrono::seconds(60),
                        .deadline = l.deadline,
                        .max_bytes = l.max_bytes});
}

namespace {

// Applies the complete lines of a watch stream in `pending` to `store`, leaving a partial line
// there; stops at one that calls for a relist (`relist` set, and `problem` when it was malformed).
// Returns whether a pod changed.
bool ApplyWatchLines(std::string& pending, k8s::PodStore& store, std::string& problem,
                     bool& relist) {
  bool changed = false;
  for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
    const std::string line = pending.substr(0, nl);
    pending.erase(0, nl + 1);
    if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
    auto ev = store.ApplyWatchLine(line);
    if (!ev) {
      problem = ev.error().message;
      relist = true;  // an event was lost: resynchronise from a fresh list
      break;
    }
    if (*ev == k8s::PodStore::Event::kRelist) {
      relist = true;
      break;
    }
    changed = changed || *ev != k8s::PodStore::Event::kBookmark;
  }
  return changed;
}

}  // namespace

bool ApiServerPodSource::BeginRequest(const http::Client& client) {
  return worker_.BeginCall([&client] { client.Cancel(); });
}

Expected<bool> ApiServerPodSource::List(const std::string& selector, k8s::PodStore& store) {
  auto client = Connect(false);
  if (!client) return tl::unexpected(client.error());
  if (!BeginRequest(*client)) return false;
  Attempt();
  const auto begin = std::chrono::steady_clock::now();
  auto r = client->Get("/api/v1/pods?" + selector, {}, "list pods");
  {
    std::lock_guard lock(mu_);
    tracker_.SetDuration(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  if (!worker_.EndCall()) return false;
  if (!r) return tl::unexpected(r.error());
  if (r->status != 200) return MakeError(ErrorCode::kUnavailable, "list pods: " + Describe(*r));
  if (auto applied = store.ApplyList(r->body); !applied)
    return MakeError(ErrorCode::kInvalidInput, "list pods: " + applied.error().message);
  ++lists_;
  Publish(store);
  Succeeded();
  return true;
}

Expected<bool> ApiServerPodSource::Watch(const std::string& selector, k8s::PodStore& store) {
  auto client = Connect(true);
  if (!client) return tl::unexpected(client.error());
  if (!BeginRequest(*client)) return false;
  Attempt();
  std::string pending, problem;
  bool relist = false;
  const std::string path = "/api/v1/pods?" + selector +
                           "&watch=true&allowWatchBookmarks=true&resourceVersion=" +
                           http::EncodeQueryValue(store.resource_version()) +
                           "&timeoutSeconds=" + std::to_string(options_.watch_timeout.count());
  int status = 0;
  auto end = client->Stream(
      path,
      [&](int s) {
        status = s;  // an error body is not a stream of events
        return status == 200;
      },
      [&](const char* data, size_t len) {
        if (worker_.stopping()) return false;  // ends the stream at its next chunk
        pending.append(data, len);
        // An event is one object (etcd stores at most 1.5 MB): a line that never ends is refused.
        if (pending.size() > options_.list_limits.max_bytes) {
          problem = "watch pods: an event larger than " +
                    std::to_string(options_.list_limits.max_bytes) + " bytes (refused)";
          return false;
        }
        if (ApplyWatchLines(pending, store, problem, relist)) Publish(store);
        if (!relist) Succeeded();
        return !relist;
      });
  if (!worker_.EndCall()) return false;
  if (!problem.empty()) return MakeError(ErrorCode::kInvalidInput, problem);
  if (relist) {
    spdlog::info("API server {}: resource version {} expired; listing again",
                 options_.config.server, store.resource_version());
    return false;
  }
  if (status != 0 && status != 200)
    return MakeError(ErrorCode::kUnavailable, "watch pods: HTTP " + std::to_string(status));
  if (!end) return tl::unexpected(end.error());
  if (end->cut_at_deadline) {
    const auto ms = http::FormatDuration(client->limits().deadline);
    if (status == 0)
      return MakeError(ErrorCode::kUnavailable, "watch pods: no reply headers within " + ms);
    if (!pending.empty())
      return MakeError(ErrorCode::kUnavailable, "watch pods: an event not complete within " + ms);
    return true;  // a quiet watch the server did not end: watch again from where it left off
  }
  // The server ended the watch (timeoutSeconds): watch again from where it left off.
  return true;
}

Expected<void> ApiServerPodSource::ListAndWatch() {
  const std::string selector =
      "fieldSelector=" + http::EncodeQueryValue("spec.nodeName=" + options_.node_name);
  k8s::PodStore store;
  const auto listed = List(selector, store);
  if (!listed) return tl::unexpected(listed.error());
  if (!*listed) return {};  // stopping
  for (;;) {
    const auto again = Watch(selector, store);
    if (!again) return tl::unexpected(again.error());
    if (!*again) return {};  // stopping, or a relist is due
  }
}

void ApiServerPodSource::Run() {
  auto delay = options_.initial_backoff;
  while (!worker_.stopping()) {
    const uint64_t lists_before = lists_.load();
    auto result = ListAndWatch();
    if (worker_.stopping()) break;
    // A list that succeeded ends an outage: the next failure starts the backoff afresh.
    if (result || lists_.load() != lists_before) delay = options_.initial_backoff;
    if (result) continue;  // a relist: at once
    Failed(result.error().message);
    if (!worker_.SleepFor(delay)) break;
    delay = std::min(delay * 2, options_.max_backoff);
  }
}

}  // namespace gpumeter::kube_api
