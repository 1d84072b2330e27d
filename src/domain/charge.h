// One line of a cloud bill in FOCUS (FinOps Open Cost and Usage Specification 1.0–1.3): the
// columns gpumeter uses to find what a node cost and to keep the rest apart. Read by
// sources/bill from the export, reconciled by core/cost/bill_*. Plain value; amounts are in
// `currency` (the bill's BillingCurrency), times are Unix seconds (UTC).
// Column semantics: ../shared/reference/billing-and-scaling.md §1 and docs/pricing.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpumeter::domain {

struct Charge {
  int64_t period_start = 0, period_end = 0;  // ChargePeriodStart (inclusive) .. End (exclusive)
  std::string category;                      // Usage, Purchase, Tax, Credit or Adjustment
  std::string charge_class;                  // "" or Correction
  double effective_cost = 0;                 // amortized: what allocation splits
  double billed_cost = 0;                    // the invoice's basis
  std::optional<double> list_cost;           // null in some exports
  std::string currency;                      // BillingCurrency
  std::string resource_id, resource_type, resource_name;
  std::string service_name, service_category;
  std::string commitment_id, commitment_status;  // CommitmentDiscountId / Status (Used, Unused)
  std::string pricing_category;                  // Standard, Dynamic (spot), Committed, Other
  // Where the line was read, for messages.
  std::string file;
  int64_t line = 0;
};

}  // namespace gpumeter::domain
