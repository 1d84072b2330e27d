// One API-server object or list the agent reads again every `period` on a thread of its own (its
// node's ResourceSlices, its Node), rather than watching it: it changes rarely. A read that fails
// (unreachable, refused, a reply that is not what it should be) keeps the last good value, is
// logged once per outage and shows in Status(); `interpret` turns a reply (any status) into the
// value or the reason it is not one. Every request is bounded by `limits` and cut by Stop.
// Thread-safety: Start and Stop from the owner's thread; Current and Status from any.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/http/client.h"
#include "common/stoppable_worker.h"
#include "domain/source_status.h"
#include "sources/kube_api/api_client.h"
#include "sources/kube_api/kubeconfig.h"

namespace gpumeter::kube_api {

template <typename T>
class PeriodicGet {
 public:
  struct Request {
    std::string what;  // "get node NAME": names the request in errors
    std::string path;
    http::Pairs params;
    http::Limits limits;
  };
  using Interpret = std::function<Expected<std::shared_ptr<T>>(const http::Reply&)>;
  struct Naming {
    std::string source;  // the SourceStatus name: "node", "resourceslices"
    std::string kept;    // what a failure keeps, in the log: "the last good node facts"
  };

  PeriodicGet(ApiServerConfig config, Request request, std::chrono::milliseconds period,
              Naming naming, Interpret interpret)
      : config_(std::move(config)),
        request_(std::move(request)),
        period_(period),
        naming_(std::move(naming)),
        interpret_(std::move(interpret)),
        tracker_(naming_.source, "API server " + config_.server) {}
  ~PeriodicGet() { Stop(); }
  PeriodicGet(const PeriodicGet&) = delete;
  PeriodicGet& operator=(const PeriodicGet&) = delete;

  void Start() {
    worker_.Start([this] {
      do Once();
      while (worker_.SleepFor(period_));
    });
  }
  void Stop() { worker_.Stop(); }
  std::shared_ptr<const T> Current() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  domain::SourceStatus Status() const {
    std::lock_guard lock(mu_);
    return tracker_.status();
  }

 private:
  void Once() {
    const auto begin = std::chrono::steady_clock::now();
    Expected<std::shared_ptr<T>> value = MakeError(ErrorCode::kUnavailable, "");
    if (auto client = MakeApiClient(config_, request_.what, request_.limits); !client) {
      value = tl::unexpected(client.error());
    } else {
      if (!worker_.BeginCall([&c = *client] { c.Cancel(); })) return;
      auto r = client->Get(request_.path, request_.params, request_.what);
      if (!worker_.EndCall()) return;
      value = r ? interpret_(*r) : tl::unexpected(r.error());
    }
    std::lock_guard lock(mu_);
    tracker_.Attempt();
    tracker_.SetDuration(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    if (value) {
      current_ = std::move(*value);
      tracker_.Succeeded(std::chrono::steady_clock::now());
    } else if (tracker_.Failed(value.error().message)) {
      spdlog::warn("{} (keeping {})", value.error().message, naming_.kept);
    }
  }

  const ApiServerConfig config_;
  const Request request_;
  const std::chrono::milliseconds period_;
  const Naming naming_;
  const Interpret interpret_;
  mutable std::mutex mu_;  // guards current_ and tracker_
  std::shared_ptr<const T> current_;
  domain::SourceTracker tracker_;
  StoppableWorker worker_;  // last: it stops before the rest is destroyed
};

}  // namespace gpumeter::kube_api
