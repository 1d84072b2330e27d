#include "sources/bill/focus_reader.h"

#include <array>
#include <charconv>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "common/excerpt.h"
#include "common/text_cell.h"
#include "sources/bill/csv_records.h"

namespace gpumeter::bill {
namespace {

// The columns read, in the order of Col.
enum Col {
  kPeriodStart,
  kPeriodEnd,
  kCategory,
  kEffective,
  kBilled,
  kCurrency,
  kResourceId,
  kClass,
  kList,
  kResourceType,
  kResourceName,
  kServiceName,
  kServiceCategory,
  kCommitmentId,
  kCommitmentStatus,
  kPricingCategory,
  kColCount
};
constexpr std::array<std::string_view, kColCount> kColNames = {
    "ChargePeriodStart", "ChargePeriodEnd",      "ChargeCategory",
    "EffectiveCost",     "BilledCost",           "BillingCurrency",
    "ResourceId",        "ChargeClass",          "ListCost",
    "ResourceType",      "ResourceName",         "ServiceName",
    "ServiceCategory",   "CommitmentDiscountId", "CommitmentDiscountStatus",
    "PricingCategory"};
constexpr int kRequired = kResourceId + 1;  // the first seven must be in the header

// Every column of the cost-and-usage dataset from FOCUS 1.0 to 1.3 (and the drafts since), so
// that a file of any ratified version is taken whole.
const std::set<std::string_view>& FocusColumns() {
  static const std::set<std::string_view> names = {"AllocatedMethodDetails",
                                                   "AllocatedMethodId",
                                                   "AllocatedResourceDetails",
                                                   "AllocatedResourceId",
                                                   "AllocatedResourceName",
                                                   "AllocatedServiceCategory",
                                                   "AllocatedServiceName",
                                                   "AllocatedTags",
                                                   "AvailabilityZone",
                                                   "BilledCost",
                                                   "BillingAccountId",
                                                   "BillingAccountName",
                                                   "BillingAccountType",
                                                   "BillingCurrency",
                                                   "BillingPeriodEnd",
                                                   "BillingPeriodStart",
                                                   "CapacityReservationId",
                                                   "CapacityReservationStatus",
                                                   "ChargeCategory",
                                                   "ChargeClass",
                                                   "ChargeDescription",
                                                   "ChargeFrequency",
                                                   "ChargePeriodEnd",
                                                   "ChargePeriodStart",
                                                   "CommitmentDiscountCategory",
                                                   "CommitmentDiscountId",
                                                   "CommitmentDiscountName",
                                                   "CommitmentDiscountQuantity",
                                                   "CommitmentDiscountStatus",
                                                   "CommitmentDiscountType",
                                                   "CommitmentDiscountUnit",
                                                   "ConsumedQuantity",
                                                   "ConsumedUnit",
                                                   "ContractApplied",
                                                   "ContractedCost",
                                                   "ContractedUnitPrice",
                                                   "EffectiveCost",
                                                   "HostProviderName",
                                                   "InvoiceId",
                                                   "InvoiceIssuerName",
                                                   "ListCost",
                                                   "ListUnitPrice",
                                                   "PricingCategory",
                                                   "PricingCurrency",
                                                   "PricingCurrencyContractedUnitPrice",
                                                   "PricingCurrencyEffectiveCost",
                                                   "PricingCurrencyListUnitPrice",
                                                   "PricingQuantity",
                                                   "PricingUnit",
                                                   "ProviderName",
                                                   "PublisherName",
                                                   "RegionId",
                                                   "RegionName",
                                                   "ResourceId",
                                                   "ResourceName",
                                                   "ResourceType",
                                                   "ServiceCategory",
                                                   "ServiceName",
                                                   "ServiceProviderName",
                                                   "ServiceSubcategory",
                                                   "SkuId",
                                                   "SkuMeter",
                                                   "SkuPriceDetails",
                                                   "SkuPriceId",
                                                   "SubAccountId",
                                                   "SubAccountName",
                                                   "SubAccountType",
                                                   "Tags"};
  return names;
}

// A value from the file as a message quotes it: at most kShown characters, every byte that is not
// printable ASCII escaped (an escape sequence, a NUL, invalid UTF-8 never reach a terminal).
constexpr size_t kShown = 64;
std::string Shown(std::string_view value) { return Excerpt(value, kShown); }

Error Bad(const std::string& where, std::string_view column, const std::string& what) {
  return Error{ErrorCode::kInvalidInput, where + ": column " + Shown(column) + ": " + what};
}

bool Digits(std::string_view s, size_t at, size_t n, int& out) {
  if (at + n > s.size()) return false;
  const auto [end, ec] = std::from_chars(s.data() + at, s.data() + at + n, out);
  return ec == std::errc() && end == s.data() + at + n && s[at] != '-' && s[at] != '+';
}

// YYYY-MM-DD, then optionally [T ]HH:MM:SS[.fff] and Z, +00:00 or " UTC": FOCUS times are UTC
// ("2024-06-01T00:00:00Z"); BigQuery's CSV writes "2024-06-01 00:00:00 UTC". A time in another
// zone, or a date that does not exist, is refused.
std::optional<int64_t> ParseUtc(std::string_view s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!Digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !Digits(s, 5, 2, mo) || s[7] != '-' ||
      !Digits(s, 8, 2, d))
    return std::nullopt;
  std::string_view rest = s.substr(10);
  if (!rest.empty()) {
    if ((rest[0] != 'T' && rest[0] != ' ') || !Digits(rest, 1, 2, h) || rest.size() < 9 ||
        rest[3] != ':' || !Digits(rest, 4, 2, mi) || rest[6] != ':' || !Digits(rest, 7, 2, sec))
      return std::nullopt;
    rest.remove_prefix(9);
    if (rest.starts_with(".")) {
      size_t n = 1;
      while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
      if (n == 1) return std::nullopt;
      for (size_t i = 1; i < n; ++i)
        if (rest[i] != '0') return std::nullopt;  // bills are stamped to the second
      rest.remove_prefix(n);
    }
    if (rest != "Z" && rest != "+00:00" && rest != " UTC" && !rest.empty()) return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 || y < 1970)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  const int64_t t = static_cast<int64_t>(timegm(&tm));
  std::tm back{};
  const std::time_t tt = static_cast<std::time_t>(t);
  if (gmtime_r(&tt, &back) == nullptr || back.tm_mday != d) return std::nullopt;  // 2024-02-30
  return t;
}

std::optional<double> ParseAmount(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || std::abs(v) > 1e12)
    return std::nullopt;
  return v;
}

