#include "app/usage/cost_flags.h"

#include "core/cost/chargeback.h"

namespace gpumeter::app {
namespace {

Error Bad(const std::string& flag, const Error& e) {
  return {ErrorCode::kInvalidInput, flag + ": " + e.message};
}

}  // namespace

Expected<void> SetPolicyFlag(const std::string& text, cost::Policy& policy) {
  double alpha = policy.alpha;
  auto basis = cost::ParseBasis(text, &alpha);
  if (!basis) return tl::unexpected(Bad("--policy", basis.error()));
  policy.basis = *basis, policy.alpha = alpha;
  return {};
}

Expected<void> SetIdleFlag(const std::string& text, cost::Policy& policy) {
  auto idle = cost::ParseIdleRule(text);
  if (!idle) return tl::unexpected(Bad("--idle", idle.error()));
  policy.idle = *idle;
  return {};
}

Expected<std::vector<std::string>> ParseByFlag(const std::string& text) {
  return cost::ParseGroupBy(text);  // its errors name --by already
}

}  // namespace gpumeter::app
