// libFuzzer target: the Prometheus API reply parser (`gpumeter report --source prometheus:`).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/history/prometheus_reply.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto r = gpumeter::history::ParseVectorReply(body, 200, "fuzz");
  if (r) {
    for (const auto& s : *r)
      if (!std::isfinite(s.value) || s.value < 0) __builtin_trap();  // only finite values >= 0
  } else if (r.error().message.size() > 2000) {
    __builtin_trap();  // errors quote at most a short excerpt
  }
  return 0;
}