struct Header {
  std::array<int, kColCount> at{};  // field index of each column, -1 when absent
  size_t fields = 0;
  std::vector<std::string> names;  // every column, in order, as messages show it (Shown)
};

// `shown_path`: the path as messages show it.
Expected<Header> ReadHeader(const std::string& shown_path, int64_t line,
                            const std::vector<std::string>& names) {
  Header h;
  h.at.fill(-1);
  h.fields = names.size();
  std::map<std::string_view, size_t> seen;
  const std::string where = shown_path + ":" + std::to_string(line);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string_view name = names[i];
    if (!seen.emplace(name, i).second)
      return tl::unexpected(Bad(where, name,
                                "appears twice in the header (fields " +
                                    std::to_string(seen[name] + 1) + " and " +
                                    std::to_string(i + 1) + ")"));
    if (!FocusColumns().count(name) && !name.starts_with("x_"))
      return tl::unexpected(Bad(where, name.empty() ? "(empty)" : name,
                                "not a FOCUS 1.0–1.3 column nor a custom x_ one: is this a "
                                "FOCUS export? (a legacy CUR or billing export is not)"));
    for (int c = 0; c < kColCount; ++c)
      if (name == kColNames[static_cast<size_t>(c)])
        h.at[static_cast<size_t>(c)] = static_cast<int>(i);
  }
  // Kept for messages only, each name cut short: the header is never held twice whole.
  h.names.reserve(names.size());
  for (const auto& name : names) h.names.push_back(Shown(name));
  for (int c = 0; c < kRequired; ++c)
    if (h.at[static_cast<size_t>(c)] < 0)
      return tl::unexpected(Bad(where, kColNames[static_cast<size_t>(c)],
                                "missing from the header (gpumeter needs it)"));
  return h;
}

