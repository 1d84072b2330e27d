// Reads a FOCUS cost-and-usage export (CSV, or gzip-compressed CSV, as AWS Data Exports, Azure
// Cost Management and a query of Google Cloud's FOCUS view write it) line by line into
// domain::Charge, streaming: a month's export of gigabytes passes in one record's memory.
//
// Strict, because a bill that is misread is a chargeback that is wrong: the header must hold the
// columns gpumeter uses (ChargePeriodStart, ChargePeriodEnd, ChargeCategory, EffectiveCost,
// BilledCost, BillingCurrency, ResourceId) once each, and every other column must be a FOCUS
// 1.0–1.3 column or a custom `x_` one (a legacy CUR file, or a column name mistyped, is refused);
// each line must have the header's field count; times are ISO 8601 UTC with the end after the
// start; costs are decimal numbers within ±1e12; ChargeCategory is one FOCUS names; one currency
// throughout. Every error names the file, the line and the column, and quotes a value from the
// file only as an excerpt (64 characters) with every byte that is not printable ASCII escaped: a
// hostile export cannot write to the terminal through a message. The header is held under the
// record cap of csv_records.h like any record. Stateless; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/error.h"
#include "domain/charge.h"

namespace gpumeter::bill {

// Called once per line; an error it returns stops the read and is returned as it is.
using ChargeFn = std::function<Expected<void>(const domain::Charge&)>;

struct FocusFileSummary {
  int64_t lines = 0;     // data lines read
  std::string currency;  // "" when the file has no line
};

// Reads `path` through `on_charge`. `currency`: the currency earlier files were in ("" for the
// first); a line in another is an error (mixed currencies cannot be summed).
Expected<FocusFileSummary> ReadFocusFile(const std::string& path, const std::string& currency,
                                         const ChargeFn& on_charge);

}  // namespace gpumeter::bill
