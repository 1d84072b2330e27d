// libFuzzer target: the Prometheus text parser (gpumeter audit reads pages from other exporters),
// whole and streamed: cut in two where the first byte says, a page reads as it does whole.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "common/prom/prom_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto page = gpumeter::prom::ParsePromText(text);
  if (page) {
    for (const auto& s : page->samples)
      if (s.name.empty() || s.line == 0) __builtin_trap();  // a sample always has a name and a line
  }
  std::vector<gpumeter::prom::PromSample> streamed;
  gpumeter::prom::PromStream stream(
      {.sample = [&streamed](gpumeter::prom::PromSample&& s) -> gpumeter::Expected<void> {
        streamed.push_back(std::move(s));
        return {};
      }},
      std::numeric_limits<size_t>::max());
  const size_t cut = size == 0 ? 0 : data[0] % size;
  auto fed = stream.Feed(text.substr(0, cut));
  if (fed) fed = stream.Feed(text.substr(cut));
  if (fed) fed = stream.Finish();
  if (static_cast<bool>(fed) != static_cast<bool>(page)) __builtin_trap();
  if (!fed && fed.error().message != page.error().message) __builtin_trap();
  if (page) {
    if (streamed.size() != page->samples.size()) __builtin_trap();
    for (size_t i = 0; i < streamed.size(); ++i)
      if (streamed[i].name != page->samples[i].name || streamed[i].line != page->samples[i].line ||
          streamed[i].labels != page->samples[i].labels)
        __builtin_trap();
  }
  return 0;
}
