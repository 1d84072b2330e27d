#include "core/cost/allocate.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "common/enum_names.h"

namespace gpumeter::cost {

namespace {

constexpr EnumName<IdleRule> kIdleRuleNames[] = {
    {IdleRule::kShare, "share"}, {IdleRule::kOwner, "owner"}, {IdleRule::kSeparate, "separate"}};
static_assert(DistinctEnumNames(kIdleRuleNames));

}  // namespace

std::string Policy::Name() const {
  const char* idle_name = EnumToString(kIdleRuleNames, idle, "separate");
  std::string b;
  switch (basis) {
    case Basis::kMemory:
      b = "memory";
      break;
    case Basis::kCompute:
      b = "compute";
      break;
    case Basis::kRequest:
      b = "request";
      break;
    case Basis::kBlend:
      b = fmt::format("blend:{}", alpha);
      break;
  }
  return b + "/idle=" + idle_name;
}

Expected<Basis> ParseBasis(std::string_view text, double* alpha) {
  if (text == "memory") return Basis::kMemory;
  if (text == "compute") return Basis::kCompute;
  if (text == "request") return Basis::kRequest;
  if (text.substr(0, 6) == "blend:") {
    const std::string num(text.substr(6));
    char* end = nullptr;
    const double a = std::strtod(num.c_str(), &end);
    if (!num.empty() && end && *end == '\0' && a >= 0 && a <= 1) {
      if (alpha) *alpha = a;
      return Basis::kBlend;
    }
    return MakeError(
        ErrorCode::kInvalidInput,
        "policy '" + std::string(text) + "': blend:α needs α in [0, 1] (the weight of compute)");
  }
  return MakeError(ErrorCode::kInvalidInput, "policy '" + std::string(text) +
                                                 "': expected memory, compute, request or blend:α");
}

Expected<IdleRule> ParseIdleRule(std::string_view text) {
  if (const auto rule = EnumFromString(kIdleRuleNames, text)) return *rule;
  return MakeError(ErrorCode::kInvalidInput,
                   "idle rule '" + std::string(text) + "': expected share, owner or separate");
}

std::vector<CostRow> Allocate(const UnitUsage& u, const Policy& policy) {
  // A negative cost (a bill's refund or correction) is split as its size is, with its sign.
  if (u.cost < 0) {
    UnitUsage positive = u;
    positive.cost = -u.cost;
    auto rows = Allocate(positive, policy);
    for (auto& r : rows) r.cost = -r.cost, r.idle_cost = -r.idle_cost;
    return rows;
  }
  std::map<domain::Owner, CostRow> rows;
  auto row = [&](const domain::Owner& o) -> CostRow& {
    auto [it, fresh] = rows.try_emplace(o);
    if (fresh) it->second.owner = o;
    return it->second;
  };
  if (u.cost <= 0 || u.seconds <= 0) return {};
  // The fraction of the unit each container used under the basis, each in [0, 1], Σ ≤ 1.
  std::map<domain::Owner, double> used, held;
  double used_sum = 0, held_sum = 0;
  for (const auto& o : u.owners) {
    if (o.owner.kind != domain::OwnerKind::kContainer) continue;
    const double mem = u.memory_capacity_byte_seconds > 0
                           ? o.memory_byte_seconds / u.memory_capacity_byte_seconds
                           : 0;
    const double cmp = o.compute_seconds / u.seconds;
    const double req = o.requested_share_seconds / u.seconds;
    double f = 0;
    switch (policy.basis) {
      case Basis::kMemory:
        f = mem;
        break;
      case Basis::kCompute:
        f = cmp;
        break;
      case Basis::kBlend:
        f = policy.alpha * cmp + (1 - policy.alpha) * mem;
        break;
      case Basis::kRequest:
        f = req;
        break;
    }
    f = std::max(0.0, f);
    if (f > 0) used[o.owner] += f, used_sum += f;
    if (req > 0) held[o.owner] += req, held_sum += req;
  }
  // Several containers requesting more than the unit (a misconfiguration) or rounding: scale to 1.
  const double scale = used_sum > 1 ? 1 / used_sum : 1.0;
  double placed = 0;
  for (const auto& [o, f] : used) {
    const double c = u.cost * f * scale;
    row(o).cost += c;
    placed += c;
  }
  const double idle = std::max(0.0, u.cost - placed);
  // Where idle goes: weights over containers, or nowhere (an idle row).
  const std::map<domain::Owner, double>* weights = nullptr;
  // share: over the users; when nobody used the unit, over its holders, who blocked it for
  // everyone else (chargeback charges holding, not only use); owner: over the holders.
  if (policy.idle == IdleRule::kShare)
    weights = used_sum > 0 ? &used : held_sum > 0 ? &held : nullptr;
  if (policy.idle == IdleRule::kOwner && held_sum > 0) weights = &held;
  if (weights && idle > 0) {
    double sum = 0;
    for (const auto& [o, w] : *weights) sum += w;
    for (const auto& [o, w] : *weights) {
      auto& r = row(o);
      r.cost += idle * w / sum;
      r.idle_cost += idle * w / sum;
    }
  } else if (idle > 0) {
    auto& r = row(domain::Owner{domain::OwnerKind::kIdle, {}, {}, {}});
    r.cost += idle;
    r.idle_cost += idle;
  }
  for (const auto& [o, h] : held) row(o);  // a holder with no cost still gets its row
  std::vector<CostRow> out;
  out.reserve(rows.size());
  for (auto& [o, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace gpumeter::cost
