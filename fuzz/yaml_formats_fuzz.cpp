// libFuzzer target: every YAML format gpumeter reads from a user or a cluster: kubeconfig,
// pricing, guardrail config, scenario. Each must answer a value or an error, never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/cost/pricing.h"
#include "core/guard/findings.h"
#include "sim/scenario/loader.h"
#include "sources/kube_api/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)gpumeter::kube_api::ParseKubeconfig(text, "/nonexistent", "fuzz.kubeconfig", "");
  (void)gpumeter::cost::Pricing::Parse(text, "fuzz-pricing.yaml");
  (void)gpumeter::guard::ParseGuardConfig(text, "fuzz-guard.yaml");
  (void)gpumeter::scenario::ParseScenario(text, "fuzz-scenario.yaml");
  return 0;
}
