// libFuzzer target: the Prometheus API reply parsers (`gpumeter report`/`rightsize --source
// prometheus:`). The vector parser gives only finite values >= 0 and short errors; the matrix
// reply's fast path (prometheus_matrix_reader.h), wherever it accepts a reply, gives exactly what
// the document path gives for it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/history/prometheus_matrix_reader.h"
#include "sources/history/prometheus_reply.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpumeter::history;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto r = ParseVectorReply(body, 200, "fuzz");
  if (r) {
    for (const auto& s : *r)
      if (!std::isfinite(s.value) || s.value < 0) __builtin_trap();  // only finite values >= 0
  } else if (r.error().message.size() > 2000) {
    __builtin_trap();  // errors quote at most a short excerpt
  }
  ReplyLimits limits;
  limits.max_series = 8;  // small, so that the fuzzer reaches the limits
  limits.max_points = 8;
  limits.max_depth = 8;
  const auto fast = ReadGoodMatrix(body, limits);
  const auto doc = ParseMatrixDocument(body, 200, "fuzz", limits);
  if (fast) {
    if (!doc || doc->size() != fast->size())
      __builtin_trap();  // accepted what the document refuses
    for (size_t i = 0; i < fast->size(); ++i)
      if ((*fast)[i].labels != (*doc)[i].labels || (*fast)[i].points != (*doc)[i].points)
        __builtin_trap();
  }
  if (!doc && doc.error().message.size() > 2000) __builtin_trap();
  return 0;
}
