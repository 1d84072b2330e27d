// How `report` and `rightsize` reach a Prometheus (or Thanos Query, Mimir, Cortex) behind auth:
// the flags every --source prometheus:URL command shares, and the client they open. Secrets come
// from files (a mounted Secret), never from the command line, where `ps` would show them.
#pragma once

#include <cstddef>
#include <string>

#include "common/duration.h"
#include "common/error.h"
#include "sources/history/prometheus_api.h"

namespace gpumeter::app {

struct PrometheusFlags {
  std::string token_file;  // bearer token
  std::string user;        // basic auth, with password_file
  std::string password_file;
  std::string ca_file;          // PEM bundle for https
  std::string tenant;           // X-Scope-OrgID (Mimir/Cortex)
  size_t max_reply_mb = 64;     // a reply larger than this is refused
  Seconds timeout{120};         // for the whole reply of one query
  bool recorded_series = true;  // read the hourly recorded series where they cover (docs/fleet.md)
  bool gzip = false;            // ask for compressed replies (a slow link)
};

// The client for `url`; errors name the flag or the URL (kInvalidInput).
Expected<history::PrometheusApi> OpenPrometheus(const std::string& url, const PrometheusFlags& f);

}  // namespace gpumeter::app
