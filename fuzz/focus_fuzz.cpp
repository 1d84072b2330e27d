// libFuzzer target: a cloud bill's bytes (CSV or gzip) through the FOCUS reader, and each line's
// ResourceId through the node matcher. Whatever the input, no crash, no hang, and every line the
// reader accepts holds what it promises: a period that ends after it starts, amounts finite and
// within ±1e12, a three-letter currency.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/cost/bill_match.h"
#include "sources/bill/focus_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: the input is written to a file of this process's own.
  static const std::string path = "/tmp/gpumeter-focus-fuzz-" + std::to_string(::getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  static const gpumeter::cost::NodeMatcher matcher(
      {{"a", "aws:///us-east-1a/i-0123456789abcdef0", ""},
       {"g", "gce://p/z/gke-1", "4520988123456789012"},
       {"z",
        "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/"
        "virtualMachineScaleSets/v/virtualMachines/0",
        ""}});
  (void)gpumeter::bill::ReadFocusFile(path, "", [](const gpumeter::domain::Charge& c) {
    if (c.period_end <= c.period_start || !std::isfinite(c.effective_cost) ||
        std::abs(c.effective_cost) > 1e12 || !std::isfinite(c.billed_cost) ||
        (c.list_cost && !std::isfinite(*c.list_cost)) || c.currency.size() != 3)
      std::abort();
    for (const size_t i : matcher.Match(c.resource_id))
      if (i >= matcher.nodes().size()) std::abort();
    (void)gpumeter::cost::NodeMatcher::LooksLikeVm(c.resource_id);
    return gpumeter::Expected<void>{};
  });
  (void)matcher.Match(std::string_view(reinterpret_cast<const char*>(data), size));
  ::unlink(path.c_str());
  return 0;
}