// One data line into a Charge; `currency` is the file's (or the earlier files') currency.
Expected<domain::Charge> ReadLine(const std::string& path, const std::string& shown_path,
                                  int64_t line, const Header& h, const std::vector<std::string>& f,
                                  std::string& currency) {
  const std::string where = shown_path + ":" + std::to_string(line);
  if (f.size() != h.fields)
    return MakeError(
        ErrorCode::kInvalidInput,
        where + ": " + std::to_string(f.size()) + " fields where the header has " +
            std::to_string(h.fields) +
            (f.size() < h.fields && !f.empty()
                 ? ": the line ends in column " + h.names[f.size() - 1] + " (a line cut short?)"
                 : " (a stray comma, or an unquoted one inside a value?)"));
  auto get = [&](Col c) -> const std::string& {
    static const std::string kNone;
    const int i = h.at[static_cast<size_t>(c)];
    return i < 0 ? kNone : f[static_cast<size_t>(i)];
  };
  auto name = [](Col c) { return kColNames[static_cast<size_t>(c)]; };
  domain::Charge ch;
  ch.file = path;
  ch.line = line;
  for (Col c : {kPeriodStart, kPeriodEnd}) {
    const auto t = ParseUtc(get(c));
    if (!t)
      return tl::unexpected(Bad(where, name(c),
                                "'" + Shown(get(c)) +
                                    "' is not a UTC time "
                                    "(2024-06-01T00:00:00Z)"));
    (c == kPeriodStart ? ch.period_start : ch.period_end) = *t;
  }
  if (ch.period_end <= ch.period_start)
    return tl::unexpected(Bad(where, name(kPeriodEnd),
                              "'" + Shown(get(kPeriodEnd)) + "' is not after ChargePeriodStart '" +
                                  Shown(get(kPeriodStart)) + "'"));
  ch.category = get(kCategory);
  static const std::set<std::string> kCategories = {"Usage", "Purchase", "Tax", "Credit",
                                                    "Adjustment"};
  if (!kCategories.count(ch.category))
    return tl::unexpected(
        Bad(where, name(kCategory),
            "'" + Shown(ch.category) + "' is not Usage, Purchase, Tax, Credit or Adjustment"));
  for (Col c : {kEffective, kBilled, kList}) {
    const std::string& text = get(c);
    if (c == kList && text.empty()) continue;  // null where the provider has no list price
    const auto v = ParseAmount(text);
    if (!v)
      return tl::unexpected(Bad(where, name(c),
                                text.empty() ? "empty (FOCUS requires a value)"
                                             : "'" + Shown(text) +
                                                   "' is not an amount "
                                                   "within ±1e12"));
    if (c == kEffective) ch.effective_cost = *v;
    if (c == kBilled) ch.billed_cost = *v;
    if (c == kList) ch.list_cost = *v;
  }
  ch.currency = get(kCurrency);
  if (ch.currency.size() != 3 ||
      ch.currency.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos)
    return tl::unexpected(
        Bad(where, name(kCurrency), "'" + Shown(ch.currency) + "' is not an ISO 4217 code (USD)"));
  if (currency.empty()) currency = ch.currency;
  if (ch.currency != currency)
    return tl::unexpected(Bad(where, name(kCurrency),
                              ch.currency + " where the lines before are in " + currency +
                                  ": amounts in two currencies cannot be summed"));
  ch.charge_class = get(kClass);
  ch.resource_id = get(kResourceId);
  ch.resource_type = get(kResourceType);
  ch.resource_name = get(kResourceName);
  ch.service_name = get(kServiceName);
  ch.service_category = get(kServiceCategory);
  ch.commitment_id = get(kCommitmentId);
  ch.commitment_status = get(kCommitmentStatus);
  ch.pricing_category = get(kPricingCategory);
  return ch;
}

}  // namespace

Expected<FocusFileSummary> ReadFocusFile(const std::string& path, const std::string& currency,
                                         const ChargeFn& on_charge) {
  FocusFileSummary summary;
  summary.currency = currency;
  const std::string shown = TerminalCell(path);
  std::optional<Header> header;
  auto read =
      ReadCsvRecords(path, [&](int64_t line, const std::vector<std::string>& f) -> Expected<void> {
        if (!header) {
          auto h = ReadHeader(shown, line, f);
          if (!h) return tl::unexpected(h.error());
          header = std::move(*h);
          return {};
        }
        auto charge = ReadLine(path, shown, line, *header, f, summary.currency);
        if (!charge) return tl::unexpected(charge.error());
        ++summary.lines;
        return on_charge(*charge);
      });
  if (!read) return tl::unexpected(read.error());
  if (!header) return MakeError(ErrorCode::kInvalidInput, shown + ": empty (no FOCUS header line)");
  return summary;
}

}  // namespace gpumeter::bill
