#include "sinks/report/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/json/key_case.h"
#include "common/rfc3339.h"
#include "common/text_cell.h"
#include "core/attribution/unit_key_json.h"

namespace gpumeter::report {
namespace {

// A group's key for the terminal: no control or bidi character reaches it.
std::string Joined(const std::vector<cost::GroupValue>& key) {
  std::string s;
  for (const auto& k : key) s += (s.empty() ? "" : " | ") + TerminalCell(k.label());
  return s;
}

// AllocatedMethodDetails: the row's share of the unit, in GPU-hours, under the policy.
nlohmann::json FocusDetails(const cost::Chargeback& c, const cost::UnitCost& u,
                            const cost::CostRow& r, double ratio) {
  using nlohmann::json;
  return {{"Elements", json::array({{{"AllocatedRatio", ratio},
                                     {"UsageUnit", "GPU-Hours"},
                                     {"UsageQuantity", u.hours * u.unit.fraction * ratio}}})},
          {"x_Policy", c.policy},
          {"x_IdleCost", r.idle_cost}};
}

// AllocatedTags: a container's namespace, pod, container and its pod's labels; {} for idle.
nlohmann::json FocusTags(const cost::CostRow& r, bool container, const cost::Labels& labels) {
  nlohmann::json tags = nlohmann::json::object();
  if (container) {
    tags["k8s/namespace"] = r.owner.ns;
    tags["k8s/pod"] = r.owner.pod;
    tags["k8s/container"] = r.owner.container;
    if (auto it = labels.find({r.owner.ns, r.owner.pod}); it != labels.end())
      for (const auto& [k, v] : it->second) tags["k8s/label/" + k] = v;
  }
  return tags;
}

std::string FocusResourceType(const attribution::UnitKey& unit) {
  switch (unit.Kind()) {
    case domain::UnitKind::kGpu:
      break;
    case domain::UnitKind::kMigInstance:
      return "MIG instance";
    case domain::UnitKind::kUnpartitioned:
      return "MIG slices in no instance";
  }
  return "GPU";
}

}  // namespace

FocusRecord FocusRecordOf(const cost::Chargeback& c, const Window& w, const cost::Labels& labels,
                          const cost::UnitCost& u, const cost::CostRow& r, const FocusAmounts& a) {
  const bool container = r.owner.kind == domain::OwnerKind::kContainer;
  const double ratio = u.cost != 0 ? r.cost / u.cost : 0;
  FocusRecord f =
      FocusRecordFor(a.billed, a.effective, a.list, c.currency, w.from_unix_s, w.to_unix_s);
  f.charge_description = fmt::format("{} on {} ({})", u.unit.model, u.unit.node,
                                     domain::ToStringOr(u.unit.mode, "mode unknown"));
  f.consumed_quantity = u.hours * u.unit.fraction * ratio;
  f.consumed_unit = "GPU-Hours";
  f.resource_id = u.unit.uuid;
  f.resource_name = u.unit.node + "/" + u.unit.uuid;
  f.resource_type = FocusResourceType(u.unit);
  f.service_category = "AI and Machine Learning";
  f.service_name = "Kubernetes GPU";
  f.allocated_method_id = "gpumeter:" + c.policy;
  f.allocated_method_details = FocusDetails(c, u, r, ratio);
  f.allocated_resource_id = container ? r.owner.ns + "/" + r.owner.pod + "/" + r.owner.container
                                      : cost::GroupValue::Idle().label();
  f.allocated_resource_name = container ? r.owner.container : "idle";
  f.allocated_tags = FocusTags(r, container, labels);
  f.x_gpu_uuid = u.unit.gpu_uuid;
  f.x_gpu_model = u.unit.model;
  f.x_sharing_mode = domain::ToStringOr(u.unit.mode, "");
  f.x_mig_profile = u.unit.mig_profile;
  return f;
}

std::string FormatEfficiency(const cost::GroupTotals& g) {
  if (const auto e = g.efficiency()) return fmt::format("{:.1f}%", 100 * *e);
  if (const auto b = g.efficiency_bounds())
    return fmt::format("{:.1f}-{:.1f}%", 100 * b->first, 100 * b->second);
  return "-";
}

std::string FormatMemoryBusy(const cost::GroupTotals& g) {
  std::string out = fmt::format("{:.3f}", g.memory_busy_hours);
  if (g.memory_busy_bound_hours > 0) out += fmt::format(" ± {:.3f}", g.memory_busy_bound_hours);
  if (g.memory_busy_unknown_hours > 0)
    out += fmt::format(" + {:.3f} unknown", g.memory_busy_unknown_hours);
  return out;
}

std::string FormatEnergy(const cost::GroupTotals& g) {
  if (g.energy_bound_kwh > 0)
    return fmt::format("{:.3f} ± {:.3f}", g.energy_kwh, g.energy_bound_kwh);
  return fmt::format("{:.3f}", g.energy_kwh);
}

std::string MemoryTrafficNote(const cost::GroupTotals& total) {
  std::string out;
  if (total.memory_busy_unknown_hours > 0)
    out += fmt::format(
        "memory traffic unknown for {:.3f} GPU-h (nothing measured it: a lost GPU, an A100/A30 "
        "MIG instance without DCGM, a store from before it was measured): membusy-h is a lower "
        "bound\n",
        total.memory_busy_unknown_hours);
  if (total.memory_busy_bound_hours > 0)
    out += fmt::format(
        "estimated: ±{:.3f} GPU-h of membusy-h are splits made without per-process samples "
        "(docs/attribution.md, Memory busy time)\n",
        total.memory_busy_bound_hours);
  return out;
}

std::string RenderTable(const cost::Chargeback& c, const Window& w) {
  std::string out = fmt::format("GPU chargeback {} .. {}   policy {}   currency {}\n",
                                Rfc3339(w.from_unix_s), Rfc3339(w.to_unix_s), c.policy, c.currency);
  size_t width = 5;
  for (const auto& g : c.groups) width = std::max(width, Joined(g.key).size());
  std::string dims;
  for (const auto& d : c.dimensions) dims += (dims.empty() ? "" : " | ") + d;
  width = std::max(width, dims.size());
  // Where some compute went unmeasured, a column says how much, and efficiency is a range.
  const bool unknown = c.total.compute_unknown_hours > 0;
  // Where some compute is an estimated split, a column gives its ± (the truth lies within).
  const bool bound = c.total.compute_bound_hours > 0;
  // And where some energy is an estimated split (DCGM-fed units inside a collection), its ±.
  const bool energy_bound = std::any_of(c.groups.begin(), c.groups.end(),
                                        [](const auto& g) { return g.energy_bound_kwh > 0; });
  out += fmt::format("{:<{}} {:>10} {:>10} {}{}{:>10} {:>12} {:>9} {}{:>11} {:>12} {:>11} {:>7}\n",
                     dims, width, "GPU-h held", "compute-h", bound ? "  ± est-h " : "",
                     unknown ? " unknown-h " : "", "membusy-h", "mem GiB-h", "kWh",
                     energy_bound ? "± est-kWh " : "", "effic.", "cost", "idle cost", "share");
  auto line = [&](const cost::GroupTotals& g, const std::string& name) {
    const double share = c.total.cost > 0 ? g.cost / c.total.cost : 0;
    out += fmt::format(
        "{:<{}} {:>10.3f} {:>10.3f} {}{}{:>10.3f} {:>12.2f} {:>9.3f} {}{:>11} {:>12.4f} {:>11.4f} "
        "{:>6.1f}%\n",
        name, width, g.gpu_hours_held, g.compute_hours,
        bound ? fmt::format(" ±{:<7.3f} ", g.compute_bound_hours) : "",
        unknown ? fmt::format("{:>10.3f} ", g.compute_unknown_hours) : "", g.memory_busy_hours,
        g.memory_gib_hours, g.energy_kwh,
        energy_bound ? fmt::format("±{:<8.3f} ", g.energy_bound_kwh) : "", FormatEfficiency(g),
        g.cost, g.idle_cost, 100 * share);
  };
  for (const auto& g : c.groups) line(g, Joined(g.key));
  line(c.total, "TOTAL");
  for (const auto& m : c.unpriced_models)
    out += fmt::format("no price for {}: its hours are above, its cost is not\n", m);
  for (const auto& f : c.flagged_prices)
    out += fmt::format("default price used: {} (set your own in a pricing file)\n", f);
  for (const auto& src : c.sources) out += fmt::format("read from {}\n", src);
  if (unknown)
    out += fmt::format(
        "compute unknown for {:.3f} GPU-h (ran where activity was not measured: "
        "docs/attribution.md)"
        ": compute-h is a lower bound, efficiency the range it lies in\n",
        c.total.compute_unknown_hours);
  if (bound)
    out += fmt::format(
        "estimated: ±{:.3f} GPU-h of compute-h are splits of a shared unit's busy time made "
        "without per-process samples (MPS thread share, an even split, lost samples): the truth "
        "lies within compute-h ± est-h (docs/attribution.md, Bounds)\n",
        c.total.compute_bound_hours);
  out += MemoryTrafficNote(c.total);
  if (energy_bound)
    out +=
        "estimated: ± est-kWh of kWh is energy inside DCGM collections, placed by an activity "
        "profile from board power: the truth lies within kWh ± est-kWh (docs/attribution.md, DCGM "
        "activity); the total is measured\n";
  return out;
}

std::string RenderCsv(const cost::Chargeback& c) {
  std::string out;
  for (const auto& d : c.dimensions) out += CsvField(d) + ",";
  out +=
      "gpu_hours_held,compute_hours,memory_gib_hours,energy_kwh,efficiency,cost,idle_cost,share,"
      "currency,policy,compute_unknown_hours,efficiency_min,efficiency_max,compute_bound_hours,"
      "memory_busy_hours,memory_busy_unknown_hours,memory_busy_bound_hours,energy_bound_kwh\n";
  auto line = [&](const cost::GroupTotals& g, bool total) {
    for (size_t i = 0; i < c.dimensions.size(); ++i)
      out += CsvField(total ? (i == 0 ? "TOTAL" : "") : g.key[i].label()) + ",";
    const auto eff = g.efficiency();
    const auto bounds = g.efficiency_bounds();
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", g.gpu_hours_held,
        g.compute_hours, g.memory_gib_hours, g.energy_kwh, eff ? fmt::format("{}", *eff) : "",
        g.cost, g.idle_cost, c.total.cost > 0 ? g.cost / c.total.cost : 0.0, c.currency,
        CsvField(c.policy), g.compute_unknown_hours, bounds ? fmt::format("{}", bounds->first) : "",
        bounds ? fmt::format("{}", bounds->second) : "", g.compute_bound_hours, g.memory_busy_hours,
        g.memory_busy_unknown_hours, g.memory_busy_bound_hours, g.energy_bound_kwh);
  };
  for (const auto& g : c.groups) line(g, false);
  line(c.total, true);
  return out;
}

