// libFuzzer target: the Prometheus text parser (gpumeter audit reads pages from other exporters).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/prom/prom_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto page =
      gpumeter::prom::ParsePromText(std::string_view(reinterpret_cast<const char*>(data), size));
  if (page) {
    for (const auto& s : page->samples)
      if (s.name.empty() || s.line == 0) __builtin_trap();  // a sample always has a name and a line
  }
  return 0;
}
