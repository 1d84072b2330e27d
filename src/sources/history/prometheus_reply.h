// The Prometheus HTTP API's reply to an instant query (`/api/v1/query`, resultType "vector") or a
// range query (`/api/v1/query_range`, or an instant query of a range selector: "matrix"),
// parsed as untrusted input: the size is capped, nesting is bounded, every field is checked for
// shape before use, and every value must be a finite number >= 0 (what gpumeter asks for is
// counters' increases, ratios and info series; "+Inf", "NaN" or a negative value means the data or
// the server is broken, and a report must not print `inf` costs). Errors name the query, the field
// (e.g. data.result[3].value[1]) and at most 200 printable characters of what was found.
// Every error is kUnavailable: the source failed, not the user's input. Pure functions;
// thread-safe. Fuzzed by fuzz/prom_reply_fuzz.cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace gpumeter::history {

struct PromSample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// A label's value; "" where the series has none (as PromQL treats a missing label).
inline std::string LabelValue(const std::map<std::string, std::string>& labels,
                              const std::string& key) {
  const auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}
inline std::string LabelValue(const PromSample& s, const std::string& key) {
  return LabelValue(s.labels, key);
}

// A series of a range query (`/api/v1/query_range`, or an instant query of a range selector):
// resultType "matrix". Times in Unix milliseconds, increasing.
struct PromSeries {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<int64_t, double>> points;
};

struct ReplyLimits {
  // A fleet of 1,000 nodes with 100 containers each answers a per-container query in ~30 MB.
  size_t max_bytes = 64u << 20;  // a reply body larger than this is refused as it arrives
  size_t max_series = 500'000;   // result entries per reply
  size_t max_points = 11'000;    // points per series of a matrix (Prometheus's own query limit)
  int max_depth = 16;            // JSON nesting; a vector reply needs 5, a matrix 6
  // For the whole reply of one query (a report waits; `gpumeter top` must not).
  std::chrono::milliseconds deadline{60'000};
};

// `status`: the HTTP status; `what`: names the reply in errors ("prometheus URL, query Q").
// An error reply ({"status":"error",...}) gives its errorType and error text.
Expected<std::vector<PromSample>> ParseVectorReply(std::string_view body, int status,
                                                   const std::string& what,
                                                   const ReplyLimits& limits = {});

// The same for a "matrix" reply; each series' times must increase. A good reply is read as it is
// tokenized (prometheus_matrix_reader.h); any other is parsed as a document to say what is wrong.
Expected<std::vector<PromSeries>> ParseMatrixReply(std::string_view body, int status,
                                                   const std::string& what,
                                                   const ReplyLimits& limits = {});
// ParseMatrixReply's document path alone: its answer for the replies the fast path refuses,
// and the reference the fast path is checked against (tests, fuzz/prom_reply_fuzz.cpp).
Expected<std::vector<PromSeries>> ParseMatrixDocument(std::string_view body, int status,
                                                      const std::string& what,
                                                      const ReplyLimits& limits = {});

}  // namespace gpumeter::history
