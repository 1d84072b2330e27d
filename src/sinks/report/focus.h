// One FOCUS 1.3 cost-and-usage row as gpumeter writes it (the columns it fills, with the
// split-allocation ones and its x_ columns), and the one writer of such rows: CSV, a header line
// naming the columns in their order, then a line per row. Both FOCUS reports (RenderFocus, from
// prices; RenderBillFocus, from a bill) fill records and hand them here. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace gpumeter::report {

struct FocusRecord {
  // Amounts in billing_currency, written as the shortest text that reads back the same.
  double billed_cost = 0, effective_cost = 0, list_cost = 0, contracted_cost = 0;
  std::string billing_currency;
  int64_t billing_period_start = 0, billing_period_end = 0;  // Unix seconds, written RFC 3339
  std::string charge_category = "Usage", charge_class, charge_frequency = "Usage-Based";
  std::string charge_description;
  int64_t charge_period_start = 0, charge_period_end = 0;  // Unix seconds, written RFC 3339
  std::optional<double> consumed_quantity;  // nullopt: an empty cell (the row is no usage)
  std::string consumed_unit;
  std::string provider_name = "Kubernetes", publisher_name = "gpumeter",
              invoice_issuer_name = "gpumeter";
  std::string resource_id, resource_name, resource_type, service_category, service_name;
  std::string allocated_method_id;
  nlohmann::json allocated_method_details = nlohmann::json::object();
  std::string allocated_resource_id, allocated_resource_name;
  nlohmann::json allocated_tags = nlohmann::json::object();
  std::string x_gpu_uuid, x_gpu_model, x_sharing_mode, x_mig_profile;
};

// A record with the columns every row of a report shares: its amounts (ListCost and
// ContractedCost both `list`), currency, and the window as billing and charge period.
FocusRecord FocusRecordFor(double billed, double effective, double list, std::string currency,
                           int64_t from_unix_s, int64_t to_unix_s);

// A CSV cell: text from outside cannot start a formula (common/text_cell.h), and a cell holding a
// comma, a quote or a line break is quoted. Shared by the reports' CSVs.
std::string CsvField(const std::string& text);

// The header line, then one line per record, every column in FOCUS's order.
std::string FocusCsv(std::span<const FocusRecord> records);

}  // namespace gpumeter::report
