// The fast path of a "matrix" reply (prometheus_reply.h): a reply of exactly the expected shape
// is read as it is tokenized, straight into series, with no document in between. A 6-hour range
// query of a 100-node fleet answers tens of MB; as a document each point cost ~150 bytes and
// five allocations, so reading six replies at once held gigabytes (docs/fleet.md, "Scale").
// Anything else — an error reply, a wrong type, a duplicate key, a value out of range, a limit
// passed — gives nullopt, and the caller parses the reply again as a document to say exactly what
// was wrong (the path for bad replies stays the one that names the field). It accepts nothing
// the document path refuses. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sources/history/prometheus_reply.h"

namespace gpumeter::history {

// `body` of an HTTP 200 reply; nullopt where it is not a good matrix reply within `limits`.
std::optional<std::vector<PromSeries>> ReadGoodMatrix(std::string_view body,
                                                      const ReplyLimits& limits);

// A sample value as Prometheus writes it ("1.5", "+Inf", "NaN"); nullopt where it is no number.
std::optional<double> SampleNumber(std::string_view text);
// What gpumeter asks for (counters' increases, ratios, info series) is finite and >= 0.
bool UsableSample(double x);
// A point's time in seconds as Unix milliseconds: nullopt unless finite and within [0, 1e11] s.
std::optional<int64_t> SampleTimeMs(double seconds);

}  // namespace gpumeter::history