namespace {

// A unit's key as the attribution writes it (snake_case, as top's saved frames had it), in this
// document's camelCase; its keys are fixed names, so they cannot collide.
nlohmann::json CamelKey(const nlohmann::json& key) {
  auto camel = json_case::ToCamelCase(key);
  return camel ? *camel : key;
}

}  // namespace

std::string RenderJson(const cost::Chargeback& c, const Window& w) {
  using nlohmann::json;
  auto totals = [&](const cost::GroupTotals& g) {
    const auto eff = g.efficiency();
    const auto bounds = g.efficiency_bounds();
    return json{
        {"gpuHoursHeld", g.gpu_hours_held},
        {"computeHours", g.compute_hours},
        {"computeUnknownHours", g.compute_unknown_hours},
        {"computeBoundHours", g.compute_bound_hours},
        {"memoryBusyHours", g.memory_busy_hours},
        {"memoryBusyUnknownHours", g.memory_busy_unknown_hours},
        {"memoryBusyBoundHours", g.memory_busy_bound_hours},
        {"efficiencyBounds", bounds ? json::array({bounds->first, bounds->second}) : json(nullptr)},
        {"memoryGiBHours", g.memory_gib_hours},
        {"energyKWh", g.energy_kwh},
        {"energyBoundKWh", g.energy_bound_kwh},
        {"efficiency", eff ? json(*eff) : json(nullptr)},
        {"cost", g.cost},
        {"idleCost", g.idle_cost},
        {"share", c.total.cost > 0 ? g.cost / c.total.cost : 0.0}};
  };
  json groups = json::array();
  for (const auto& g : c.groups) {
    json j = totals(g);
    json key = json::object();
    for (size_t i = 0; i < c.dimensions.size(); ++i) key[c.dimensions[i]] = g.key[i].label();
    j["group"] = key;
    groups.push_back(j);
  }
  json units = json::array();
  for (const auto& u : c.units)
    units.push_back({{"unit", CamelKey(attribution::UnitKeyJson(u.unit))},
                     {"hours", u.hours},
                     {"pricePerGpuHour", u.price ? json(u.price->per_gpu_hour) : json(nullptr)},
                     {"priceSource", u.price ? json(u.price->source) : json(nullptr)},
                     {"cost", u.cost}});
  return json{{"window", {{"start", Rfc3339(w.from_unix_s)}, {"end", Rfc3339(w.to_unix_s)}}},
              {"policy", c.policy},
              {"currency", c.currency},
              {"groups", groups},
              {"total", totals(c.total)},
              {"units", units},
              {"unpricedModels", c.unpriced_models},
              {"defaultPrices", c.flagged_prices},
              {"readFrom", c.sources}}
             .dump(2, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::string RenderFocus(const cost::Chargeback& c, const Window& w, const cost::Labels& labels) {
  std::vector<FocusRecord> rows;
  for (const auto& u : c.units) {
    if (!u.price || u.cost <= 0) continue;
    for (const auto& r : u.rows) {
      // List cost: the same share of the unit at the price before the discount.
      const double list = u.price->per_gpu_hour > 0
                              ? r.cost * u.price->list_per_gpu_hour / u.price->per_gpu_hour
                              : 0;
      rows.push_back(FocusRecordOf(c, w, labels, u, r, {r.cost, r.cost, list}));
    }
  }
  return FocusCsv(rows);
}

}  // namespace gpumeter::report
