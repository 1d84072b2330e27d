#include "cli/scenario_context.h"

#include "scenario/truth.h"

namespace gpumeter::cli {

metrics::NodeContext MakeScenarioContext(std::shared_ptr<const scenario::Scenario> s,
                                         std::function<double()> now_s) {
  metrics::NodeContext ctx;
  ctx.node = s->node_name;
  ctx.owner = [s, now_s](uint32_t pid) -> std::optional<metrics::ProcessOwner> {
    const auto* p = scenario::LiveProcess(*s, pid, now_s());
    if (!p) return std::nullopt;
    if (!p->container) return metrics::ProcessOwner{};  // host process
    return metrics::ProcessOwner{p->container->ns, p->container->pod, p->container->container};
  };
  ctx.sharing_mode = [s](const std::string& uuid) -> std::string {
    const auto* g = s->FindGpuByUuid(uuid);
    if (!g) return "unknown";
    if (g->mig_enabled) return "mig";
    return scenario::ToString(g->sharing.mode);
  };
  return ctx;
}

}  // namespace gpumeter::cli
