#include "sinks/report/focus.h"

#include <fmt/format.h>

#include <iterator>
#include <utility>

#include "common/rfc3339.h"
#include "common/text_cell.h"

namespace gpumeter::report {
namespace {

using Cell = std::string (*)(const FocusRecord&);
struct Column {
  const char* name;
  Cell cell;
};

std::string Amount(double v) { return fmt::format("{}", v); }

// The columns in the order they are written: each name once, with how its cell is written.
const Column kColumns[] = {
    {"BilledCost", [](const FocusRecord& r) { return Amount(r.billed_cost); }},
    {"EffectiveCost", [](const FocusRecord& r) { return Amount(r.effective_cost); }},
    {"ListCost", [](const FocusRecord& r) { return Amount(r.list_cost); }},
    {"ContractedCost", [](const FocusRecord& r) { return Amount(r.contracted_cost); }},
    {"BillingCurrency", [](const FocusRecord& r) { return r.billing_currency; }},
    {"BillingPeriodStart", [](const FocusRecord& r) { return Rfc3339(r.billing_period_start); }},
    {"BillingPeriodEnd", [](const FocusRecord& r) { return Rfc3339(r.billing_period_end); }},
    {"ChargeCategory", [](const FocusRecord& r) { return r.charge_category; }},
    {"ChargeClass", [](const FocusRecord& r) { return r.charge_class; }},
    {"ChargeFrequency", [](const FocusRecord& r) { return r.charge_frequency; }},
    {"ChargeDescription", [](const FocusRecord& r) { return r.charge_description; }},
    {"ChargePeriodStart", [](const FocusRecord& r) { return Rfc3339(r.charge_period_start); }},
    {"ChargePeriodEnd", [](const FocusRecord& r) { return Rfc3339(r.charge_period_end); }},
    {"ConsumedQuantity",
     [](const FocusRecord& r) {
       return r.consumed_quantity ? Amount(*r.consumed_quantity) : std::string();
     }},
    {"ConsumedUnit", [](const FocusRecord& r) { return r.consumed_unit; }},
    {"ProviderName", [](const FocusRecord& r) { return r.provider_name; }},
    {"PublisherName", [](const FocusRecord& r) { return r.publisher_name; }},
    {"InvoiceIssuerName", [](const FocusRecord& r) { return r.invoice_issuer_name; }},
    {"ResourceId", [](const FocusRecord& r) { return r.resource_id; }},
    {"ResourceName", [](const FocusRecord& r) { return r.resource_name; }},
    {"ResourceType", [](const FocusRecord& r) { return r.resource_type; }},
    {"ServiceCategory", [](const FocusRecord& r) { return r.service_category; }},
    {"ServiceName", [](const FocusRecord& r) { return r.service_name; }},
    {"AllocatedMethodId", [](const FocusRecord& r) { return r.allocated_method_id; }},
    {"AllocatedMethodDetails",
     [](const FocusRecord& r) { return r.allocated_method_details.dump(); }},
    {"AllocatedResourceId", [](const FocusRecord& r) { return r.allocated_resource_id; }},
    {"AllocatedResourceName", [](const FocusRecord& r) { return r.allocated_resource_name; }},
    {"AllocatedTags", [](const FocusRecord& r) { return r.allocated_tags.dump(); }},
    {"x_GpuUuid", [](const FocusRecord& r) { return r.x_gpu_uuid; }},
    {"x_GpuModel", [](const FocusRecord& r) { return r.x_gpu_model; }},
    {"x_SharingMode", [](const FocusRecord& r) { return r.x_sharing_mode; }},
    {"x_MigProfile", [](const FocusRecord& r) { return r.x_mig_profile; }},
};

}  // namespace

FocusRecord FocusRecordFor(double billed, double effective, double list, std::string currency,
                           int64_t from_unix_s, int64_t to_unix_s) {
  FocusRecord f;
  f.billed_cost = billed, f.effective_cost = effective;
  f.list_cost = f.contracted_cost = list;
  f.billing_currency = std::move(currency);
  f.billing_period_start = f.charge_period_start = from_unix_s;
  f.billing_period_end = f.charge_period_end = to_unix_s;
  return f;
}

std::string CsvField(const std::string& text) {
  const std::string s = SpreadsheetCell(text);
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string FocusCsv(std::span<const FocusRecord> records) {
  std::string out;
  const auto line = [&out](auto&& cell) {
    for (size_t i = 0; i < std::size(kColumns); ++i) out += (i ? "," : "") + cell(kColumns[i]);
    out += "\n";
  };
  line([](const Column& c) { return std::string(c.name); });
  for (const auto& r : records) line([&r](const Column& c) { return CsvField(c.cell(r)); });
  return out;
}

}  // namespace gpumeter::report
